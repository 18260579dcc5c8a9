package authn_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"log"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/a2ahttp"
	"parley.dev/parley/authn"
	"parley.dev/parley/internal/testkit"
	"parley.dev/parley/server"
)

// testCA is a certificate authority made in the test.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

func newCA(t *testing.T, name string) *testCA {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &testCA{cert: cert, key: key}
}

// issue makes a client certificate valid from notBefore to notAfter.
func (ca *testCA) issue(t *testing.T, cn string, uri string, notBefore, notAfter time.Time) tls.Certificate {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: notBefore, NotAfter: notAfter, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, KeyUsage: x509.KeyUsageDigitalSignature}
	if uri != "" {
		u, _ := url.Parse(uri)
		tmpl.URIs = []*url.URL{u}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// mtlsServer serves the conformance agent over TLS, asking client
// certificates chained to ca with the mode ("require" or "optional"), and
// with a static token as another way in.
func mtlsServer(t *testing.T, ca *testCA, mode string) *testkit.Server {
	t.Helper()
	auth, err := authn.ClientAuthMode(mode)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	return testkit.StartServer(t, &testkit.Options{
		Quiet: true, TLS: true,
		Mutate: func(_ *a2a.AgentCard, o *server.Options) { o.RequireAuth = true },
		HTTP: func(o *a2ahttp.Options) {
			o.Tokens = map[string]string{"tok": "token-user"}
			o.Authenticators = []a2ahttp.Authenticator{authn.ClientCert{}}
		},
		Configure: func(hs *httptest.Server) {
			hs.TLS = &tls.Config{ClientCAs: pool, ClientAuth: auth, MinVersion: tls.VersionTLS12}
			hs.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes
		},
	})
}

// whoAmI sends a GetTask for an unknown task with cert (nil: none) and
// returns the HTTP status, or the transport error.
func whoAmI(t *testing.T, s *testkit.Server, cert *tls.Certificate, token string) (int, error) {
	t.Helper()
	tr := s.HTTP.Client().Transport.(*http.Transport).Clone()
	if cert != nil {
		// Sent whatever CAs the server names (Go's default would send
		// no certificate from a CA the server did not list).
		tr.TLSClientConfig.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return cert, nil }
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", s.URL+"/tasks/nope", nil)
	req.Header.Set("A2A-Version", "1.0")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

func TestClientCertificates(t *testing.T) {
	ca, rogue := newCA(t, "Test CA"), newCA(t, "Rogue CA")
	now := time.Now()
	good := ca.issue(t, "alice", "spiffe://example.org/alice", now.Add(-time.Minute), now.Add(time.Hour))
	untrusted := rogue.issue(t, "alice", "", now.Add(-time.Minute), now.Add(time.Hour))
	expired := ca.issue(t, "alice", "", now.Add(-2*time.Hour), now.Add(-time.Hour))

	for _, mode := range []string{"require", "optional"} {
		s := mtlsServer(t, ca, mode)
		// A trusted certificate authenticates: 404 for the unknown task
		// (not 401).
		if st, err := whoAmI(t, s, &good, ""); err != nil || st != http.StatusNotFound {
			t.Errorf("%s, trusted certificate: %d, %v; want 404", mode, st, err)
		}
		for name, c := range map[string]*tls.Certificate{"untrusted CA": &untrusted, "expired": &expired} {
			if st, err := whoAmI(t, s, c, ""); err == nil {
				t.Errorf("%s, %s certificate: HTTP %d; want the handshake refused", mode, name, st)
			}
		}
		st, err := whoAmI(t, s, nil, "")
		switch mode {
		case "require":
			if err == nil {
				t.Errorf("require, no certificate: HTTP %d; want the handshake refused", st)
			} else if !strings.Contains(err.Error(), "certificate") {
				t.Logf("require, no certificate: %v", err)
			}
		case "optional":
			if err != nil || st != http.StatusUnauthorized {
				t.Errorf("optional, no certificate and no token: %d, %v; want 401", st, err)
			}
			if st, err := whoAmI(t, s, nil, "tok"); err != nil || st != http.StatusNotFound {
				t.Errorf("optional, no certificate, a token: %d, %v; want 404", st, err)
			}
		}
	}
}

func TestCertPrincipal(t *testing.T) {
	ca := newCA(t, "CA")
	now := time.Now()
	withURI := ca.issue(t, "alice", "spiffe://example.org/alice", now, now.Add(time.Hour))
	cnOnly := ca.issue(t, "bob", "", now, now.Add(time.Hour))
	for c, want := range map[*tls.Certificate]string{&withURI: "spiffe://example.org/alice", &cnOnly: "bob"} {
		leaf, _ := x509.ParseCertificate(c.Certificate[0])
		if got := authn.CertPrincipal(leaf); got != want {
			t.Errorf("CertPrincipal = %q; want %q", got, want)
		}
	}
	if p, err := (authn.ClientCert{}).Authenticate(httptest.NewRequest("GET", "/", nil)); p != "" || err != nil {
		t.Errorf("no TLS: %q, %v", p, err)
	}
	if _, err := authn.ClientAuthMode("sometimes"); err == nil {
		t.Error(`ClientAuthMode("sometimes") accepted`)
	}
}
