package a2ahttp_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"parley.dev/parley/a2a"
	"parley.dev/parley/a2ahttp"
	"parley.dev/parley/internal/testkit"
)

// fetch sends a request without a body and returns the status, the
// headers and the body.
func fetch(t *testing.T, method, url string, header map[string]string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, string(body)
}

// TestIndexPage: GET / answers with a page pointing to the card and the
// interfaces, without credentials even where they are required.
func TestIndexPage(t *testing.T) {
	e := start(t, config{tokens: map[string]string{"tok": "alice"}})
	status, hd, body := fetch(t, "GET", e.url+"/", nil)
	if status != http.StatusOK || !strings.HasPrefix(hd.Get("Content-Type"), "text/plain") {
		t.Fatalf("GET / = %d %q, want 200 text/plain\n%s", status, hd.Get("Content-Type"), body)
	}
	want := []string{a2ahttp.CardPath, e.card.GetName()}
	for _, in := range e.card.GetSupportedInterfaces() {
		want = append(want, in.GetProtocolBinding()+" ", in.GetUrl())
	}
	for _, w := range want {
		if !strings.Contains(body, w) {
			t.Errorf("GET / body lacks %q:\n%s", w, body)
		}
	}
	if !strings.Contains(hd.Get("Link"), a2ahttp.CardPath) {
		t.Errorf("GET / Link = %q, want the card path", hd.Get("Link"))
	}
	status, hd, body = fetch(t, "HEAD", e.url+"/", nil)
	if status != http.StatusOK || !strings.HasPrefix(hd.Get("Content-Type"), "text/plain") || body != "" {
		t.Errorf("HEAD / = %d %q %q, want 200 text/plain and no body", status, hd.Get("Content-Type"), body)
	}
}

// TestIndexPageLeavesOtherPathsAlone: only GET and HEAD of exactly "/" get
// the page; JSON-RPC still answers POST / and every other unknown request
// keeps the HTTP+JSON binding's error shape.
func TestIndexPageLeavesOtherPathsAlone(t *testing.T) {
	e := start(t, config{})
	// JSON-RPC at "/".
	mustOK(t, e.call(jsonRPC, "SendMessage", msg("hi")))
	for _, c := range []struct {
		method, path string
		status       int
	}{
		{"GET", "/index.html", 404},
		{"GET", "/no/such/route", 404},
		{"GET", "//", 404},
		{"PUT", "/", 404},
		{"DELETE", "/", 404},
	} {
		req, _ := http.NewRequest(c.method, e.url+c.path, nil)
		req.Header.Set("A2A-Version", "1.0")
		r := e.do(restB, req)
		if r.status != c.status || r.err == nil || r.err.code != a2a.CodeMethodNotFound {
			t.Errorf("%s %s = %d %s, want %d with an HTTP+JSON error body", c.method, c.path, r.status, r.body, c.status)
		}
		if strings.Contains(string(r.body), a2ahttp.CardPath) {
			t.Errorf("%s %s got the index page: %s", c.method, c.path, r.body)
		}
	}
}

// TestIndexPageUnderBasePaths: with the bindings mounted below "/", GET /
// still points to them, and a GET of the JSON-RPC URL is not the page.
func TestIndexPageUnderBasePaths(t *testing.T) {
	s := testkit.StartServer(t, &testkit.Options{Kind: "echo", Interfaces: func(base string) []*a2a.AgentInterface {
		return []*a2a.AgentInterface{
			{Url: base + "/a2a/jsonrpc", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: "1.0"},
			{Url: base + "/a2a/rest", ProtocolBinding: a2a.BindingHTTPJSON, ProtocolVersion: "1.0"},
		}
	}})
	status, _, body := fetch(t, "GET", s.URL+"/", nil)
	if status != http.StatusOK || !strings.Contains(body, s.URL+"/a2a/jsonrpc") || !strings.Contains(body, s.URL+"/a2a/rest") {
		t.Fatalf("GET / = %d\n%s\nwant 200 naming both interfaces", status, body)
	}
	status, _, body = fetch(t, "GET", s.URL+"/a2a/jsonrpc/", nil)
	if status == http.StatusOK || strings.Contains(body, a2ahttp.CardPath) {
		t.Errorf("GET /a2a/jsonrpc/ = %d %s, want no index page", status, body)
	}
}
