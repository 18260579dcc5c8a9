package client_test

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-jose/go-jose/v4"

	"parley.dev/parley/a2ahttp"
	"parley.dev/parley/cardsign"
	"parley.dev/parley/client"
	"parley.dev/parley/internal/jwks"
	"parley.dev/parley/internal/testkit"
)

// TestSignedCardOverTheWire: a2ahttp with v0.3 on, as `parley serve`
// configures it, signs the card document once its v0.3 interfaces and
// members are in; Resolve verifies the bytes it fetched with a PEM public
// key (no key id) and with a JWKS, and refuses the document with a member
// added after signing, or a value changed.
func TestSignedCardOverTheWire(t *testing.T) {
	key, _ := cardsign.GenerateKey("ES256")
	signer, err := cardsign.NewSigner(key, jose.ES256, &cardsign.SignerOptions{KeyID: "card-1"})
	if err != nil {
		t.Fatal(err)
	}
	s := testkit.StartServer(t, &testkit.Options{Quiet: true, HTTP: func(o *a2ahttp.Options) { o.CardSigner = signer.SignJSON }})
	served := get(t, s.URL+a2ahttp.CardPath)
	var doc map[string]any
	if err := json.Unmarshal(served, &doc); err != nil {
		t.Fatal(err)
	}
	if doc["protocolVersion"] != "0.3.0" || doc["additionalInterfaces"] == nil || !strings.Contains(string(served), `"protocolVersion":"0.3"`) {
		t.Fatalf("the served card lacks the v0.3 members or interfaces: %s", served)
	}

	der, _ := x509.MarshalPKIXPublicKey(key.Public())
	pemKeys, err := cardsign.ParsePublicKeys(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
	if err != nil {
		t.Fatal(err)
	}
	jwk, _ := signer.PublicJWK()
	set, _ := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{jwk}})
	keySet := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(set) }))
	defer keySet.Close()
	verifiers := map[string]*cardsign.Verifier{
		"PEM":  {Keys: pemKeys},
		"JWKS": {JWKS: &jwks.Cache{URL: keySet.URL}},
	}
	ctx := context.Background()
	for name, v := range verifiers {
		if _, err := client.Resolve(ctx, s.URL, &client.ResolveOptions{Verifier: v}); err != nil {
			t.Errorf("%s: the served card: %v", name, err)
		}
	}

	// The same bytes from another server, changed on the way.
	var indented bytes.Buffer
	json.Indent(&indented, served, "", "  ")
	for name, c := range map[string]struct {
		doc []byte
		ok  bool
	}{
		"re-indented":         {indented.Bytes(), true},
		"member added":        {bytes.Replace(served, []byte("{"), []byte(`{"x-added":"after signing",`), 1), false},
		"nested member added": {bytes.Replace(served, []byte(`"capabilities":{`), []byte(`"capabilities":{"x":1,`), 1), false},
		"v0.3 url changed":    {bytes.Replace(served, []byte(`"url":"`+s.URL+`/"`), []byte(`"url":"https://evil.example/"`), 1), false},
	} {
		if !c.ok && bytes.Equal(c.doc, served) {
			t.Fatalf("%s: the change did not apply", name)
		}
		u := serveBytes(t, c.doc)
		for vname, v := range verifiers {
			_, err := client.Resolve(ctx, u, &client.ResolveOptions{Verifier: v})
			var ce *client.CardError
			switch {
			case c.ok && err != nil:
				t.Errorf("%s, %s: %v", name, vname, err)
			case !c.ok && (!errors.As(err, &ce) || !strings.Contains(err.Error(), "signature does not verify")):
				t.Errorf("%s, %s: Resolve = %v; want the signature refused", name, vname, err)
			}
		}
	}
}

// get fetches u's body.
func get(t *testing.T, u string) []byte {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// serveBytes serves doc as a card and returns the server's URL.
func serveBytes(t *testing.T, doc []byte) string {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(doc)
	}))
	t.Cleanup(hs.Close)
	return hs.URL
}
