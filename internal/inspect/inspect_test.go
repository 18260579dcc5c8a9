package inspect_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/inspect"
	"parley.dev/parley/internal/testkit"
	"parley.dev/parley/server"
)

// start serves an inspector on a loopback port and returns its base URL
// and token.
func start(t *testing.T) (base, token string) {
	t.Helper()
	ln, err := inspect.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	s := inspect.New(inspect.Options{Logger: testkit.DiscardLogger})
	go s.Serve(ln)
	return "http://" + ln.Addr().String(), s.Token()
}

func do(t *testing.T, method, u, token, body string, mutate func(*http.Request)) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(method, u, strings.NewReader(body))
	if token != "" {
		req.Header.Set(inspect.TokenHeader, token)
	}
	if mutate != nil {
		mutate(req)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// TestGuards: the API needs the token; a Host that is not loopback (DNS
// rebinding) is refused; the listener is loopback only.
func TestGuards(t *testing.T) {
	base, token := start(t)
	if resp, _ := do(t, "GET", base+"/api/info", "", "", nil); resp.StatusCode != http.StatusForbidden {
		t.Errorf("no token: %d, want 403", resp.StatusCode)
	}
	if resp, _ := do(t, "GET", base+"/api/info", "wrong", "", nil); resp.StatusCode != http.StatusForbidden {
		t.Errorf("wrong token: %d, want 403", resp.StatusCode)
	}
	resp, body := do(t, "GET", base+"/api/info", token, "", nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, base+"/push/") {
		t.Errorf("info: %d %s", resp.StatusCode, body)
	}
	if resp, _ := do(t, "GET", base+"/api/info", token, "", func(r *http.Request) { r.Host = "attacker.example:80" }); resp.StatusCode != http.StatusMisdirectedRequest {
		t.Errorf("foreign Host: %d, want 421", resp.StatusCode)
	}
	if resp, _ := do(t, "GET", base+"/", "", "", func(r *http.Request) { r.Host = "localhost" }); resp.StatusCode != http.StatusOK ||
		!strings.Contains(resp.Header.Get("Content-Security-Policy"), "default-src 'self'") {
		t.Errorf("page via localhost: %d, CSP %q", resp.StatusCode, resp.Header.Get("Content-Security-Policy"))
	}
	if _, err := inspect.Listen("0.0.0.0:0"); err == nil {
		t.Error("Listen(0.0.0.0:0) succeeded, want a refusal")
	}
	resp, body = do(t, "POST", base+"/api/call", token, `{"url":"http://127.0.0.1:1","method":"NoSuchMethod"}`, nil)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "unknown method") {
		t.Errorf("unknown method: %d %s", resp.StatusCode, body)
	}
	resp, body = do(t, "POST", base+"/api/call", token, `{"url":"http://127.0.0.1:1","method":"GetTask","request":{"id":7}}`, nil)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "not a valid GetTask request") {
		t.Errorf("bad request: %d %s", resp.StatusCode, body)
	}
}

// TestAssetsAreLocal: the page loads nothing from another origin.
func TestAssetsAreLocal(t *testing.T) {
	base, _ := start(t)
	remote := regexp.MustCompile(`(?i)(src|href)\s*=\s*["']?(https?:)?//|@import|url\(\s*["']?(https?:)?//|fetch\(\s*["'](https?:)?//`)
	for _, name := range []string{"/", "/app.js", "/style.css"} {
		resp, body := do(t, "GET", base+name, "", "", nil)
		if resp.StatusCode != http.StatusOK || len(body) < 100 {
			t.Fatalf("%s: %d, %d bytes", name, resp.StatusCode, len(body))
		}
		if m := remote.FindString(body); m != "" {
			t.Errorf("%s refers to another origin: %q", name, m)
		}
	}
}

// TestCallRecordsTraffic: a call through the API reaches the agent with
// the page's token and headers, and the traffic hides the token.
func TestCallRecordsTraffic(t *testing.T) {
	agent := testkit.StartServer(t, &testkit.Options{Quiet: true, Tokens: map[string]string{"s3cret": "alice"}})
	base, token := start(t)
	body := `{"url":"` + agent.URL + `","binding":"HTTP+JSON","token":"s3cret","headers":{"X-Trace":"t-1"},"method":"SendMessage",
		"request":{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"hello"}]}}}`
	resp, out := do(t, "POST", base+"/api/call", token, body, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("call: %d %s", resp.StatusCode, out)
	}
	var lines []map[string]json.RawMessage
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		lines = append(lines, m)
	}
	if len(lines) != 3 || lines[0]["interface"] == nil || lines[1]["result"] == nil || lines[2]["traffic"] == nil {
		t.Fatalf("lines %s, want interface, result, traffic", out)
	}
	if !bytes.Contains(lines[1]["result"], []byte("TASK_STATE_COMPLETED")) {
		t.Errorf("result %s", lines[1]["result"])
	}
	var traffic []inspect.Exchange
	if err := json.Unmarshal(lines[2]["traffic"], &traffic); err != nil {
		t.Fatal(err)
	}
	last := traffic[len(traffic)-1]
	if last.Method != "POST" || !strings.HasSuffix(last.URL, "/message:send") || last.Status != 200 ||
		last.RequestHeaders.Get("X-Trace") != "t-1" || last.RequestHeaders.Get("Authorization") != "Bearer ••••••••" ||
		!strings.Contains(last.RequestBody, `"m-1"`) || !strings.Contains(last.ResponseBody, "hello") {
		t.Fatalf("exchange %+v", last)
	}
	if strings.Contains(out, "s3cret") {
		t.Error("the token appears in the answer to the page")
	}
}

// TestPushReceiver: what arrives at the secret path is kept and judged;
// other paths are not found.
func TestPushReceiver(t *testing.T) {
	base, token := start(t)
	_, info := do(t, "GET", base+"/api/info", token, "", nil)
	var in struct{ PushURL string }
	if err := json.Unmarshal([]byte(info), &in); err != nil {
		t.Fatal(err)
	}
	if resp, _ := do(t, "POST", base+"/push/guess", "", `{}`, nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("wrong path: %d, want 404", resp.StatusCode)
	}
	do(t, "POST", in.PushURL, "", `{"statusUpdate":{"taskId":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED"}}}`, nil)
	do(t, "POST", in.PushURL, "", `{"nonsense":1}`, nil)
	_, list := do(t, "GET", base+"/api/push?after=0", token, "", nil)
	var got struct{ Notifications []inspect.Notification }
	if err := json.Unmarshal([]byte(list), &got); err != nil {
		t.Fatal(err)
	}
	n := got.Notifications
	if len(n) != 2 || !n[0].Valid || n[0].TaskID != "t1" || n[0].State != "TASK_STATE_COMPLETED" || n[1].Valid || n[1].Problem == "" {
		t.Fatalf("notifications %+v", n)
	}
	_, list = do(t, "GET", base+"/api/push?after=2", token, "", nil)
	if !strings.Contains(list, `"notifications":[]`) {
		t.Errorf("after 2: %s", list)
	}
}

// FuzzPushReceiver: no body makes the receiver fail or panic.
func FuzzPushReceiver(f *testing.F) {
	for _, s := range []string{`{"task":{"id":"x"}}`, `{"statusUpdate":{}}`, `{`, ``, "\x00\xff"} {
		f.Add([]byte(s))
	}
	s := inspect.New(inspect.Options{Logger: testkit.DiscardLogger})
	srv := httptest.NewServer(s)
	defer srv.Close()
	f.Fuzz(func(t *testing.T, b []byte) {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", "http://127.0.0.1/api/info", nil)
		req.Header.Set(inspect.TokenHeader, s.Token())
		s.ServeHTTP(rec, req)
		var in struct{ PushURL string }
		_ = json.Unmarshal(rec.Body.Bytes(), &in)
		u, _ := url.Parse(in.PushURL)
		rec = httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest("POST", "http://127.0.0.1"+u.Path, bytes.NewReader(b)))
		if rec.Code != http.StatusOK {
			t.Fatalf("status %d for %q", rec.Code, b)
		}
	})
}

// TestCallOverGRPC: the binding the page chooses is used; gRPC traffic is
// shown as binary frames with its trailers, and an A2A error comes back by
// its name.
func TestCallOverGRPC(t *testing.T) {
	agent := testkit.StartServer(t, &testkit.Options{Quiet: true})
	base, token := start(t)
	_, out := do(t, "POST", base+"/api/call", token, `{"url":"`+agent.URL+`","binding":"GRPC","method":"GetTask","request":{"id":"no-such-task"}}`, nil)
	var errLine struct {
		Error struct{ Code string }
	}
	var traffic struct{ Traffic []inspect.Exchange }
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || json.Unmarshal([]byte(lines[1]), &errLine) != nil || json.Unmarshal([]byte(lines[2]), &traffic) != nil {
		t.Fatalf("answer %s", out)
	}
	if errLine.Error.Code != "TaskNotFoundError" {
		t.Errorf("error %+v, want TaskNotFoundError", errLine.Error)
	}
	x := traffic.Traffic[len(traffic.Traffic)-1]
	if !strings.Contains(x.URL, "lf.a2a.v1.A2AService/GetTask") || !x.Binary || x.Trailers.Get("Grpc-Status") == "" {
		t.Errorf("exchange %+v: want the gRPC call, binary, with its trailers", x)
	}
}

// TestCallGetTaskTimeline: the task page's GetTask asks for the timeline
// (timelineLength, an A2A 1.1 member), which the inspector's client sends
// as a 1.1 call to an agent whose card lists 1.1: the task comes with its
// timeline, by generation; to an agent without 1.1 it goes as 1.0, and
// the task comes without one.
func TestCallGetTaskTimeline(t *testing.T) {
	for _, preview := range []bool{true, false} {
		agent := testkit.StartServer(t, &testkit.Options{Quiet: true, Mutate: func(_ *a2a.AgentCard, o *server.Options) {
			if preview {
				o.ProtocolVersions = []string{"1.1", a2a.ProtocolVersion}
			}
		}})
		base, token := start(t)
		_, out := do(t, "POST", base+"/api/call", token, `{"url":"`+agent.URL+`","binding":"JSONRPC","method":"SendMessage",
			"request":{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"hello"}]}}}`, nil)
		var sent struct {
			Result struct{ Task struct{ ID string } }
		}
		if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) < 2 || json.Unmarshal([]byte(lines[1]), &sent) != nil || sent.Result.Task.ID == "" {
			t.Fatalf("send: %s", out)
		}
		_, out = do(t, "POST", base+"/api/call", token, `{"url":"`+agent.URL+`","binding":"JSONRPC","method":"GetTask",
			"request":{"id":"`+sent.Result.Task.ID+`","timelineLength":1000}}`, nil)
		var got struct {
			Result struct {
				Timeline []struct {
					Generation string
					Message    *struct{ Role string }
				}
			}
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) < 2 || json.Unmarshal([]byte(lines[1]), &got) != nil {
			t.Fatalf("GetTask: %s", out)
		}
		tl := got.Result.Timeline
		switch {
		case preview && (len(tl) < 2 || tl[0].Generation != "1" || tl[0].Message == nil || tl[0].Message.Role != "ROLE_USER"):
			t.Errorf("1.1 agent: timeline %+v; want the user's message at 1, then the statuses", tl)
		case !preview && len(tl) != 0:
			t.Errorf("1.0 agent: timeline %+v; want none", tl)
		}
	}
}
