package cli_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// status sends GET /tasks/nope with the headers and returns the HTTP
// status and Retry-After: 404 means authenticated, 401 refused.
func status(t *testing.T, hc *http.Client, base string, h map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", base+"/tasks/nope", nil)
	req.Header.Set("A2A-Version", "1.0")
	for k, v := range h {
		req.Header.Set(k, v)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Retry-After")
}

// TestServeAPIKeysAndSignedCard: `parley apikey new` and `parley key`
// make what `parley serve --api-keys --sign-card-key` reads; the card
// declares both schemes and verifies with `parley card --verify-key`; a
// key removed from the file and SIGHUP revoke it.
func TestServeAPIKeysAndSignedCard(t *testing.T) {
	dir := t.TempDir()
	aliceOut, _ := mustRun(t, 0, "apikey", "new", "alice")
	bobOut, _ := mustRun(t, 0, "apikey", "new", "bob")
	alice, bob := strings.Split(strings.TrimSpace(aliceOut), "\n"), strings.Split(strings.TrimSpace(bobOut), "\n")
	keysFile := filepath.Join(dir, "api-keys")
	os.WriteFile(keysFile, []byte(alice[1]+"\n"+bob[1]+"\n"), 0o600)
	signKey, otherKey := filepath.Join(dir, "card.key"), filepath.Join(dir, "other.key")
	mustRun(t, 0, "key", "new", "--out", signKey)
	mustRun(t, 0, "key", "new", "--alg", "EdDSA", "--out", otherKey)
	if fi, err := os.Stat(signKey); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v; want mode 0600", fi, err)
	}
	jwks, _ := mustRun(t, 0, "key", "jwks", signKey, "--kid", "card-1")
	otherJWKS, _ := mustRun(t, 0, "key", "jwks", otherKey)
	jwksFile, otherFile := filepath.Join(dir, "jwks.json"), filepath.Join(dir, "other.json")
	os.WriteFile(jwksFile, []byte(jwks), 0o600)
	os.WriteFile(otherFile, []byte(otherJWKS), 0o600)

	p := serve(t, "--store", "memory", "--api-keys", keysFile, "--auth-token", "carol=tok",
		"--sign-card-key", signKey, "--sign-card-kid", "card-1")
	base := "http://" + p.addr
	card := p.getJSON(t, "/.well-known/agent-card.json")
	schemes, _ := card["securitySchemes"].(map[string]any)
	if _, ok := schemes["apiKey"]; !ok || schemes["bearer"] == nil || len(card["securityRequirements"].([]any)) != 2 {
		t.Errorf("card security: %v %v", card["securitySchemes"], card["securityRequirements"])
	}
	if field(schemes, "apiKey", "apiKeySecurityScheme", "name") != "X-API-Key" {
		t.Errorf("apiKey scheme: %v", schemes["apiKey"])
	}
	out, _ := mustRun(t, 0, "card", base, "--verify-key", jwksFile)
	if !strings.Contains(out, "Signature: verified (key card-1)") {
		t.Errorf("parley card --verify-key:\n%s", out)
	}
	_, errs := mustRun(t, 1, "card", base, "--verify-key", otherFile)
	if !strings.Contains(errs, "does not verify") || !strings.Contains(errs, "not trusted") {
		t.Errorf("parley card with another key: %s", errs)
	}

	for who, h := range map[string]map[string]string{"alice": {"X-API-Key": alice[0]}, "bob": {"X-API-Key": bob[0]}, "carol": {"Authorization": "Bearer tok"}} {
		if st, _ := status(t, http.DefaultClient, base, h); st != 404 {
			t.Errorf("%s: HTTP %d; want 404 (authenticated)", who, st)
		}
	}
	if st, _ := status(t, http.DefaultClient, base, map[string]string{"X-API-Key": "pk_nope"}); st != 401 {
		t.Errorf("wrong key: HTTP %d; want 401", st)
	}
	os.WriteFile(keysFile, []byte(alice[1]+"\n"), 0o600) // bob's key revoked
	p.Signal(syscall.SIGHUP)
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, _ := status(t, http.DefaultClient, base, map[string]string{"X-API-Key": bob[0]})
		if st == 401 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("bob's revoked key still accepted (HTTP %d)", st)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if st, _ := status(t, http.DefaultClient, base, map[string]string{"X-API-Key": alice[0]}); st != 404 {
		t.Errorf("alice after bob's revocation: HTTP %d", st)
	}
}

// TestServeJWTAndRateLimit: --jwt-issuer takes tokens of an issuer found
// by discovery, the card names it, and --rate-limit answers 429 with
// Retry-After.
func TestServeJWTAndRateLimit(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	var iss *httptest.Server
	iss = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/.well-known/openid-configuration":
			json.NewEncoder(w).Encode(map[string]string{"issuer": iss.URL, "jwks_uri": iss.URL + "/keys"})
		case "/keys":
			json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k1"}}})
		}
	}))
	defer iss.Close()
	signer, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key}, (&jose.SignerOptions{}).WithHeader("kid", "k1"))
	tok, _ := jwt.Signed(signer).Claims(jwt.Claims{Issuer: iss.URL, Subject: "alice", Audience: jwt.Audience{"parley-test"},
		Expiry: jwt.NewNumericDate(time.Now().Add(time.Hour))}).Serialize()

	p := serve(t, "--store", "memory", "--jwt-issuer", iss.URL, "--jwt-audience", "parley-test", "--rate-limit", "1/h", "--rate-burst", "2")
	base := "http://" + p.addr
	card := p.getJSON(t, "/.well-known/agent-card.json")
	if u := field(card, "securitySchemes", "oidc", "openIdConnectSecurityScheme", "openIdConnectUrl"); u != iss.URL+"/.well-known/openid-configuration" {
		t.Errorf("card oidc scheme: %v", card["securitySchemes"])
	}
	h := map[string]string{"Authorization": "Bearer " + tok}
	for i := range 2 {
		if st, _ := status(t, http.DefaultClient, base, h); st != 404 {
			t.Fatalf("call %d with the JWT: HTTP %d; want 404", i+1, st)
		}
	}
	if st, ra := status(t, http.DefaultClient, base, h); st != 429 || ra == "" {
		t.Errorf("third call: HTTP %d, Retry-After %q; want 429 with Retry-After", st, ra)
	}
	if st, _ := status(t, http.DefaultClient, base, nil); st != 401 {
		t.Errorf("no token: HTTP %d; want 401", st)
	}
}

// TestServeClientCertificates: --tls-client-ca with require asks every
// connection for a certificate of that CA.
func TestServeClientCertificates(t *testing.T) {
	dir := t.TempDir()
	clientCA := newTestCA(t)
	caFile := filepath.Join(dir, "clients.pem")
	os.WriteFile(caFile, pemCert(clientCA.cert.Raw), 0o600)
	p, serverCA, _ := serveTLS(t, "--tls-client-ca", caFile, "--tls-client-auth", "require")
	base := "https://" + p.addr
	leaf := clientCert(t, clientCA, "agent-7")
	with := serverCA.httpsClient(false)
	with.Transport.(*http.Transport).TLSClientConfig.Certificates = []tls.Certificate{leaf}
	if st, _ := status(t, with, base, nil); st != 404 {
		t.Errorf("with a client certificate: HTTP %d; want 404", st)
	}
	req, _ := http.NewRequest("GET", base+"/tasks/nope", nil)
	if resp, err := serverCA.httpsClient(false).Do(req); err == nil {
		resp.Body.Close()
		t.Errorf("without a client certificate: HTTP %d; want the handshake refused", resp.StatusCode)
	}
	_, errs := mustRun(t, 2, "serve", "--tls-client-ca", caFile)
	if !strings.Contains(errs, "--tls-cert") {
		t.Errorf("--tls-client-ca without --tls-cert: %s", errs)
	}
}

// TestServeIdentityUsageErrors: bad identity flags stop serve with exit 2
// and a clear message.
func TestServeIdentityUsageErrors(t *testing.T) {
	for args, want := range map[string]string{
		"--jwt-issuer https://i.example":   "audience",
		"--rate-limit lots":                "--rate-limit",
		"--api-keys /nonexistent/keys":     "--api-keys",
		"--sign-card-key /nonexistent/key": "--sign-card-key",
	} {
		_, errs, code := parley(t, append([]string{"serve", "--store", "memory"}, strings.Fields(args)...)...)
		if code != 2 || !strings.Contains(errs, want) {
			t.Errorf("serve %s: exit %d, %s; want 2 naming %s", args, code, errs, want)
		}
	}
}

// clientCert issues a client certificate named cn by ca.
func clientCert(t *testing.T, ca *testCA, cn string) tls.Certificate {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(99), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// pemCert encodes a DER certificate as PEM.
func pemCert(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}
