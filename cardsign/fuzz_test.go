package cardsign

import (
	"context"
	"encoding/base64"
	"testing"

	"github.com/go-jose/go-jose/v4"

	"parley.dev/parley/a2a"
)

// FuzzVerifyHeader feeds arbitrary protected headers and signatures to the
// verifier: it must never panic nor accept a signature its key did not
// make.
func FuzzVerifyHeader(f *testing.F) {
	s := newSigner(f, "ES256", &SignerOptions{KeyID: "k"})
	card := testCard()
	if err := s.Sign(card); err != nil {
		f.Fatal(err)
	}
	f.Add(card.Signatures[0].Protected, card.Signatures[0].Signature)
	f.Add(base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","kid":"k"}`)), "")
	f.Add(base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","kid":"k","crit":["b64"],"b64":false}`)), "AAAA")
	f.Add("!!", "??")
	jwk, _ := s.PublicJWK()
	v := &Verifier{Keys: []jose.JSONWebKey{jwk}}
	good := card.Signatures[0]
	f.Fuzz(func(t *testing.T, protected, signature string) {
		c := testCard()
		c.Signatures = []*a2a.AgentCardSignature{{Protected: protected, Signature: signature}}
		// The signing input holds the protected header as sent, so no
		// other header can verify (the signature itself may differ: an
		// ECDSA signature (r, s) has a twin (r, n-s)).
		if _, err := v.Verify(context.Background(), c); err == nil && protected != good.Protected {
			t.Fatalf("header %q verified", protected)
		}
	})
}
