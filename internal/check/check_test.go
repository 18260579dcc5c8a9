package check_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"parley.dev/parley/a2a"
	"parley.dev/parley/a2ahttp"
	"parley.dev/parley/internal/agents"
	"parley.dev/parley/internal/check"
	"parley.dev/parley/internal/testkit"
	"parley.dev/parley/server"
)

// startParley serves the conformance agent in process on the three
// bindings (gRPC on the same port, over cleartext HTTP/2); wrap, when set,
// wraps the handler (to break the server on purpose).
func startParley(t *testing.T, tokens map[string]string, wrap func(http.Handler) http.Handler) string {
	t.Helper()
	return startParleyWith(t, tokens, wrap, nil)
}

// startParleyWith is startParley with middleware around every operation
// (to break the server's core behaviour on purpose).
func startParleyWith(t *testing.T, tokens map[string]string, wrap func(http.Handler) http.Handler, mw []a2a.Middleware) string {
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
	card.Capabilities.PushNotifications = proto.Bool(true)
	srv, err := server.New(&server.Options{Card: card, ExtendedCard: ext, Agent: agents.Conformance(), RequireAuth: len(tokens) > 0,
		Push: testkit.NoDelivery{}})
	if err != nil {
		t.Fatal(err)
	}
	// The tokens, with "tok-c" (when given) holding tasks:read alone: the
	// credential without the right to send of auth.permission.
	var auth []a2ahttp.Authenticator
	if len(tokens) > 0 {
		set := a2ahttp.NewTokenSet(nil)
		set.ReplaceWithRights(tokens, map[string]a2a.Rights{"tok-c": {a2a.RightTasksRead}})
		auth = append(auth, set)
	}
	h, err := a2ahttp.New(srv, &a2ahttp.Options{Card: card, Authenticators: auth, Middleware: mw})
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
	base := startParley(t, map[string]string{"tok-a": "alice", "tok-b": "bob", "tok-c": "carol"}, nil)
	var progress int
	rep, err := check.Run(context.Background(), check.Options{URL: base, Token: "tok-a", Token2: "tok-b", InsufficientToken: "tok-c", WebhookAddr: "127.0.0.1:0",
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
	for _, in := range rep.Bindings {
		if !in.Checked && in.Version != "0.3" { // v0.3 beside v1.0 is served, not graded
			t.Errorf("interface %+v not checked", in)
		}
	}
	for _, id := range []string{"grpc.protocol", "grpc.unknown-method", "errors.unknown-task.subscribe", "B12.subscribe", "B2.fanout",
		"B2.stream-auth-open", "B13.anonymous", "B7.version-missing", "push.delete", "auth.challenge", "auth.permission"} {
		found := false
		for _, r := range rep.Find(id) {
			if r.Binding == a2a.BindingGRPC {
				found = r.Verdict == check.Pass
			}
		}
		if !found {
			t.Errorf("GRPC %s did not pass: %+v", id, rep.Find(id))
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

var nextPageToken = regexp.MustCompile(`"nextPageToken":"[^"]*",`)

// TestRunCatchesDefects breaks a Parley server in known ways and checks
// that each defect is reported for its reason, and nothing else is.
func TestRunCatchesDefects(t *testing.T) {
	t.Parallel()
	isList := func(r *http.Request) bool {
		return (r.Method == http.MethodGet && r.URL.Path == "/tasks" && r.URL.RawQuery == "") || r.URL.Path == "/.well-known/agent-card.json"
	}
	wrap := rewrite(isList, func(h http.Header, b []byte) []byte {
		h.Del("Cache-Control")
		h.Del("ETag")
		h.Del("Last-Modified")
		// Drop the REQUIRED nextPageToken from REST ListTasks without
		// parameters (a token, or "" on a last page: the three bindings
		// may have made more tasks than a page holds).
		return nextPageToken.ReplaceAll(b, nil)
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

// TestRunCatchesCrossPrincipalCancel: a server that answers another
// principal's CancelTask with TaskNotFoundError but cancels the task all the
// same fails B12.cancel on every binding, and nothing else.
func TestRunCatchesCrossPrincipalCancel(t *testing.T) {
	t.Parallel()
	leaky := func(next a2a.Invoker) a2a.Invoker {
		return a2a.InvokerFuncs{Next: next,
			CallFunc: func(ctx context.Context, m *a2a.Method, req proto.Message) (proto.Message, error) {
				if m.Name != a2a.MethodCancelTask || a2a.CallInfoFrom(ctx).Principal != "bob" {
					return next.Call(ctx, m, req)
				}
				next.Call(a2a.WithPrincipal(ctx, "alice"), m, req) // the defect: alice's task is canceled
				return nil, a2a.NewError(a2a.CodeTaskNotFound, "task not found")
			},
		}
	}
	base := startParleyWith(t, map[string]string{"tok-a": "alice", "tok-b": "bob"}, nil, []a2a.Middleware{leaky})
	rep, err := check.Run(context.Background(), check.Options{URL: base, Token: "tok-a", Token2: "tok-b"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"GRPC B12.cancel FAIL", "HTTP+JSON B12.cancel FAIL", "JSONRPC B12.cancel FAIL"}
	if got := notPassing(rep, check.Fail, check.Warn); !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for _, r := range rep.Find("B12.cancel") {
		if !strings.Contains(r.Finding, "the task is now CANCELED") {
			t.Errorf("%s B12.cancel finding: %s", r.Binding, r.Finding)
		}
	}
	for _, r := range rep.Find("B12.get") {
		if r.Parley != "same" {
			t.Errorf("%s B12.get passed without the note that Parley does the same: %+v", r.Binding, r)
		}
	}
}

// TestRunCatchesUnenforcedRights: auth.permission fails, alone, when the
// token said to lack the right to send is served (an agent without
// rights), and when it is refused as unauthenticated (not a valid
// credential), each binding saying which.
func TestRunCatchesUnenforcedRights(t *testing.T) {
	t.Parallel()
	base := startParley(t, map[string]string{"tok-a": "alice", "tok-b": "bob"}, nil)
	for tok, finding := range map[string]string{"tok-b": "the message was served", "not-a-token": "refused as unauthenticated"} {
		rep, err := check.Run(context.Background(), check.Options{URL: base, Token: "tok-a", InsufficientToken: tok})
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"GRPC auth.permission FAIL", "HTTP+JSON auth.permission FAIL", "JSONRPC auth.permission FAIL"}
		if got := notPassing(rep, check.Fail, check.Warn); !slices.Equal(got, want) {
			t.Fatalf("insufficient token %s: got %v, want %v", tok, got, want)
		}
		for _, r := range rep.Find("auth.permission") {
			if !strings.Contains(r.Finding, finding) {
				t.Errorf("%s auth.permission with %s: %s, want %q", r.Binding, tok, r.Finding, finding)
			}
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

// stripDetails removes grpc-status-details-bin (the google.rpc.Status with
// the ErrorInfo) from gRPC GetTask answers, headers and trailers alike.
func stripDetails(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/lf.a2a.v1.A2AService/GetTask" {
			next.ServeHTTP(w, r)
			return
		}
		sw := &stripWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		sw.strip()
	})
}

type stripWriter struct{ http.ResponseWriter }

func (s *stripWriter) strip() {
	h := s.Header()
	h.Del("Grpc-Status-Details-Bin")
	delete(h, http.TrailerPrefix+"Grpc-Status-Details-Bin")
	delete(h, http.TrailerPrefix+"grpc-status-details-bin")
}

func (s *stripWriter) WriteHeader(code int) { s.strip(); s.ResponseWriter.WriteHeader(code) }

func (s *stripWriter) Write(b []byte) (int, error) { s.strip(); return s.ResponseWriter.Write(b) }

func (s *stripWriter) Flush() { s.strip(); http.NewResponseController(s.ResponseWriter).Flush() }

func (s *stripWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// TestRunCatchesGRPCDefects: a gRPC GetTask whose errors lose their
// ErrorInfo is reported on the gRPC binding (§10.6 and §5.1), for that
// reason, and nothing else is.
func TestRunCatchesGRPCDefects(t *testing.T) {
	t.Parallel()
	base := startParley(t, nil, stripDetails)
	rep, err := check.Run(context.Background(), check.Options{URL: base})
	if err != nil {
		t.Fatal(err)
	}
	got := notPassing(rep, check.Fail, check.Warn)
	want := []string{
		"GRPC B7.version-unsupported FAIL",
		"GRPC errors.unknown-task.get FAIL",
		"equivalence.bindings FAIL",
	}
	if !slices.Equal(got, want) {
		for _, r := range rep.Results {
			if r.Verdict == check.Fail || r.Verdict == check.Warn {
				t.Logf("%s %s: %s\n  got %s", r.Binding, r.ID, r.Finding, r.Received)
			}
		}
		t.Fatalf("got %v, want %v", got, want)
	}
	for _, r := range rep.Find("errors.unknown-task.get") {
		if r.Binding == a2a.BindingGRPC && !strings.Contains(r.Finding, "no google.rpc.ErrorInfo") {
			t.Errorf("errors.unknown-task.get finding: %s", r.Finding)
		}
	}
	if r := rep.Find("equivalence.bindings"); len(r) != 1 || !strings.Contains(r[0].Finding, "GRPC: unidentified error") {
		t.Errorf("equivalence: %+v", r)
	}
}

// TestRunGRPCOverTLS grades the gRPC interface of an agent served over
// TLS: its host:port is dialled with TLS because the card came over https.
func TestRunGRPCOverTLS(t *testing.T) {
	t.Parallel()
	hs := httptest.NewUnstartedServer(nil)
	host := hs.Listener.Addr().String()
	card, err := agents.Card("conformance", []*a2a.AgentInterface{
		{Url: host, ProtocolBinding: a2a.BindingGRPC, ProtocolVersion: a2a.ProtocolVersion},
		{Url: "https://" + host, ProtocolBinding: a2a.BindingHTTPJSON, ProtocolVersion: a2a.ProtocolVersion},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(&server.Options{Card: card, Agent: agents.Conformance()})
	if err != nil {
		t.Fatal(err)
	}
	h, err := a2ahttp.New(srv, &a2ahttp.Options{Card: card})
	if err != nil {
		t.Fatal(err)
	}
	hs.Config.Handler = h
	hs.EnableHTTP2 = true
	hs.StartTLS()
	t.Cleanup(func() {
		hs.Close()
		srv.Close(context.Background())
	})
	rep, err := check.Run(context.Background(), check.Options{URL: hs.URL, HTTPClient: hs.Client(), Bindings: []string{"GRPC"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := notPassing(rep, check.Fail, check.Warn); len(got) > 0 {
		t.Fatalf("gRPC over TLS: %v", got)
	}
	r := rep.Find("grpc.protocol")
	if len(r) != 1 || r[0].Verdict != check.Pass || !strings.Contains(r[0].Finding, "HTTP/2 over TLS") {
		t.Fatalf("grpc.protocol: %+v", r)
	}
	if r := rep.Find("op.send-blocking"); len(r) != 1 || r[0].Verdict != check.Pass {
		t.Fatalf("op.send-blocking: %+v", r)
	}
}

// TestRunGradesFramingOfAnError: a ListTasks answered UNAUTHENTICATED (a
// server that wants other credentials for it), correctly framed, passes
// grpc.protocol, which grades the framing; the error is graded by others.
func TestRunGradesFramingOfAnError(t *testing.T) {
	t.Parallel()
	refuseList := func(next a2a.Invoker) a2a.Invoker {
		return a2a.InvokerFuncs{Next: next,
			CallFunc: func(ctx context.Context, m *a2a.Method, req proto.Message) (proto.Message, error) {
				if m.Name == a2a.MethodListTasks {
					return nil, a2a.NewError(a2a.CodeUnauthenticated, "not for you")
				}
				return next.Call(ctx, m, req)
			},
		}
	}
	base := startParleyWith(t, map[string]string{"tok-a": "alice"}, nil, []a2a.Middleware{refuseList})
	rep, err := check.Run(context.Background(), check.Options{URL: base, Token: "tok-a", Bindings: []string{"GRPC"}})
	if err != nil {
		t.Fatal(err)
	}
	r := rep.Find("grpc.protocol")
	if len(r) != 1 || r[0].Verdict != check.Pass || !strings.Contains(r[0].Finding, "grpc-status 16") || !strings.Contains(r[0].Finding, "UNAUTHENTICATED") {
		t.Fatalf("grpc.protocol of an UNAUTHENTICATED answer: %+v", r)
	}
}

// TestRunExplainsABrokenDelete: a DeleteTaskPushNotificationConfig answer
// that cannot be read fails push.delete, saying so (not "no error").
func TestRunExplainsABrokenDelete(t *testing.T) {
	t.Parallel()
	// A message frame that announces 9 bytes and ends there.
	isDelete := func(r *http.Request) bool { return strings.HasSuffix(r.URL.Path, "/DeleteTaskPushNotificationConfig") }
	base := startParley(t, nil, rewrite(isDelete, func(http.Header, []byte) []byte { return []byte{0, 0, 0, 0, 9} }))
	rep, err := check.Run(context.Background(), check.Options{URL: base, Bindings: []string{"GRPC"}, WebhookAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	r := rep.Find("push.delete")
	if len(r) != 1 || r[0].Verdict != check.Fail || !strings.Contains(r[0].Finding, "unreadable response") || strings.Contains(r[0].Finding, "no error") {
		t.Fatalf("push.delete of an unreadable answer: %+v", r)
	}
}
