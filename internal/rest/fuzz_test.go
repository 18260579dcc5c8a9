package rest_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/rest"
	"parley.dev/parley/internal/testkit"
)

// fuzzMethods are the HTTP methods a fuzz input picks from.
var fuzzMethods = []string{"GET", "POST", "DELETE", "PUT", "PATCH", "HEAD", "OPTIONS"}

// fuzzContentTypes are the Content-Type headers a fuzz input picks from.
var fuzzContentTypes = []string{"application/a2a+json", "application/json", "", "text/plain", "application/json; charset=utf-8", ";;bad"}

// newConformanceHandler returns a REST handler in front of a real core
// running the conformance agent on a memory store, logging nowhere.
func newConformanceHandler(tb testing.TB) http.Handler {
	tb.Helper()
	core := testkit.FuzzCore(tb, &a2a.AgentInterface{Url: "http://127.0.0.1", ProtocolBinding: a2a.BindingHTTPJSON, ProtocolVersion: a2a.ProtocolVersion})
	return rest.NewHandler(core, &rest.Options{KeepAlive: -1, Logger: testkit.DiscardLogger})
}

type fuzzSeed struct {
	method, path, query, body string
	ct                        uint8
}

const sendBody = `{"message":{"messageId":"%s","role":"ROLE_USER","parts":[{"text":"%s"}]}}`

func send(id, text string) string {
	return strings.Replace(strings.Replace(sendBody, "%s", id, 1), "%s", text, 1)
}

var fuzzSeeds = []fuzzSeed{
	// every route, well formed
	{"POST", "/message:send", "", send("m-1", "hello"), 0},
	{"POST", "/message:send", "", send("m-2", "message"), 1},
	{"POST", "/message:send", "", send("m-3", "input-required"), 0},
	{"POST", "/message:send", "", `{"message":{"message_id":"m-4","role":"ROLE_USER","parts":[{"text":"slow 10"}]},"configuration":{"returnImmediately":true,"historyLength":1}}`, 0},
	{"POST", "/message:stream", "", send("m-5", "stream 3"), 0},
	// the 1.1 preview's conditional send (cleared from a 1.0 call, decoded all the same)
	{"POST", "/message:send", "", `{"message":{"messageId":"m-g1","taskId":"no-such-task","role":"ROLE_USER","parts":[{"text":"hi"}]},"configuration":{"ifGenerationMatch":"3"}}`, 0},
	{"POST", "/message:stream", "", `{"message":{"messageId":"m-g2","role":"ROLE_USER","parts":[{"text":"hi"}]},"configuration":{"ifGenerationMatch":"1e3"}}`, 0},
	{"POST", "/message:stream", "", send("m-6", "message"), 0},
	{"POST", "/acme/message:send", "", send("m-7", "reject"), 0},
	{"GET", "/tasks/no-such-task", "historyLength=3", "", 2},
	{"GET", "/tasks/no-such-task", "currentGeneration=3&historyLength=1", "", 2},
	// the 1.1 timeline's length (cleared from a 1.0 call, decoded all the same)
	{"GET", "/tasks/no-such-task", "timelineLength=2&historyLength=1", "", 2},
	{"GET", "/tasks", "timeline_length=0&includeArtifacts=true", "", 2},
	{"POST", "/message:send", "", `{"message":{"messageId":"m-t1","role":"ROLE_USER","parts":[{"text":"hi"}]},"configuration":{"timelineLength":-1}}`, 0},
	{"GET", "/acme/tasks/no-such-task", "current_generation=0", "", 2},
	{"GET", "/tasks", "pageSize=10&status=TASK_STATE_COMPLETED&includeArtifacts=true&statusTimestampAfter=2026-01-01T00:00:00Z", "", 2},
	{"GET", "/acme/tasks", "context_id=c&page_size=1", "", 2},
	{"POST", "/tasks/no-such-task:cancel", "", "", 2},
	{"POST", "/tasks/no-such-task:cancel", "", `{"id":"no-such-task"}`, 0},
	{"GET", "/tasks/no-such-task:subscribe", "", "", 2},
	{"POST", "/acme/tasks/no-such-task:subscribe", "", `{}`, 0},
	{"POST", "/tasks/t/pushNotificationConfigs", "", `{"url":"https://hooks.example/a","token":"tok"}`, 0},
	{"GET", "/tasks/t/pushNotificationConfigs/c", "", "", 2},
	{"GET", "/tasks/t/pushNotificationConfigs", "pageSize=5", "", 2},
	{"DELETE", "/tasks/t/pushNotificationConfigs/c", "", "", 2},
	{"GET", "/extendedAgentCard", "", "", 2},
	{"GET", "/tasks", "A2A-Version=1.0", "", 2},
	// bad parameters
	{"POST", "/message:send", "", `{}`, 0},
	{"POST", "/message:send", "", ``, 0},
	{"POST", "/message:send", "", `[1]`, 0},
	{"POST", "/message:send", "", `{"message":{"messageId":"m-8","role":"user","parts":[{"text":"hi"}]}}`, 0},
	{"POST", "/message:send", "", `{"message":{"messageId":"m-9","role":"ROLE_USER","parts":[{"text":"a","raw":"aGk="}]}}`, 0},
	{"POST", "/message:send", "", `{"message":{"messageId":"m-10","role":"ROLE_USER","parts":[{"text":"hi"}]}`, 0},
	{"POST", "/message:send", "", send("m-11", "hi"), 3},
	{"POST", "/message:send", "", send("m-12", "hi"), 5},
	{"POST", "/message:send", "message=x&configuration.historyLength=1", send("m-13", "hi"), 0},
	{"GET", "/tasks", "pageSize=0&historyLength=-1&pageToken=bogus", "", 2},
	{"GET", "/tasks", "pageSize=abc&status=completed&statusTimestampAfter=yesterday", "", 2},
	{"GET", "/tasks", "statusTimestampAfter=0000-01-01T00:00:00Z", "", 2},
	{"GET", "/tasks", "%zz=1&;&=&a=%", "", 2},
	{"GET", "/tasks/no-such-task", "currentGeneration=abc", "", 2},
	{"GET", "/tasks/no-such-task", "currentGeneration=9223372036854775808&currentGeneration=-1", "", 2},
	{"GET", "/tasks/no-such-task", "currentGeneration=1e3", "", 2},
	{"GET", "/tasks/no-such-task", "timelineLength=2147483648&timelineLength=x", "", 2},
	{"GET", "/tasks/a%2Fb", "", "", 2},
	{"GET", "/tasks/a%3Ab", "", "", 2},
	{"GET", "/tasks/%", "", "", 2},
	{"GET", "/tasks/", "", "", 2},
	{"POST", "/tasks/:cancel", "", "", 2},
	{"POST", "/tasks/x:cancel", "", `{"id":"y"}`, 0},
	{"POST", "/acme/tasks/x:cancel", "", `{"tenant":"other"}`, 0},
	{"POST", "/tasks/t/pushNotificationConfigs", "", `{"url":"ftp://x"}`, 0},
	{"POST", "/tasks/t/pushNotificationConfigs", "", `{"taskId":"u","url":"https://x.example"}`, 0},
	// wrong routes and verbs
	{"DELETE", "/tasks/x", "", "", 2},
	{"PUT", "/message:send", "", send("m-14", "hi"), 0},
	{"GET", "/message:send", "", "", 2},
	{"HEAD", "/tasks", "", "", 2},
	{"OPTIONS", "/", "", "", 2},
	{"GET", "/", "", "", 2},
	{"GET", "", "", "", 2},
	{"GET", "//tasks", "", "", 2},
	{"GET", "/a/b/c/d/e/f/g", "", "", 2},
	{"GET", "/.well-known/agent-card.json", "", "", 2},
	{"GET", "/tasks/\xff\x00", "", "", 2},
	{"POST", "/message:send", "", "\ufeff" + send("m-15", "hi"), 0},
	{"POST", "/message:send", "", `{"metadata":` + strings.Repeat(`{"a":`, 300) + `1` + strings.Repeat(`}`, 300) + `,"message":{"messageId":"m-16","role":"ROLE_USER","parts":[{"text":"hi"}]}}`, 0},
	{"POST", "/message:send", "", `{"unknown":` + strings.Repeat(`[`, 3000) + strings.Repeat(`]`, 3000) + `}`, 0},
}

func FuzzRequest(f *testing.F) {
	for _, s := range fuzzSeeds {
		m := uint8(0)
		for i, x := range fuzzMethods {
			if x == s.method {
				m = uint8(i)
			}
		}
		f.Add(m, s.path, s.query, []byte(s.body), s.ct)
	}
	h := newConformanceHandler(f)
	f.Fuzz(func(t *testing.T, method uint8, path, query string, body []byte, ct uint8) {
		checkExchange(t, h, fuzzMethods[int(method)%len(fuzzMethods)], path, query, body, fuzzContentTypes[int(ct)%len(fuzzContentTypes)])
	})
}

// requestURL turns a fuzzed path and query into a request URL. A path that
// parses as a request URI keeps its escapes (so %2F and %3A reach the
// router as sent); any other string becomes the decoded path.
func requestURL(path, query string) *url.URL {
	p := "/" + strings.TrimPrefix(path, "/")
	u := &url.URL{Path: p}
	if pu, err := url.ParseRequestURI(p); err == nil && pu.RawQuery == "" && !pu.ForceQuery && pu.Fragment == "" && pu.Host == "" {
		u = &url.URL{Path: pu.Path, RawPath: pu.RawPath}
	}
	u.RawQuery = query
	return u
}

// checkExchange sends one request to h and checks the invariants of every
// HTTP+JSON answer: it comes promptly; a failure is a 4xx or 5xx status
// with an application/a2a+json google.rpc.Status body whose code is that
// status; a success is an application/a2a+json JSON object, or an SSE stream
// whose data lines are StreamResponse objects (or, after `event: error`, an
// error object); and an internal error only comes from the request's own
// deadline.
func checkExchange(t *testing.T, h http.Handler, method, path, query string, body []byte, contentType string) (status int, resp string) {
	req := httptest.NewRequest(method, "/", bytes.NewReader(body))
	req.URL = requestURL(path, query)
	req.RequestURI = req.URL.RequestURI()
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	rec, timedOut := testkit.Exchange(t, h, req)
	res := rec.Result()
	ct := res.Header.Get("Content-Type")
	out := rec.Body.String()
	where := method + " " + req.URL.String()
	switch res.StatusCode {
	case 200:
	case 400, 401, 404, 405, 413:
	case 500:
		if !timedOut {
			t.Fatalf("%s: internal error for a request that did not time out: %s", where, out)
		}
	default:
		t.Fatalf("%s: unexpected HTTP status %d: %s", where, res.StatusCode, out)
	}
	if res.StatusCode != 200 {
		if ct != rest.ContentType {
			t.Fatalf("%s: error Content-Type %q, want %s", where, ct, rest.ContentType)
		}
		checkErrorBody(t, where, []byte(out), res.StatusCode)
		return res.StatusCode, out
	}
	if strings.HasPrefix(ct, "text/event-stream") {
		checkStream(t, where, out, timedOut)
		return res.StatusCode, out
	}
	if ct != rest.ContentType {
		t.Fatalf("%s: Content-Type %q, want %s", where, ct, rest.ContentType)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &obj); err != nil {
		t.Fatalf("%s: success body is not a JSON object: %q", where, out)
	}
	return res.StatusCode, out
}

// grpcNames are the google.rpc.Code names an error may carry.
var grpcNames = map[string]bool{
	"INVALID_ARGUMENT": true, "FAILED_PRECONDITION": true, "NOT_FOUND": true, "UNIMPLEMENTED": true,
	"INTERNAL": true, "UNAUTHENTICATED": true, "RESOURCE_EXHAUSTED": true,
}

// checkErrorBody checks {"error":{"code","status","message","details"}}.
// status 0 accepts any error code.
func checkErrorBody(t *testing.T, where string, b []byte, status int) {
	t.Helper()
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil || len(top) != 1 || top["error"] == nil {
		t.Fatalf("%s: error body is not {\"error\":{...}}: %q", where, b)
	}
	var e struct {
		Code    *int             `json:"code"`
		Status  *string          `json:"status"`
		Message *string          `json:"message"`
		Details []map[string]any `json:"details"`
	}
	if err := json.Unmarshal(top["error"], &e); err != nil {
		t.Fatalf("%s: error object %s: %v", where, top["error"], err)
	}
	if e.Code == nil || e.Status == nil || e.Message == nil || *e.Message == "" || e.Details == nil {
		t.Fatalf("%s: error object lacks code, status, message or details: %s", where, b)
	}
	if status != 0 && *e.Code != status {
		t.Fatalf("%s: error code %d in a %d response: %s", where, *e.Code, status, b)
	}
	if !grpcNames[*e.Status] {
		t.Fatalf("%s: unknown status %q: %s", where, *e.Status, b)
	}
	for _, d := range e.Details {
		if d["@type"] == "type.googleapis.com/google.rpc.ErrorInfo" {
			if d["domain"] != a2a.DomainA2A && d["domain"] != a2a.DomainParley || d["reason"] == "" {
				t.Fatalf("%s: malformed ErrorInfo: %s", where, b)
			}
			if _, ok := a2a.CodeForReason(d["reason"].(string)); !ok {
				t.Fatalf("%s: unknown reason: %s", where, b)
			}
		}
	}
}

// checkStream checks an SSE body: each data line is a StreamResponse with
// exactly one payload, or an error object after `event: error`.
func checkStream(t *testing.T, where, body string, timedOut bool) {
	t.Helper()
	events := testkit.ReadSSE(t, strings.NewReader(body), "error")
	if len(events) == 0 {
		t.Fatalf("%s: a stream without events: %q", where, body)
	}
	for _, ev := range events {
		data := ev.Data
		if ev.Name == "error" {
			checkErrorBody(t, where, data, 0)
			if !timedOut && strings.Contains(string(data), `"INTERNAL"`) {
				t.Fatalf("%s: internal error in a stream that did not time out: %s", where, data)
			}
			continue
		}
		var top map[string]json.RawMessage
		if err := json.Unmarshal(data, &top); err != nil || len(top) != 1 {
			t.Fatalf("%s: data line is not a one-member JSON object: %s", where, data)
		}
		var sr a2a.StreamResponse
		if err := a2a.Unmarshal(data, &sr); err != nil || sr.Payload == nil {
			t.Fatalf("%s: data line is not a StreamResponse (%v): %s", where, err, data)
		}
	}
}

// TestFuzzSeedsReachOperations makes sure the seed corpus is worth its
// name: a good part of it must get past routing and decoding.
func TestFuzzSeedsReachOperations(t *testing.T) {
	h := newConformanceHandler(t)
	ok := 0
	for _, s := range fuzzSeeds {
		status, _ := checkExchange(t, h, s.method, s.path, s.query, []byte(s.body), fuzzContentTypes[int(s.ct)%len(fuzzContentTypes)])
		if status == 200 {
			ok++
		}
	}
	if ok < 8 {
		t.Errorf("only %d of %d seeds succeeded", ok, len(fuzzSeeds))
	}
}
