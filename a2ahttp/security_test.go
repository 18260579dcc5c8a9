package a2ahttp_test

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"net/http"
	"reflect"
	"testing"

	"github.com/go-jose/go-jose/v4"

	"parley.dev/parley/a2a"
	"parley.dev/parley/a2ahttp"
	"parley.dev/parley/cardsign"
	"parley.dev/parley/client"
	"parley.dev/parley/internal/testkit"
	"parley.dev/parley/server"
)

// servedCard fetches the card document of the server at base, raw and
// decoded.
func servedCard(t *testing.T, base string) ([]byte, *a2a.AgentCard) {
	t.Helper()
	resp, err := http.Get(base + a2ahttp.CardPath)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", a2ahttp.CardPath, resp.StatusCode, body)
	}
	card := &a2a.AgentCard{}
	if err := a2a.Unmarshal(body, card); err != nil {
		t.Fatalf("the served card does not decode: %v\n%s", err, body)
	}
	return body, card
}

// v03Security is the v0.3 top-level "security" member of a card document.
func v03Security(t *testing.T, doc []byte) []map[string][]string {
	t.Helper()
	var m struct {
		Security []map[string][]string `json:"security"`
	}
	if err := json.Unmarshal(doc, &m); err != nil {
		t.Fatal(err)
	}
	return m.Security
}

// wantBearerDeclared checks that card declares the bearer scheme and that
// the first requirement names it.
func wantBearerDeclared(t *testing.T, card *a2a.AgentCard) {
	t.Helper()
	s := card.GetSecuritySchemes()[a2ahttp.BearerSchemeName].GetHttpAuthSecurityScheme()
	if len(card.GetSecuritySchemes()) != 1 || s.GetScheme() != "Bearer" {
		t.Fatalf("securitySchemes = %v, want only %q: HTTP auth, scheme Bearer", card.GetSecuritySchemes(), a2ahttp.BearerSchemeName)
	}
	reqs := card.GetSecurityRequirements()
	if len(reqs) == 0 || len(reqs[0].GetSchemes()) != 1 || reqs[0].GetSchemes()[a2ahttp.BearerSchemeName] == nil {
		t.Fatalf("securityRequirements = %v, want the first to name %q alone", reqs, a2ahttp.BearerSchemeName)
	}
}

// TestCardDeclaresBearerTokens: a handler that accepts bearer tokens
// (Options.Tokens, or a TokenSet among the authenticators) serves a card
// that declares them, as an HTTP Bearer scheme and a requirement naming
// it (and an empty requirement when anonymous callers are allowed), in
// the v1.0 members and in the v0.3 "security" member; the card given to
// New is not changed. A card that declares its own schemes, and a
// handler without bearer tokens, serve the card as given.
func TestCardDeclaresBearerTokens(t *testing.T) {
	tokens := map[string]string{"secret": "alice"}
	t.Run("Tokens", func(t *testing.T) {
		var given *a2a.AgentCard
		s := testkit.StartServer(t, &testkit.Options{Quiet: true, Tokens: tokens, HTTP: func(o *a2ahttp.Options) { given = o.Card }})
		doc, card := servedCard(t, s.URL)
		wantBearerDeclared(t, card)
		if n := len(card.GetSecurityRequirements()); n != 1 {
			t.Errorf("%d requirements, want 1 (anonymous callers are not allowed)", n)
		}
		if got, want := v03Security(t, doc), []map[string][]string{{a2ahttp.BearerSchemeName: {}}}; !reflect.DeepEqual(got, want) {
			t.Errorf("v0.3 security = %v, want %v", got, want)
		}
		wantBearerDeclared(t, s.Handler.Card())
		if len(given.GetSecuritySchemes()) > 0 || len(given.GetSecurityRequirements()) > 0 {
			t.Errorf("the card given to New was changed: %v %v", given.GetSecuritySchemes(), given.GetSecurityRequirements())
		}
	})
	t.Run("TokenSet, anonymous allowed", func(t *testing.T) {
		s := testkit.StartServer(t, &testkit.Options{Quiet: true, HTTP: func(o *a2ahttp.Options) {
			o.Authenticators = []a2ahttp.Authenticator{a2ahttp.NewTokenSet(tokens)}
			o.AllowAnonymous = true
		}})
		doc, card := servedCard(t, s.URL)
		wantBearerDeclared(t, card)
		reqs := card.GetSecurityRequirements()
		if len(reqs) != 2 || len(reqs[1].GetSchemes()) != 0 {
			t.Errorf("securityRequirements = %v, want the bearer one and an empty one", reqs)
		}
		if got, want := v03Security(t, doc), []map[string][]string{{a2ahttp.BearerSchemeName: {}}, {}}; !reflect.DeepEqual(got, want) {
			t.Errorf("v0.3 security = %v, want %v", got, want)
		}
	})
	t.Run("v0.3 off", func(t *testing.T) {
		s := testkit.StartServer(t, &testkit.Options{Quiet: true, Tokens: tokens, HTTP: func(o *a2ahttp.Options) { o.DisableV03 = true }})
		doc, card := servedCard(t, s.URL)
		wantBearerDeclared(t, card)
		if sec := v03Security(t, doc); sec != nil {
			t.Errorf("v0.3 security %v served with v0.3 off", sec)
		}
	})
	t.Run("declared by the card", func(t *testing.T) {
		apiKey := &a2a.SecurityScheme{Scheme: &a2a.SecurityScheme_ApiKeySecurityScheme{ApiKeySecurityScheme: &a2a.APIKeySecurityScheme{Location: "header", Name: "X-Key"}}}
		s := testkit.StartServer(t, &testkit.Options{Quiet: true, Tokens: tokens, Mutate: func(card *a2a.AgentCard, _ *server.Options) {
			card.SecuritySchemes = map[string]*a2a.SecurityScheme{"key": apiKey}
			card.SecurityRequirements = []*a2a.SecurityRequirement{{Schemes: map[string]*a2a.StringList{"key": {}}}}
		}})
		doc, card := servedCard(t, s.URL)
		if len(card.GetSecuritySchemes()) != 1 || card.GetSecuritySchemes()["key"].GetApiKeySecurityScheme().GetName() != "X-Key" {
			t.Errorf("securitySchemes = %v, want the card's own alone", card.GetSecuritySchemes())
		}
		if got, want := v03Security(t, doc), []map[string][]string{{"key": {}}}; !reflect.DeepEqual(got, want) {
			t.Errorf("v0.3 security = %v, want %v", got, want)
		}
	})
	t.Run("no bearer tokens", func(t *testing.T) {
		s := testkit.StartServer(t, &testkit.Options{Quiet: true, HTTP: func(o *a2ahttp.Options) {
			o.Authenticators = []a2ahttp.Authenticator{a2ahttp.AuthenticatorFunc(func(*http.Request) (string, error) { return "", nil })}
		}})
		doc, card := servedCard(t, s.URL)
		if len(card.GetSecuritySchemes()) > 0 || len(card.GetSecurityRequirements()) > 0 || v03Security(t, doc) != nil {
			t.Errorf("a card without bearer tokens declares %v %v", card.GetSecuritySchemes(), card.GetSecurityRequirements())
		}
	})
}

// TestSignedCardDeclaresBearerTokens: the bearer scheme is in the card
// before Options.CardSigner signs it, so the document served verifies
// (spec §8.4.3), and a client that resolves it learns from its
// requirements that it needs a token, which the server then asks for.
func TestSignedCardDeclaresBearerTokens(t *testing.T) {
	key, _ := cardsign.GenerateKey("ES256")
	signer, err := cardsign.NewSigner(key, jose.ES256, &cardsign.SignerOptions{KeyID: "card-1"})
	if err != nil {
		t.Fatal(err)
	}
	s := testkit.StartServer(t, &testkit.Options{Quiet: true, Tokens: map[string]string{"secret": "alice"},
		HTTP: func(o *a2ahttp.Options) { o.CardSigner = signer.SignJSON }})
	der, _ := x509.MarshalPKIXPublicKey(key.Public())
	keys, err := cardsign.ParsePublicKeys(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	card, err := client.Resolve(ctx, s.URL, &client.ResolveOptions{Verifier: &cardsign.Verifier{Keys: keys}})
	if err != nil {
		t.Fatalf("Resolve with the signing key: %v", err)
	}
	wantBearerDeclared(t, card)
	if len(card.GetSignatures()) == 0 {
		t.Fatal("the resolved card has no signatures")
	}
	c, err := client.New(card, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("hi")})
	if !errors.Is(err, a2a.ErrUnauthenticated) {
		t.Errorf("SendMessage without the token the card asks for: %v, want Unauthenticated", err)
	}
}
