package cardsign

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-jose/go-jose/v4"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/jwks"
)

// testCard is a card like the ones `parley serve` publishes.
func testCard() *a2a.AgentCard {
	yes := true
	return &a2a.AgentCard{
		Name: "Signed agent", Description: "Signs its card.", Version: "1.0.0",
		SupportedInterfaces: []*a2a.AgentInterface{{Url: "https://agent.example/", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: "1.0"}},
		Capabilities:        &a2a.AgentCapabilities{Streaming: &yes},
		DefaultInputModes:   []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills: []*a2a.AgentSkill{{Id: "echo", Name: "Echo", Description: "Echoes.", Tags: []string{"echo"}}},
	}
}

// doc is card's JSON document, as a2a.Marshal writes it.
func doc(t testing.TB, card *a2a.AgentCard) []byte {
	t.Helper()
	b, err := a2a.Marshal(card)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// newSigner makes a signer with a fresh key of alg.
func newSigner(t testing.TB, alg string, opts *SignerOptions) *Signer {
	t.Helper()
	key, err := GenerateKey(alg)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSigner(key, jose.SignatureAlgorithm(alg), opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// trust returns a verifier that trusts the signers' public keys.
func trust(t *testing.T, signers ...*Signer) *Verifier {
	t.Helper()
	v := &Verifier{}
	for _, s := range signers {
		jwk, err := s.PublicJWK()
		if err != nil {
			t.Fatal(err)
		}
		v.Keys = append(v.Keys, jwk)
	}
	return v
}

func TestSignVerifyEachAlgorithm(t *testing.T) {
	for _, alg := range []string{"ES256", "EdDSA", "RS256"} {
		t.Run(alg, func(t *testing.T) {
			s := newSigner(t, alg, &SignerOptions{KeyID: "k-" + alg})
			card := testCard()
			if err := s.Sign(card); err != nil {
				t.Fatal(err)
			}
			if len(card.Signatures) != 1 {
				t.Fatalf("%d signatures; want 1 (canonical and SDK forms agree for this card)", len(card.Signatures))
			}
			raw, _ := base64.RawURLEncoding.DecodeString(card.Signatures[0].Protected)
			var h map[string]any
			json.Unmarshal(raw, &h)
			if h["alg"] != alg || h["kid"] != "k-"+alg || h["typ"] != "JOSE" {
				t.Errorf("protected header %s", raw)
			}
			kid, err := trust(t, s).Verify(context.Background(), doc(t, card))
			if err != nil || kid != "k-"+alg {
				t.Fatalf("Verify = %q, %v", kid, err)
			}
			// Through the JSON a client receives.
			b, _ := a2a.Marshal(card)
			back := &a2a.AgentCard{}
			if err := a2a.Unmarshal(b, back); err != nil {
				t.Fatal(err)
			}
			if err := trust(t, s).VerifyCard(context.Background(), back); err != nil {
				t.Fatalf("after a JSON round trip: %v", err)
			}
		})
	}
}

func TestTamperedCardDoesNotVerify(t *testing.T) {
	s := newSigner(t, "ES256", nil)
	for name, change := range map[string]func(*a2a.AgentCard){
		"description":  func(c *a2a.AgentCard) { c.Description = "Signs its card!" },
		"interface":    func(c *a2a.AgentCard) { c.SupportedInterfaces[0].Url = "https://evil.example/" },
		"security":     func(c *a2a.AgentCard) { c.SecurityRequirements = []*a2a.SecurityRequirement{{}} },
		"capabilities": func(c *a2a.AgentCard) { no := false; c.Capabilities.Streaming = &no },
	} {
		card := testCard()
		if err := s.Sign(card); err != nil {
			t.Fatal(err)
		}
		change(card)
		_, err := trust(t, s).Verify(context.Background(), doc(t, card))
		var e *Error
		if !errors.As(err, &e) || !strings.Contains(err.Error(), "does not match the card") || len(e.Reasons) != 1 {
			t.Errorf("%s changed: Verify = %v; want a mismatch", name, err)
		}
	}
}

func TestUnsignedAndUntrusted(t *testing.T) {
	if _, err := (&Verifier{}).Verify(context.Background(), doc(t, testCard())); !errors.Is(err, ErrUnsigned) {
		t.Errorf("unsigned card: %v", err)
	}
	s, other := newSigner(t, "ES256", nil), newSigner(t, "ES256", nil)
	card := testCard()
	s.Sign(card)
	if _, err := trust(t, other).Verify(context.Background(), doc(t, card)); err == nil || !strings.Contains(err.Error(), "not trusted") {
		t.Errorf("signed by an untrusted key: %v", err)
	}
}

// TestJKUIsNotTrusted: an attacker re-signs a changed card with their own
// key, names it with the trusted key's kid or their own, and points jku at
// a key set they serve. Only the verifier's own keys count.
func TestJKUIsNotTrusted(t *testing.T) {
	trusted := newSigner(t, "ES256", &SignerOptions{KeyID: "prod-1"})
	fetched := 0
	attackerKey, _ := GenerateKey("ES256")
	jwk, _ := PublicJWK(attackerKey, jose.ES256, "prod-1")
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetched++
		json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{jwk}})
	}))
	defer evil.Close()
	for _, kid := range []string{"prod-1", "evil-1"} {
		attacker, err := NewSigner(attackerKey, jose.ES256, &SignerOptions{KeyID: kid, JKU: evil.URL})
		if err != nil {
			t.Fatal(err)
		}
		card := testCard()
		card.SupportedInterfaces[0].Url = "https://evil.example/"
		attacker.Sign(card)
		_, err = trust(t, trusted).Verify(context.Background(), doc(t, card))
		if err == nil {
			t.Fatalf("kid %s: a card signed by the attacker's key verified", kid)
		}
		if kid == "evil-1" && !strings.Contains(err.Error(), "jku") {
			t.Errorf("kid %s: %v; want the jku named as not followed", kid, err)
		}
	}
	if fetched != 0 {
		t.Errorf("the verifier fetched the attacker's jku %d times", fetched)
	}
}

// TestTrustedJWKSRotation: a verifier that trusts a key set URL picks up a
// new key the set gains (a rotation) when a card names its kid.
func TestTrustedJWKSRotation(t *testing.T) {
	old, next := newSigner(t, "ES256", &SignerOptions{KeyID: "k1"}), newSigner(t, "EdDSA", &SignerOptions{KeyID: "k2"})
	published := []*Signer{old}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var set jose.JSONWebKeySet
		for _, s := range published {
			k, _ := s.PublicJWK()
			set.Keys = append(set.Keys, k)
		}
		json.NewEncoder(w).Encode(set)
	}))
	defer srv.Close()
	v := &Verifier{JWKS: &jwks.Cache{URL: srv.URL, MinRefresh: 1}}
	card := testCard()
	old.Sign(card)
	if err := v.VerifyCard(context.Background(), card); err != nil {
		t.Fatal(err)
	}
	published = append(published, next)
	card = testCard()
	next.Sign(card)
	if err := v.VerifyCard(context.Background(), card); err != nil {
		t.Fatalf("after rotation: %v", err)
	}
}

// TestSDKForm: a card with an empty value gets a second signature over the
// SDKs' form; a strict verifier uses the first, and a card carrying only
// the SDK-form signature verifies only when AcceptSDKForm says so.
func TestSDKForm(t *testing.T) {
	s := newSigner(t, "ES256", nil)
	card := testCard()
	card.SecurityRequirements = []*a2a.SecurityRequirement{{Schemes: map[string]*a2a.StringList{"bearer": {}}}}
	if err := s.Sign(card); err != nil {
		t.Fatal(err)
	}
	if len(card.Signatures) != 2 {
		t.Fatalf("%d signatures; want 2", len(card.Signatures))
	}
	v := trust(t, s)
	if err := v.VerifyCard(context.Background(), card); err != nil {
		t.Fatal(err)
	}
	card.Signatures = card.Signatures[1:]
	err := v.VerifyCard(context.Background(), card)
	if err == nil || !strings.Contains(err.Error(), "empty values removed") {
		t.Fatalf("SDK-form signature, strict verifier: %v", err)
	}
	v.AcceptSDKForm = true
	if err := v.VerifyCard(context.Background(), card); err != nil {
		t.Fatalf("AcceptSDKForm: %v", err)
	}
	// The SDK form does not protect the requirement: removing it goes
	// unnoticed by that signature, which is why strict is the default.
	card.SecurityRequirements = nil
	if err := v.VerifyCard(context.Background(), card); err != nil {
		t.Fatalf("AcceptSDKForm after removing an empty requirement: %v", err)
	}
}

// TestRefusedHeaders: "none", HMAC and a missing kid are refused before
// any key is tried.
func TestRefusedHeaders(t *testing.T) {
	s := newSigner(t, "ES256", &SignerOptions{KeyID: "k"})
	card := testCard()
	s.Sign(card)
	for _, h := range []string{`{"alg":"none","kid":"k","typ":"JOSE"}`, `{"alg":"HS256","kid":"k","typ":"JOSE"}`, `{"alg":"ES256","typ":"JOSE"}`, `not json`} {
		c := testCard()
		c.Signatures = []*a2a.AgentCardSignature{{Protected: base64.RawURLEncoding.EncodeToString([]byte(h)), Signature: card.Signatures[0].Signature}}
		if err := trust(t, s).VerifyCard(context.Background(), c); err == nil {
			t.Errorf("header %s verified", h)
		}
	}
}
