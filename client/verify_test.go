package client_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-jose/go-jose/v4"

	"parley.dev/parley/a2a"
	"parley.dev/parley/cardsign"
	"parley.dev/parley/client"
	"parley.dev/parley/internal/testkit"
)

// TestResolveVerifiesSignatures: with a Verifier, Resolve returns a card
// whose signature verifies (fresh and from the cache) and refuses one
// changed after signing or signed by a key it does not trust.
func TestResolveVerifiesSignatures(t *testing.T) {
	key, _ := cardsign.GenerateKey("ES256")
	signer, err := cardsign.NewSigner(key, jose.ES256, &cardsign.SignerOptions{KeyID: "k1"})
	if err != nil {
		t.Fatal(err)
	}
	jwk, _ := signer.PublicJWK()
	v := &cardsign.Verifier{Keys: []jose.JSONWebKey{jwk}}

	s := testkit.StartServer(t, &testkit.Options{Quiet: true})
	card := s.Card
	if err := signer.Sign(card); err != nil {
		t.Fatal(err)
	}
	serve := func(c *a2a.AgentCard) string {
		b, _ := a2a.Marshal(c)
		hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Cache-Control", "max-age=60")
			w.Write(b)
		}))
		t.Cleanup(hs.Close)
		return hs.URL
	}
	ctx := context.Background()
	good := serve(card)
	cache := &client.CardCache{}
	for range 2 { // the second from the cache
		got, err := client.Resolve(ctx, good, &client.ResolveOptions{Verifier: v, Cache: cache})
		if err != nil || got.GetName() != card.GetName() {
			t.Fatalf("signed card: %v", err)
		}
	}
	// The same cache, a verifier that trusts another key: refused.
	other, _ := cardsign.GenerateKey("ES256")
	otherJWK, _ := cardsign.PublicJWK(other, jose.ES256, "k1")
	if _, err := client.Resolve(ctx, good, &client.ResolveOptions{Verifier: &cardsign.Verifier{Keys: []jose.JSONWebKey{otherJWK}}, Cache: cache}); err == nil {
		t.Fatal("a cached card verified with an untrusted key")
	}
	tampered := testkit.StartServer(t, &testkit.Options{Quiet: true}).Card
	tampered.Signatures = card.Signatures
	_, err = client.Resolve(ctx, serve(tampered), &client.ResolveOptions{Verifier: v})
	var ce *client.CardError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "signature does not verify") {
		t.Fatalf("tampered card: %v; want a CardError about the signature", err)
	}
	// Without a Verifier, signatures are not looked at.
	if _, err := client.Resolve(ctx, serve(tampered), nil); err != nil {
		t.Fatal(err)
	}
}
