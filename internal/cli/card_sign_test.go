package cli_test

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"parley.dev/parley/cardsign"
)

// serveDoc serves doc as a card and returns the server's URL.
func serveDoc(t *testing.T, doc []byte) string {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(doc)
	}))
	t.Cleanup(hs.Close)
	return hs.URL
}

// publicPEM writes the public half of the private key in keyFile as a PEM
// "PUBLIC KEY", which has no key id, and returns its file and the key's
// default key id.
func publicPEM(t *testing.T, keyFile string) (string, string) {
	t.Helper()
	b, err := os.ReadFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	key, _, err := cardsign.ParsePrivateKey(b)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(key.Public())
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "card.pub.pem")
	os.WriteFile(f, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), 0o600)
	kid, err := cardsign.KeyID(key.Public())
	if err != nil {
		t.Fatal(err)
	}
	return f, kid
}

// TestServedCardVerifiesWithItsKey: the default card `parley serve
// --sign-card-key` serves (v0.3 on, so with the v0.3 interfaces and
// members) verifies with `parley card --verify-key` given the PEM public
// key (no key id, whatever --sign-card-kid says) or the JWKS of `parley
// key jwks`; the same document with a member added after signing does
// not.
func TestServedCardVerifiesWithItsKey(t *testing.T) {
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "card.key")
	mustRun(t, 0, "key", "new", "--out", keyFile)
	pub, thumbprint := publicPEM(t, keyFile)
	jwks, _ := mustRun(t, 0, "key", "jwks", keyFile, "--kid", "card-1")
	jwksFile := filepath.Join(dir, "jwks.json")
	os.WriteFile(jwksFile, []byte(jwks), 0o600)

	plain := serve(t, "--store", "memory", "--sign-card-key", keyFile)
	withKID := serve(t, "--store", "memory", "--sign-card-key", keyFile, "--sign-card-kid", "card-1", "--auth-token", "alice=tok")
	for name, c := range map[string]struct {
		base, key, kid string
	}{
		"default kid, PEM":      {"http://" + plain.addr, pub, thumbprint},
		"--sign-card-kid, PEM":  {"http://" + withKID.addr, pub, "card-1"},
		"--sign-card-kid, JWKS": {"http://" + withKID.addr, jwksFile, "card-1"},
	} {
		out, _ := mustRun(t, 0, "card", c.base, "--verify-key", c.key)
		if !strings.Contains(out, "Signature: verified (key "+c.kid+")\n") {
			t.Errorf("%s: parley card --verify-key:\n%s", name, out)
		}
	}

	// Without a key the signature is reported unverifiable, never verified
	// (on stderr with -o json, whose stdout is the card); an unsigned card's
	// is absent, and not a failure (A2A CLI SPEC §10.1).
	out, _ := mustRun(t, 0, "card", "get", "-a", "http://"+withKID.addr)
	contains(t, "card get without a key", out, "Signature: unverifiable (", "no key was given")
	_, errs := mustRun(t, 0, "card", "get", "-a", "http://"+withKID.addr, "-o", "json")
	contains(t, "card get -o json without a key", errs, "warning: signature unverifiable")
	unsigned := serve(t, "--store", "memory")
	out, _ = mustRun(t, 0, "card", "get", "-a", "http://"+unsigned.addr)
	contains(t, "an unsigned card", out, "Signature: absent\n")

	served, _ := mustRun(t, 0, "card", "http://"+withKID.addr, "--json")
	if !strings.Contains(served, `"additionalInterfaces"`) || !strings.Contains(served, `"signatures"`) {
		t.Fatalf("the served card lacks the v0.3 members or the signatures: %s", served)
	}
	added := bytes.Replace([]byte(strings.TrimSpace(served)), []byte("{"), []byte(`{"x-added":true,`), 1)
	_, errs = mustRun(t, 1, "card", serveDoc(t, added), "--verify-key", pub)
	if !strings.Contains(errs, "does not verify") || !strings.Contains(errs, "does not match") {
		t.Errorf("a member added after signing: %s", errs)
	}
	// The untouched document, from another server, verifies.
	mustRun(t, 0, "card", serveDoc(t, []byte(served)), "--verify-key", pub)
}
