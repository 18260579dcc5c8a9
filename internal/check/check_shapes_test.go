package check_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"
	"parley.dev/parley/a2a"
	"parley.dev/parley/a2ahttp"
	"parley.dev/parley/internal/agents"
	"parley.dev/parley/internal/check"
	"parley.dev/parley/internal/testkit"
	"parley.dev/parley/server"
)

const requiredExt = "https://example.com/extensions/required/v1"

// startShaped serves the conformance agent in process on the three
// bindings with a card that declares no streaming and marks requiredExt
// required (the shapes of parley serve --capabilities no-streaming
// --require-extension); wrap, when set, wraps the handler.
func startShaped(t *testing.T, wrap func(http.Handler) http.Handler) string {
	t.Helper()
	return startShapedWith(t, wrap, false)
}

// startShapedWith is startShaped, with streaming declared on the core's
// card when streaming is true.
func startShapedWith(t *testing.T, wrap func(http.Handler) http.Handler, streaming bool) string {
	t.Helper()
	hs := httptest.NewUnstartedServer(nil)
	base := "http://" + hs.Listener.Addr().String()
	card, err := agents.Card("conformance", []*a2a.AgentInterface{
		{Url: base + "/", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.ProtocolVersion},
		{Url: base, ProtocolBinding: a2a.BindingHTTPJSON, ProtocolVersion: a2a.ProtocolVersion},
		{Url: hs.Listener.Addr().String(), ProtocolBinding: a2a.BindingGRPC, ProtocolVersion: a2a.ProtocolVersion},
	})
	if err != nil {
		t.Fatal(err)
	}
	card.Capabilities.Streaming = proto.Bool(streaming)
	card.Capabilities.PushNotifications = proto.Bool(true)
	card.Capabilities.Extensions = []*a2a.AgentExtension{{Uri: requiredExt, Required: true}}
	srv, err := server.New(&server.Options{Card: card, Agent: agents.Conformance(), Push: testkit.NoDelivery{}})
	if err != nil {
		t.Fatal(err)
	}
	h, err := a2ahttp.New(srv, &a2ahttp.Options{Card: card})
	if err != nil {
		t.Fatal(err)
	}
	var handler http.Handler = h
	if wrap != nil {
		handler = wrap(h)
	}
	hs.Config.Handler = handler
	hs.Config.Protocols = new(http.Protocols)
	hs.Config.Protocols.SetHTTP1(true)
	hs.Config.Protocols.SetUnencryptedHTTP2(true)
	hs.Start()
	t.Cleanup(func() {
		hs.Close()
		srv.Close(context.Background())
	})
	return base
}

// verdicts are the verdicts of id, by binding.
func verdicts(rep *check.Report, id string) map[string]check.Verdict {
	out := map[string]check.Verdict{}
	for _, r := range rep.Find(id) {
		out[r.Binding] = r.Verdict
	}
	return out
}

// wantOnEveryBinding fails unless id has verdict v on the three bindings.
func wantOnEveryBinding(t *testing.T, rep *check.Report, id string, v check.Verdict) {
	t.Helper()
	got := verdicts(rep, id)
	for _, b := range []string{a2a.BindingJSONRPC, a2a.BindingHTTPJSON, a2a.BindingGRPC} {
		if got[b] != v {
			t.Errorf("%s %s: %s, want %s (%v)", b, id, got[b], v, rep.Find(id))
		}
	}
}

// TestRunGradesShapes: against an agent without streaming and with a
// required extension, the checker activates the extension itself, grades
// its refusal without it (extensions.required) and the refusal of a
// stream (capabilities.no-streaming), and makes the stream checks N/A:
// nothing fails. An agent that does not enforce the extension, or streams
// though its card says it does not, fails exactly those checks.
func TestRunGradesShapes(t *testing.T) {
	t.Parallel()
	t.Run("good", func(t *testing.T) {
		t.Parallel()
		rep, err := check.Run(context.Background(), check.Options{URL: startShaped(t, nil)})
		if err != nil {
			t.Fatal(err)
		}
		if got := notPassing(rep, check.Fail, check.Warn); len(got) > 0 {
			t.Fatalf("against a shaped Parley: %v", got)
		}
		if !rep.Conformance {
			t.Errorf("the conformance agent was not recognised: %s", rep.Detected)
		}
		wantOnEveryBinding(t, rep, "extensions.required", check.Pass)
		wantOnEveryBinding(t, rep, "capabilities.no-streaming", check.Pass)
		wantOnEveryBinding(t, rep, "stream.order", check.NA)
	})
	t.Run("extension-not-enforced", func(t *testing.T) {
		t.Parallel()
		// Every request arrives with the extension activated: the server
		// never sees a call without it.
		activate := func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				r.Header.Set("A2A-Extensions", requiredExt)
				next.ServeHTTP(w, r)
			})
		}
		rep, err := check.Run(context.Background(), check.Options{URL: startShaped(t, activate)})
		if err != nil {
			t.Fatal(err)
		}
		got := notPassing(rep, check.Fail, check.Warn)
		want := []string{"GRPC extensions.required FAIL", "HTTP+JSON extensions.required FAIL", "JSONRPC extensions.required FAIL"}
		if !slices.Equal(got, want) {
			t.Fatalf("got %v, want %v", got, want)
		}
	})
	t.Run("streams-anyway", func(t *testing.T) {
		t.Parallel()
		// The served card claims no streaming for a server that streams.
		base := startShapedStreaming(t)
		rep, err := check.Run(context.Background(), check.Options{URL: base, Header: http.Header{"A2A-Extensions": {requiredExt}}})
		if err != nil {
			t.Fatal(err)
		}
		wantOnEveryBinding(t, rep, "capabilities.no-streaming", check.Fail)
	})
}

// startShapedStreaming is startShaped with a server that streams: the
// card it serves says streaming false, its core's card says true.
func startShapedStreaming(t *testing.T) string {
	isCard := func(r *http.Request) bool { return r.URL.Path == "/.well-known/agent-card.json" }
	return startShapedWith(t, rewrite(isCard, func(_ http.Header, b []byte) []byte {
		return bytes.Replace(b, []byte(`"streaming":true`), []byte(`"streaming":false`), 1)
	}), true)
}
