package authn_test

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/a2ahttp"
	"parley.dev/parley/authn"
)

// The authenticators of this package all carry rights.
var (
	_ a2ahttp.RightsAuthenticator = (*authn.JWT)(nil)
	_ a2ahttp.RightsAuthenticator = (*authn.APIKeys)(nil)
	_ a2ahttp.RightsAuthenticator = authn.ClientCert{}
)

// TestAPIKeyRights: a key line's third field gives the key rights; a line
// without one keeps every right; an unknown right fails the load.
func TestAPIKeyRights(t *testing.T) {
	readerKey, readerLine, err := authn.NewAPIKeyWithRights("alice", a2a.Rights{a2a.RightTasksRead, a2a.RightExtendedCard})
	if err != nil || !strings.HasSuffix(readerLine, " tasks:read,card:extended") {
		t.Fatalf("NewAPIKeyWithRights: %q %v, want a line ending in the rights", readerLine, err)
	}
	fullKey, fullLine, _ := authn.NewAPIKey("alice")
	file := filepath.Join(t.TempDir(), "keys")
	os.WriteFile(file, []byte(readerLine+" # a dashboard\n"+fullLine+"\n"), 0o600)
	keys, err := authn.LoadAPIKeys(file)
	if err != nil {
		t.Fatal(err)
	}
	req := func(key string) *http.Request {
		r, _ := http.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set(authn.APIKeyHeader, key)
		return r
	}
	p, rights, err := keys.AuthenticateRights(req(readerKey))
	if err != nil || p != "alice" || !slices.Equal(rights, a2a.Rights{a2a.RightTasksRead, a2a.RightExtendedCard}) {
		t.Errorf("reader key: %q %v %v, want alice [tasks:read card:extended]", p, rights, err)
	}
	if p, rights, err := keys.AuthenticateRights(req(fullKey)); err != nil || p != "alice" || rights != nil {
		t.Errorf("key without rights: %q %#v %v, want alice with every right (nil)", p, rights, err)
	}
	os.WriteFile(file, []byte(fullLine+" tasks:admin\n"), 0o600)
	if err := keys.Reload(); err == nil || !strings.Contains(err.Error(), "line 1") || !strings.Contains(err.Error(), "tasks:admin") {
		t.Errorf("unknown right: %v, want an error naming the line and the right", err)
	}
	for _, bad := range []a2a.Rights{{}, {"tasks:admin"}} {
		if _, _, err := authn.NewAPIKeyWithRights("alice", bad); err == nil {
			t.Errorf("NewAPIKeyWithRights(%#v) accepted", bad)
		}
	}
}

// TestJWTRightsClaim: without RightsClaim a token has every right; with
// it, the known rights among the claim's values (a string or a list),
// and none when the claim is missing.
func TestJWTRightsClaim(t *testing.T) {
	is := newIssuer(t)
	token := func(extra map[string]any) string {
		c := map[string]any{"iss": is.URL(), "aud": audience, "sub": "alice", "exp": time.Now().Add(time.Minute).Unix()}
		for k, v := range extra {
			c[k] = v
		}
		return is.token(t, "k1", c)
	}
	plain := newJWT(t, is, nil)
	if _, rights, err := plain.AuthenticateRights(bearer(token(map[string]any{"scope": "tasks:read"}))); err != nil || rights != nil {
		t.Errorf("no RightsClaim: %#v %v, want every right (nil)", rights, err)
	}
	scope := newJWT(t, is, func(o *authn.JWTOptions) { o.RightsClaim = "scope" })
	scp := newJWT(t, is, func(o *authn.JWTOptions) { o.RightsClaim = "scp" })
	for _, c := range []struct {
		j     *authn.JWT
		extra map[string]any
		want  a2a.Rights
	}{
		{scope, map[string]any{"scope": "openid tasks:read push"}, a2a.Rights{a2a.RightTasksRead, a2a.RightPush}},
		{scope, map[string]any{"scope": "*"}, a2a.Rights{a2a.RightAll}},
		{scope, map[string]any{"scope": "openid profile"}, a2a.Rights{}},
		{scope, nil, a2a.Rights{}},
		{scp, map[string]any{"scp": []string{"card:extended", "email"}}, a2a.Rights{a2a.RightExtendedCard}},
	} {
		p, rights, err := c.j.AuthenticateRights(bearer(token(c.extra)))
		if err != nil || p != "alice" || rights == nil || !slices.Equal(rights, c.want) {
			t.Errorf("claims %v: %q %#v %v, want alice %v", c.extra, p, rights, err, c.want)
		}
	}
}

// TestClientCertRights: a certificate's principal gets the rights given
// to it; another keeps every right.
func TestClientCertRights(t *testing.T) {
	ca := newCA(t, "Test CA")
	now := time.Now()
	req := func(cn string) *http.Request {
		c := ca.issue(t, cn, "", now.Add(-time.Minute), now.Add(time.Hour))
		leaf, err := x509.ParseCertificate(c.Certificate[0])
		if err != nil {
			t.Fatal(err)
		}
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.TLS = &tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{leaf}}}
		return r
	}
	cc := authn.ClientCert{Rights: map[string]a2a.Rights{"reader": {a2a.RightTasksRead}}}
	if p, rights, err := cc.AuthenticateRights(req("reader")); err != nil || p != "reader" || !slices.Equal(rights, a2a.Rights{a2a.RightTasksRead}) {
		t.Errorf("reader: %q %v %v", p, rights, err)
	}
	if p, rights, err := cc.AuthenticateRights(req("admin")); err != nil || p != "admin" || rights != nil {
		t.Errorf("admin: %q %#v %v, want every right (nil)", p, rights, err)
	}
}
