package check_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"testing"

	"parley.dev/parley/a2a"
	"parley.dev/parley/a2ahttp"
	"parley.dev/parley/agents"
	"parley.dev/parley/internal/check"
	"parley.dev/parley/server"
)

// startParley serves the conformance agent in process; wrap, when set,
// wraps the handler (to break the server on purpose).
func startParley(t *testing.T, tokens map[string]string, wrap func(http.Handler) http.Handler) string {
	t.Helper()
	hs := httptest.NewUnstartedServer(nil)
	base := "http://" + hs.Listener.Addr().String()
	card, err := agents.Card("conformance", []*a2a.AgentInterface{
		{Url: base + "/", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.ProtocolVersion},
		{Url: base, ProtocolBinding: a2a.BindingHTTPJSON, ProtocolVersion: a2a.ProtocolVersion},
	})
	if err != nil {
		t.Fatal(err)
	}
	var ext *a2a.AgentCard
	if len(tokens) > 0 {
		card.SecuritySchemes = map[string]*a2a.SecurityScheme{"bearer": {Scheme: &a2a.SecurityScheme_HttpAuthSecurityScheme{
			HttpAuthSecurityScheme: &a2a.HTTPAuthSecurityScheme{Scheme: "Bearer"}}}}
		card.SecurityRequirements = []*a2a.SecurityRequirement{{Schemes: map[string]*a2a.StringList{"bearer": {}}}}
		yes := true
		card.Capabilities.ExtendedAgentCard = &yes
		ext = &a2a.AgentCard{Name: "extended", Description: "d", Version: "1", SupportedInterfaces: card.SupportedInterfaces,
			Capabilities: &a2a.AgentCapabilities{}, DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
			Skills: card.Skills}
	}
	srv, err := server.New(&server.Options{Card: card, ExtendedCard: ext, Agent: agents.Conformance(), RequireAuth: len(tokens) > 0})
	if err != nil {
		t.Fatal(err)
	}
	h, err := a2ahttp.New(srv, &a2ahttp.Options{Card: card, Tokens: tokens, DisableGRPC: true})
	if err != nil {
		t.Fatal(err)
	}
	var handler http.Handler = h
	if wrap != nil {
		handler = wrap(h)
	}
	hs.Config.Handler = handler
	hs.Start()
	t.Cleanup(func() {
		hs.Close()
		srv.Close(context.Background())
	})
	return base
}

func notPassing(rep *check.Report, verdicts ...check.Verdict) []string {
	var out []string
	for _, r := range rep.Results {
		if slices.Contains(verdicts, r.Verdict) {
			out = append(out, strings.TrimSpace(r.Binding+" "+r.ID+" "+string(r.Verdict)))
		}
	}
	sort.Strings(out)
	return out
}

// TestRunParley grades Parley in process (so that -race sees the checker):
// no check fails or is unmet; only push delivery is skipped (no sender).
func TestRunParley(t *testing.T) {
	t.Parallel()
	base := startParley(t, map[string]string{"tok-a": "alice", "tok-b": "bob"}, nil)
	var progress int
	rep, err := check.Run(context.Background(), check.Options{URL: base, Token: "tok-a", Token2: "tok-b", WebhookAddr: "127.0.0.1:0",
		Progress: func(check.Result) { progress++ }})
	if err != nil {
		t.Fatal(err)
	}
	if got := notPassing(rep, check.Fail, check.Warn); len(got) > 0 {
		for _, r := range rep.Results {
			if r.Verdict == check.Fail || r.Verdict == check.Warn {
				t.Logf("%s %s: %s\n  sent %s\n  got %s", r.Binding, r.ID, r.Finding, r.Sent, r.Received)
			}
		}
		t.Fatalf("against Parley: %v", got)
	}
	for _, r := range rep.Results {
		if r.Verdict == check.Skip && !strings.HasPrefix(r.ID, "B3.") {
			t.Errorf("skipped: %s %s: %s", r.Binding, r.ID, r.Finding)
		}
	}
	if progress != len(rep.Results) {
		t.Errorf("Progress called %d times for %d results", progress, len(rep.Results))
	}
	var text bytes.Buffer
	if err := rep.WriteText(&text, check.TextOptions{Color: true}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "\x1b[32mPASS") || !strings.Contains(text.String(), "0 MUST failed") {
		t.Errorf("text report:\n%s", text.String())
	}
}

// rewrite changes the bodies of non-streaming responses to requests that
// match.
func rewrite(match func(*http.Request) bool, change func(http.Header, []byte) []byte) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !match(r) {
				next.ServeHTTP(w, r)
				return
			}
			rec := httptest.NewRecorder()
			next.ServeHTTP(rec, r)
			body := change(rec.Header(), rec.Body.Bytes())
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.Header().Del("Content-Length")
			w.WriteHeader(rec.Code)
			w.Write(body)
		})
	}
}

// TestRunCatchesDefects breaks a Parley server in known ways and checks
// that each defect is reported for its reason, and nothing else is.
func TestRunCatchesDefects(t *testing.T) {
	t.Parallel()
	isList := func(r *http.Request) bool {
		return (r.Method == http.MethodGet && r.URL.Path == "/tasks") || r.URL.Path == "/.well-known/agent-card.json"
	}
	wrap := rewrite(isList, func(h http.Header, b []byte) []byte {
		h.Del("Cache-Control")
		h.Del("ETag")
		h.Del("Last-Modified")
		// Drop the REQUIRED nextPageToken from REST ListTasks pages.
		return bytes.Replace(b, []byte(`"nextPageToken":"",`), nil, 1)
	})
	base := startParley(t, nil, wrap)
	rep, err := check.Run(context.Background(), check.Options{URL: base})
	if err != nil {
		t.Fatal(err)
	}
	got := notPassing(rep, check.Fail, check.Warn)
	want := []string{
		"HTTP+JSON B5.list-shape FAIL",
		"card.caching-headers WARN",
	}
	// B5.walk reads pages with tokens and last pages: the empty token is
	// gone from the last page too, which the walk does not notice (the
	// decoded value is "" either way); the shape check does.
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for _, r := range rep.Find("B5.list-shape") {
		if r.Binding == a2a.BindingHTTPJSON && !strings.Contains(r.Finding, "missing: nextPageToken") {
			t.Errorf("B5.list-shape finding: %s", r.Finding)
		}
	}
}

// TestRunUnreachable reports that nothing could be checked.
func TestRunUnreachable(t *testing.T) {
	t.Parallel()
	ln := httptest.NewServer(http.NotFoundHandler())
	url := ln.URL
	ln.Close()
	_, err := check.Run(context.Background(), check.Options{URL: url})
	var ue *check.UnreachableError
	if !errors.As(err, &ue) {
		t.Fatalf("Run(closed) = %v, want *UnreachableError", err)
	}
}
