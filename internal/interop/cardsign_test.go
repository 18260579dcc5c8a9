package interop_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"parley.dev/parley/a2a"
	"parley.dev/parley/cardsign"
	"parley.dev/parley/internal/testenv"
	"parley.dev/parley/internal/testkit"
)

// signedCardFixture is a card like `parley serve`'s.
func signedCardFixture() *a2a.AgentCard {
	yes := true
	return &a2a.AgentCard{
		Name: "Parley signed agent ö", Description: "A card signed across SDKs.", Version: "1.0.0",
		SupportedInterfaces: []*a2a.AgentInterface{
			{Url: "https://agent.example/", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: "1.0"},
			{Url: "https://agent.example", ProtocolBinding: a2a.BindingHTTPJSON, ProtocolVersion: "1.0"},
		},
		Provider:          &a2a.AgentProvider{Organization: "Parley", Url: "https://parley.dev"},
		Capabilities:      &a2a.AgentCapabilities{Streaming: &yes},
		DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills: []*a2a.AgentSkill{{Id: "echo", Name: "Echo", Description: "Echoes.", Tags: []string{"echo", "test"}}},
	}
}

// withBearer adds what `parley serve --auth-token` declares: a bearer
// scheme required without scopes, an empty value the SDK's form drops.
func withBearer(c *a2a.AgentCard) *a2a.AgentCard {
	c.SecuritySchemes = map[string]*a2a.SecurityScheme{"bearer": {Scheme: &a2a.SecurityScheme_HttpAuthSecurityScheme{
		HttpAuthSecurityScheme: &a2a.HTTPAuthSecurityScheme{Scheme: "Bearer"}}}}
	c.SecurityRequirements = []*a2a.SecurityRequirement{{Schemes: map[string]*a2a.StringList{"bearer": {}}}}
	return c
}

// runCardJS runs card_signature.mjs with a card and a key written to files.
func runCardJS(t *testing.T, node, mode string, card []byte, key any) (string, error) {
	t.Helper()
	dir := t.TempDir()
	cardFile, keyFile := filepath.Join(dir, "card.json"), filepath.Join(dir, "key.json")
	kb, err := json.Marshal(key)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cardFile, card, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, kb, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "card_signature.mjs", mode, cardFile, keyFile)
	cmd.Dir = jsDir(t)
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); ok {
		return string(out), &exec.ExitError{ProcessState: ee.ProcessState, Stderr: ee.Stderr}
	}
	return string(out), err
}

// TestCardSignedByParleyVerifiesInJS: the JS SDK's verifyAgentCardSignature
// accepts Parley's signatures (ES256, EdDSA, RS256; with and without an
// empty security requirement) and refuses a card changed after signing.
func TestCardSignedByParleyVerifiesInJS(t *testing.T) {
	dir := jsDir(t)
	node := testkit.RequireNode(t, dir, "@a2a-js/sdk")
	checkSDKInstalled(t, dir)
	for _, alg := range []string{"ES256", "EdDSA", "RS256"} {
		for _, bearer := range []bool{false, true} {
			key, err := cardsign.GenerateKey(alg)
			if err != nil {
				t.Fatal(err)
			}
			s, err := cardsign.NewSigner(key, jose.SignatureAlgorithm(alg), &cardsign.SignerOptions{KeyID: "parley-" + alg})
			if err != nil {
				t.Fatal(err)
			}
			pub, _ := s.PublicJWK()
			card := signedCardFixture()
			if bearer {
				withBearer(card)
			}
			if err := s.Sign(card); err != nil {
				t.Fatal(err)
			}
			raw, _ := a2a.Marshal(card)
			if out, err := runCardJS(t, node, "verify", raw, pub); err != nil || !strings.Contains(out, "verified") {
				t.Errorf("%s bearer=%v: JS SDK did not verify Parley's signature: %v %s", alg, bearer, err, out)
			}
			card.Description = "changed after signing"
			raw, _ = a2a.Marshal(card)
			if out, err := runCardJS(t, node, "verify", raw, pub); err == nil {
				t.Errorf("%s bearer=%v: JS SDK verified a changed card: %s", alg, bearer, out)
			}
		}
	}
}

// TestCardSignedByJSVerifiesInParley: a card signed by the JS SDK's
// generateAgentCardSignature verifies in Parley; one with an empty value
// verifies only with AcceptSDKForm (the SDK signs a form without empty
// values); a changed one never does.
func TestCardSignedByJSVerifiesInParley(t *testing.T) {
	dir := jsDir(t)
	node := testkit.RequireNode(t, dir, "@a2a-js/sdk")
	checkSDKInstalled(t, dir)
	key, err := cardsign.GenerateKey("ES256")
	if err != nil {
		t.Fatal(err)
	}
	priv := jose.JSONWebKey{Key: key, KeyID: "js-1", Algorithm: "ES256", Use: "sig"}
	pub := priv.Public()
	for _, bearer := range []bool{false, true} {
		card := signedCardFixture()
		if bearer {
			withBearer(card)
		}
		raw, _ := a2a.Marshal(card)
		out, err := runCardJS(t, node, "sign", raw, priv)
		if err != nil {
			t.Fatalf("JS signing: %v %s", err, out)
		}
		signed := &a2a.AgentCard{}
		if err := a2a.Unmarshal([]byte(out), signed); err != nil {
			t.Fatalf("the JS-signed card: %v\n%s", err, out)
		}
		strict := &cardsign.Verifier{Keys: []jose.JSONWebKey{pub}}
		err = strict.VerifyCard(context.Background(), signed)
		switch {
		case !bearer && err != nil:
			t.Errorf("Parley did not verify the JS SDK's signature: %v", err)
		case bearer && (err == nil || !strings.Contains(err.Error(), "empty values removed")):
			t.Errorf("with an empty requirement, strict verification = %v; want the SDK-form explanation", err)
		}
		lenient := &cardsign.Verifier{Keys: []jose.JSONWebKey{pub}, AcceptSDKForm: true}
		if err := lenient.VerifyCard(context.Background(), signed); err != nil {
			t.Errorf("bearer=%v: AcceptSDKForm did not verify the JS SDK's signature: %v", bearer, err)
		}
		signed.Skills[0].Description = "changed after signing"
		if err := lenient.VerifyCard(context.Background(), signed); err == nil {
			t.Errorf("bearer=%v: a changed JS-signed card verified", bearer)
		}
	}
}

// TestServedCardVerifiesInJS: the card `parley serve --sign-card-key`
// publishes (with --auth-token, so with a bearer requirement) verifies
// with the JS SDK, given the JWKS `parley key jwks` prints.
func TestServedCardVerifiesInJS(t *testing.T) {
	dir := jsDir(t)
	node := testkit.RequireNode(t, dir, "@a2a-js/sdk")
	checkSDKInstalled(t, dir)
	bin := testkit.ParleyBinary(t)
	tmp := t.TempDir()
	keyFile := filepath.Join(tmp, "card.key")
	if out, err := exec.Command(bin, "key", "new", "--out", keyFile).CombinedOutput(); err != nil {
		t.Fatalf("parley key new: %v %s", err, out)
	}
	jwksOut, err := exec.Command(bin, "key", "jwks", keyFile, "--kid", "served-1").Output()
	if err != nil {
		t.Fatalf("parley key jwks: %v", err)
	}
	var set struct{ Keys []json.RawMessage }
	if err := json.Unmarshal(jwksOut, &set); err != nil || len(set.Keys) != 1 {
		t.Fatalf("JWKS %s: %v", jwksOut, err)
	}
	base := testkit.OnFreeAddr(t, "parley server", func(addr string) (string, error) {
		cmd := exec.Command(bin, "serve", "--store", "memory", "--addr", addr, "--auth-token", "alice=tok",
			"--sign-card-key", keyFile, "--sign-card-kid", "served-1")
		p := testenv.StartProcess(t, cmd, &testenv.ProcessOptions{Name: "parley server"})
		if _, err := p.WaitLine(func(l string) bool { return strings.Contains(l, "message:send") }, 20*time.Second); err != nil {
			p.Stop()
			return "", err
		}
		return "http://" + addr, nil
	})
	resp, err := http.Get(base + "/.well-known/agent-card.json")
	if err != nil {
		t.Fatal(err)
	}
	card, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if out, err := runCardJS(t, node, "verify", card, set.Keys[0]); err != nil || !strings.Contains(out, "verified") {
		t.Errorf("JS SDK did not verify the served card: %v %s\n%s", err, out, card)
	}
}
