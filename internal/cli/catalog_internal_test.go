package cli

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzCatalogEntry: a catalog document is untrusted input: whatever it
// holds, finding an entry never panics, and an entry found is either a
// reference or a whole card named as asked.
func FuzzCatalogEntry(f *testing.F) {
	f.Add([]byte(`{"agents":[{"name":"a","url":"http://127.0.0.1:1"}]}`), "a")
	f.Add([]byte(`{"agents":[{"name":"B","supportedInterfaces":[],"url":"x"}]}`), "b")
	f.Add([]byte(`{"agents":[1,"x",null,{"name":7}]}`), "x")
	f.Add([]byte(`[]`), "")
	f.Fuzz(func(t *testing.T, doc []byte, name string) {
		e, raw, err := findCatalogEntry(doc, name)
		if err != nil {
			return
		}
		if !strings.EqualFold(e.Name, name) || (raw == nil && e.URL == "") {
			t.Errorf("entry %+v (card %v) for %q", e, raw != nil, name)
		}
	})
}

// FuzzDiscovery: an OpenID Connect discovery document is untrusted input:
// reading it never panics, and a document read offers the code and device
// flows by the endpoints it names.
func FuzzDiscovery(f *testing.F) {
	f.Add([]byte(`{"issuer":"http://i","authorization_endpoint":"http://i/auth","token_endpoint":"http://i/token","device_authorization_endpoint":"http://i/device","grant_types_supported":["client_credentials"]}`))
	f.Add([]byte(`{"grant_types_supported":"client_credentials"}`))
	f.Add([]byte(`null`))
	f.Add([]byte(`{"issuer":"http://i/","token_endpoint":"http://i/token"}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		s, err := parseDiscovery("oidc", "http://i/.well-known/openid-configuration", bytes.NewReader(doc))
		if err != nil {
			return
		}
		if s.offers(flowCode) != (s.authURL != "" && s.tokenURL != "") || s.offers(flowDevice) != (s.deviceURL != "" && s.tokenURL != "") {
			t.Errorf("flows of %+v", s)
		}
	})
}

// TestSameOrigin: where the stored token of an agent may go.
func TestSameOrigin(t *testing.T) {
	for _, c := range []struct {
		agent, iface string
		want         bool
	}{
		{"https://a.example/a2a", "https://a.example/rest", true},
		{"https://a.example/a2a", "https://A.example:443/x", true},
		{"https://a.example/a2a", "http://a.example/x", false},
		{"https://a.example/a2a", "https://a.example:8443/x", false},
		{"https://a.example/a2a", "https://b.example/a2a", false},
		{"https://a.example/a2a", "a.example:443", false},
		{"http://127.0.0.1:8080", "127.0.0.1:8080", true},
		{"http://127.0.0.1:8080", "dns:///127.0.0.1:8080", true},
		{"http://127.0.0.1:8080", "http://127.0.0.1:8081", false},
		{"http://127.0.0.1:8080", "", false},
		{"not a url", "not a url", false},
	} {
		if got := sameOrigin(c.agent, c.iface); got != c.want {
			t.Errorf("sameOrigin(%q, %q) = %v, want %v", c.agent, c.iface, got, c.want)
		}
	}
}

// TestDiscoveryIssuer: a discovery document is used only when the issuer
// it names is the one whose well-known URL it was read from (OpenID
// Connect Discovery §4.3), a terminating "/" aside.
func TestDiscoveryIssuer(t *testing.T) {
	const url = "https://id.example/realm/.well-known/openid-configuration"
	for _, c := range []struct {
		doc string
		ok  bool
	}{
		{`{"issuer":"https://id.example/realm","token_endpoint":"https://id.example/realm/token"}`, true},
		{`{"issuer":"https://id.example/realm/","token_endpoint":"https://id.example/realm/token"}`, true},
		{`{"issuer":"https://evil.example/realm","token_endpoint":"https://evil.example/token"}`, false},
		{`{"token_endpoint":"https://evil.example/token"}`, false},
	} {
		_, err := parseDiscovery("oidc", url, strings.NewReader(c.doc))
		if (err == nil) != c.ok {
			t.Errorf("%s: %v, want ok %v", c.doc, err, c.ok)
		}
	}
	if _, err := parseDiscovery("oidc", "https://id.example/discovery.json", strings.NewReader(`{"issuer":"https://other.example"}`)); err != nil {
		t.Errorf("a discovery URL that names no issuer: %v, want the document read", err)
	}
}
