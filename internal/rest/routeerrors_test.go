package rest_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/httpx"
)

// TestRouteErrors: a request that names no operation is MethodNotFoundError
// in the pairs of Google's error model: a path no operation has is 404
// NOT_FOUND, an operation's path under another verb 405 UNIMPLEMENTED with
// an Allow header (RFC 9110 §15.5.6). Both carry the ErrorInfo reason
// METHOD_NOT_FOUND, so a client reads them as MethodNotFoundError, never
// as TaskNotFoundError, which shares 404.
func TestRouteErrors(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(newConformanceHandler(t))
	defer srv.Close()
	for _, c := range []struct {
		method, path string
		status       int
		name, allow  string
	}{
		{"GET", "/nope", 404, "NOT_FOUND", ""},
		{"POST", "/message:sendd", 404, "NOT_FOUND", ""},
		{"GET", "/tasks/x/pushNotificationConfigs/y/z", 404, "NOT_FOUND", ""},
		{"POST", "/a/b/c/d/e/f/g/h/i", 404, "NOT_FOUND", ""},
		{"DELETE", "/tasks/x", 405, "UNIMPLEMENTED", "GET"},
		{"GET", "/message:send", 405, "UNIMPLEMENTED", "POST"},
		{"PUT", "/tasks/x:subscribe", 405, "UNIMPLEMENTED", "GET, POST"},
		{"PATCH", "/tenant-1/message:stream", 405, "UNIMPLEMENTED", "POST"},
	} {
		req, _ := http.NewRequest(c.method, srv.URL+c.path, nil)
		req.Header.Set("A2A-Version", "1.0")
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var got struct {
			Error struct {
				Code    int
				Status  string
				Details []struct {
					Type   string `json:"@type"`
					Reason string
				}
			}
		}
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatalf("%s %s: %v\n%s", c.method, c.path, err, body)
		}
		if resp.StatusCode != c.status || got.Error.Code != c.status || got.Error.Status != c.name || resp.Header.Get("Allow") != c.allow {
			t.Errorf("%s %s = %d (code %d, status %q, Allow %q), want %d %s, Allow %q\n%s", c.method, c.path,
				resp.StatusCode, got.Error.Code, got.Error.Status, resp.Header.Get("Allow"), c.status, c.name, c.allow, body)
		}
		if len(got.Error.Details) == 0 || got.Error.Details[0].Reason != "METHOD_NOT_FOUND" {
			t.Errorf("%s %s: details %+v, want an ErrorInfo with reason METHOD_NOT_FOUND", c.method, c.path, got.Error.Details)
		}
		if e := httpx.HTTPError(resp.StatusCode, resp.Header, body); !errors.Is(e, a2a.ErrMethodNotFound) {
			t.Errorf("%s %s: a client reads %v, want MethodNotFoundError", c.method, c.path, e)
		}
	}
}
