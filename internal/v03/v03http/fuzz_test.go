package v03http

import (
	"net/http"
	"strings"
	"testing"
)

// FuzzRoute: the v0.3 HTTP+JSON router never panics, and a route it
// matches names an operation and, below /v1/tasks/, a task.
func FuzzRoute(f *testing.F) {
	for _, s := range []string{"/v1/message:send", "/v1/message:stream", "/v1/card", "/v1/tasks/t1", "/v1/tasks/t1:cancel",
		"/v1/tasks/t%2F1:subscribe", "/v1/tasks/t1/pushNotificationConfigs", "/v1/tasks/t1/pushNotificationConfigs/c1",
		"/v1/tasks/", "/v1/tasks/%zz", "/v1/tasks/t1/other/c", "/v1/tasks/t1/pushNotificationConfigs/"} {
		f.Add("GET", s)
		f.Add("POST", s)
		f.Add("DELETE", s)
	}
	f.Fuzz(func(t *testing.T, method, path string) {
		r, allow, ok := match(method, path)
		if !ok {
			return
		}
		if r.op == "" && allow == "" {
			t.Fatalf("%s %s: matched without an operation or allowed verbs", method, path)
		}
		if r.op != "" && strings.HasPrefix(path, "/v1/tasks/") && r.taskID == "" {
			t.Fatalf("%s %s: %s without a task id", method, path, r.op)
		}
		if r.op != "" && method != http.MethodGet && method != http.MethodHead && method != http.MethodPost && method != http.MethodDelete {
			t.Fatalf("%s %s: matched verb %s", method, path, method)
		}
	})
}
