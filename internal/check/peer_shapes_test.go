package check_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/check"
)

// sdkShapes makes a Parley server answer as the official Go SDK does where
// it differs from Parley and the spec leaves room: a card with no skills
// and scopes written as bare arrays, and an anonymous JSON-RPC call refused
// with HTTP 200, code -31401 and ErrorInfo reason UNAUTHENTICATED.
func sdkShapes(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		card := r.URL.Path == "/.well-known/agent-card.json"
		rpc := r.Method == http.MethodPost && r.URL.Path == "/" && r.Header.Get("Authorization") == ""
		if !card && !rpc {
			next.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		body, status := rec.Body.Bytes(), rec.Code
		switch {
		case card && status == http.StatusOK:
			var c map[string]any
			if err := json.Unmarshal(body, &c); err != nil {
				panic(err)
			}
			c["skills"] = []any{}
			c["securityRequirements"] = []any{map[string]any{"schemes": map[string]any{"bearer": []any{}}}}
			body, _ = json.Marshal(c)
		case rpc && status == http.StatusUnauthorized:
			status = http.StatusOK
			body = []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-31401,"message":"unauthenticated","data":[` +
				`{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"UNAUTHENTICATED","domain":"a2a-protocol.org","metadata":{"timestamp":"2026-01-01T00:00:00Z"}}]}}`)
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Del("Content-Length")
		w.Header().Del("ETag")
		w.WriteHeader(status)
		w.Write(body)
	})
}

// TestRunToleratesPeerShapes: what Parley reads with tolerance is not
// graded as a failure: a card with bare-array scopes decodes, an empty
// skills list is a warning of card.required, and a JSON-RPC refusal
// identified by its ErrorInfo reason (code -31401, reason
// UNAUTHENTICATED) passes auth.anonymous.
func TestRunToleratesPeerShapes(t *testing.T) {
	t.Parallel()
	base := startParley(t, map[string]string{"tok-a": "alice", "tok-b": "bob"}, sdkShapes)
	rep, err := check.Run(context.Background(), check.Options{URL: base, Token: "tok-a", Token2: "tok-b"})
	if err != nil {
		t.Fatal(err)
	}
	wantResults(t, rep, []wantResult{
		{"card.decode", "", check.Pass, ""},
		{"card.required", "", check.Warn, "skills is empty"},
		{"auth.anonymous", a2a.BindingJSONRPC, check.Pass, "UnauthenticatedError"},
	})
	if got := notPassing(rep, check.Fail); len(got) > 0 {
		t.Errorf("failures: %v", got)
	}
}

// forbidAnonymous refuses every HTTP call without credentials, but gRPC
// ones, with a bare 403 Forbidden and no protocol body, as a proxy or
// another server may.
func forbidAnonymous(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "" && r.URL.Path != "/.well-known/agent-card.json" &&
			!strings.HasPrefix(r.Header.Get("Content-Type"), "application/grpc") {
			http.Error(w, "Forbidden", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// TestRunReads403AsPermissionDenied: a bare HTTP 403 reads as
// PermissionDeniedError (the error table's reading of the status, §3.3.2),
// not as an authentication error; auth.anonymous and B13.anonymous still
// pass it for a call without credentials, saying that it was an
// authorization error; auth.permission reads Parley's own HTTP+JSON 403
// as PermissionDeniedError.
func TestRunReads403AsPermissionDenied(t *testing.T) {
	t.Parallel()
	base := startParley(t, map[string]string{"tok-a": "alice", "tok-c": "carol"}, forbidAnonymous)
	rep, err := check.Run(context.Background(), check.Options{URL: base, Token: "tok-a", InsufficientToken: "tok-c"})
	if err != nil {
		t.Fatal(err)
	}
	wantResults(t, rep, []wantResult{
		{"auth.anonymous", a2a.BindingJSONRPC, check.Pass, "PermissionDeniedError"},
		{"auth.anonymous", a2a.BindingHTTPJSON, check.Pass, "PermissionDeniedError"},
		{"auth.anonymous", a2a.BindingGRPC, check.Pass, "UnauthenticatedError"},
		{"B13.anonymous", a2a.BindingHTTPJSON, check.Pass, "PermissionDeniedError"},
		{"auth.permission", a2a.BindingHTTPJSON, check.Pass, "PermissionDeniedError"},
	})
}

// wantResult is a check's expected verdict on a binding ("": none), with
// a finding that contains finding.
type wantResult struct {
	id, binding string
	want        check.Verdict
	finding     string
}

// wantResults reports each expected result rep does not have.
func wantResults(t *testing.T, rep *check.Report, want []wantResult) {
	t.Helper()
	for _, c := range want {
		rs := rep.Find(c.id)
		i := slices.IndexFunc(rs, func(r check.Result) bool { return r.Binding == c.binding })
		if i < 0 {
			t.Errorf("%s %s: no result in %+v", c.binding, c.id, rs)
			continue
		}
		if r := rs[i]; r.Verdict != c.want || !strings.Contains(r.Finding, c.finding) {
			t.Errorf("%s %s = %s %q, want %s with %q", c.binding, c.id, r.Verdict, r.Finding, c.want, c.finding)
		}
	}
}
