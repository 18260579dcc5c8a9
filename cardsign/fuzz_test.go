package cardsign

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
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
		if err := v.VerifyCard(context.Background(), c); err == nil && protected != good.Protected {
			t.Fatalf("header %q verified", protected)
		}
	})
}

// fuzzSigned is the card document FuzzVerify starts from: signed, with a
// member the card model does not have.
func fuzzSigned(f *testing.F, s *Signer) []byte {
	doc, err := a2a.Marshal(testCard())
	if err != nil {
		f.Fatal(err)
	}
	doc = bytes.Replace(doc, []byte("{"), []byte(`{"url":"https://agent.example/","protocolVersion":"0.3.0",`), 1)
	signed, err := s.SignJSON(doc)
	if err != nil {
		f.Fatal(err)
	}
	return signed
}

// FuzzVerify feeds arbitrary card documents, as a client receives them, to
// the verifier: it must never panic, and a document it accepts must have
// the canonical form, without signatures, of the one signed (so nothing
// was added, removed or changed but white space, member order and the
// spelling of strings and numbers).
func FuzzVerify(f *testing.F) {
	// A fixed Ed25519 key signs deterministically, so the kept corpus
	// (testdata/fuzz/FuzzVerify) holds documents that verify.
	s, err := NewSigner(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, ed25519.SeedSize)), jose.EdDSA, &SignerOptions{KeyID: "k"})
	if err != nil {
		f.Fatal(err)
	}
	signed := fuzzSigned(f, s)
	want, err := Canonical(signed)
	if err != nil {
		f.Fatal(err)
	}
	var indented bytes.Buffer
	json.Indent(&indented, signed, "", "  ")
	f.Add(signed)
	f.Add(indented.Bytes())
	f.Add(bytes.Replace(signed, []byte(`"name"`), []byte(`"extra":1,"name"`), 1))
	f.Add(bytes.Replace(signed, []byte(`"name"`), []byte(`"name":"dup","name"`), 1))
	f.Add([]byte(`{"signatures":[{"protected":"","signature":""},null,7,{"header":[]}]}`))
	f.Add([]byte(`null`))
	jwk, _ := s.PublicJWK()
	v := &Verifier{Keys: []jose.JSONWebKey{jwk}}
	f.Fuzz(func(t *testing.T, doc []byte) {
		if _, err := v.Verify(context.Background(), doc); err != nil {
			return
		}
		got, err := Canonical(doc)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("a document verified whose payload differs:\n%s\n%s (%v)", got, want, err)
		}
	})
}
