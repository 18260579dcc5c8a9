package cli_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"parley.dev/parley/internal/testkit"
)

// emptySkills serves the card without skills and with its scopes as bare
// arrays, as the official Go SDK's tools publish cards.
func emptySkills(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/.well-known/agent-card.json" {
			next.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		var c map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &c); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		c["skills"] = []any{}
		c["securityRequirements"] = []any{map[string]any{"schemes": map[string]any{"bearer": []any{}}}}
		c["securitySchemes"] = map[string]any{"bearer": map[string]any{"httpAuthSecurityScheme": map[string]any{"scheme": "Bearer"}}}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(c)
	})
}

// TestCardWithoutSkills: `parley card` and `parley send` use an agent whose
// card has an empty skills list (and bare-array scopes), with a warning on
// stderr.
func TestCardWithoutSkills(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t, &testkit.Options{Quiet: true, Wrap: emptySkills})
	out, errs := mustRun(t, 0, "card", srv.URL)
	contains(t, "card", out, "Parley conformance agent")
	contains(t, "card stderr", errs, "warning", "no skills")
	out, errs = mustRun(t, 0, "send", srv.URL, "hello")
	contains(t, "send", out, "COMPLETED")
	contains(t, "send stderr", errs, "warning", "no skills")
	// A card with skills draws no warning.
	plain := testkit.StartServer(t, &testkit.Options{Quiet: true})
	if _, errs := mustRun(t, 0, "card", plain.URL); strings.Contains(errs, "warning") {
		t.Errorf("card with skills: stderr %q, want no warning", errs)
	}
}

// refuseSubscribe refuses every JSON-RPC SubscribeToTask with an internal
// error, as an agent might for a finished task.
func refuseSubscribe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if r.Method == http.MethodPost && bytes.Contains(body, []byte(`"SubscribeToTask"`)) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"no subscriptions here"}}`)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// TestTaskWaitFinished: `parley task wait` on a finished task shows it
// without subscribing, so an agent that refuses the subscription does not
// make the wait fail.
func TestTaskWaitFinished(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t, &testkit.Options{Quiet: true, Wrap: refuseSubscribe})
	out, _ := mustRun(t, 0, "send", srv.URL, "hello", "--binding", "jsonrpc", "--json")
	id := field(jsonOf(t, out), "task", "id").(string)
	out, _ = mustRun(t, 0, "task", "wait", srv.URL, id, "--binding", "jsonrpc")
	contains(t, "task wait", out, id, "COMPLETED")
	// Subscribing is still refused: the wait did not go that way.
	_, errs := mustRun(t, 1, "task", "subscribe", srv.URL, id, "--binding", "jsonrpc")
	contains(t, "task subscribe stderr", errs, "no subscriptions here")
}
