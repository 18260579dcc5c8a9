package rest_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"parley.dev/parley/internal/testkit"
)

// TestAcceptJSON: a REST response body (success or error, including a
// refusal by authentication and a refused stream) is application/json when
// the request's Accept header names application/json and not
// application/a2a+json; otherwise it stays application/a2a+json
// (docs/decisions.md#b8).
func TestAcceptJSON(t *testing.T) {
	t.Parallel()
	srv := testkit.StartServer(t, &testkit.Options{Quiet: true, Tokens: map[string]string{"tok": "alice"}})
	const send = `{"message":{"messageId":"m-accept","role":"ROLE_USER","parts":[{"text":"hello"}]}}`
	type req struct {
		name, method, path, body, token string
		status                          int
	}
	reqs := []req{
		{"send", "POST", "/message:send", send, "tok", 200},
		{"unknown task", "GET", "/tasks/no-such-task", "", "tok", 404},
		{"no route", "GET", "/nowhere", "", "tok", 404},
		{"unauthenticated", "GET", "/tasks/no-such-task", "", "", 401},
		{"refused stream", "GET", "/tasks/no-such-task:subscribe", "", "tok", 404},
	}
	for _, c := range []struct {
		accept []string
		want   string
	}{
		{nil, "application/a2a+json"},
		{[]string{"application/json"}, "application/json"},
		{[]string{"application/json, text/event-stream"}, "application/json"},
		{[]string{"application/json;q=0.5", "application/a2a+json"}, "application/a2a+json"},
		{[]string{"application/a2a+json, application/json"}, "application/a2a+json"},
		{[]string{"application/json, application/a2a+json;q=0"}, "application/json"},
		{[]string{"application/json;q=0"}, "application/a2a+json"},
		{[]string{"*/*"}, "application/a2a+json"},
	} {
		for _, r := range reqs {
			hr, err := http.NewRequest(r.method, srv.URL+r.path, strings.NewReader(r.body))
			if err != nil {
				t.Fatal(err)
			}
			hr.Header.Set("A2A-Version", "1.0")
			if r.body != "" {
				hr.Header.Set("Content-Type", "application/a2a+json")
			}
			if r.token != "" {
				hr.Header.Set("Authorization", "Bearer "+r.token)
			}
			for _, a := range c.accept {
				hr.Header.Add("Accept", a)
			}
			resp, err := http.DefaultClient.Do(hr)
			if err != nil {
				t.Fatalf("%s %s: %v", r.method, r.path, err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != r.status {
				t.Errorf("%s with Accept %q: status %d, want %d (%s)", r.name, c.accept, resp.StatusCode, r.status, body)
			}
			if got := resp.Header.Get("Content-Type"); got != c.want {
				t.Errorf("%s with Accept %q: Content-Type %q, want %q", r.name, c.accept, got, c.want)
			}
		}
	}
}
