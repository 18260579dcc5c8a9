package v03http_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"parley.dev/parley/a2ahttp"
	"parley.dev/parley/internal/testkit"
)

// post sends a JSON body with an optional A2A-Version and returns the
// status and body.
func post(t *testing.T, url, version, body string) (int, string) {
	t.Helper()
	return do(t, http.MethodPost, url, version, body)
}

func do(t *testing.T, method, url, version, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if version != "" {
		req.Header.Set("A2A-Version", version)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// rpc calls a JSON-RPC method and returns the decoded response.
func rpc(t *testing.T, url, version, method, params string) map[string]any {
	t.Helper()
	_, body := post(t, url, version, `{"jsonrpc":"2.0","id":7,"method":"`+method+`","params":`+params+`}`)
	var out map[string]any
	if err := json.Unmarshal([]byte(body), &out); err != nil {
		t.Fatalf("%s: %v: %s", method, err, body)
	}
	return out
}

// errCode is the code of a JSON-RPC error response, 0 for a result.
func errCode(resp map[string]any) int {
	e, ok := resp["error"].(map[string]any)
	if !ok {
		return 0
	}
	return int(e["code"].(float64))
}

func result(t *testing.T, resp map[string]any) map[string]any {
	t.Helper()
	r, ok := resp["result"].(map[string]any)
	if !ok {
		t.Fatalf("no object result: %v", resp)
	}
	return r
}

const v03Send = `{"message":{"kind":"message","messageId":"%s","role":"user","parts":[{"kind":"text","text":"%s"}]}}`

func sendParams(id, text string) string {
	return strings.Replace(strings.Replace(v03Send, "%s", id, 1), "%s", text, 1)
}

func start(t *testing.T, httpOpts func(*a2ahttp.Options)) *testkit.Server {
	return testkit.StartServer(t, &testkit.Options{Quiet: true, HTTP: httpOpts})
}

// TestVersionRouting is decision B7 on the real wire: header absent, 0.3,
// 1.0 and 9.9 against a v0.3 and a v1.0 route on JSON-RPC and HTTP+JSON,
// with v0.3 on, and the v0.3 routes with it off.
func TestVersionRouting(t *testing.T) {
	t.Parallel()
	on := start(t, nil)
	off := start(t, func(o *a2ahttp.Options) { o.DisableV03 = true })
	const vns = -32009
	type row struct {
		version string
		v03     int // JSON-RPC code of tasks/get (0: served)
		v10     int // JSON-RPC code of GetTask
		restV03 int // HTTP status of GET /v1/tasks/{id}
		restV10 int // HTTP status of GET /tasks/{id}
	}
	// An unknown task: "served" shows as TaskNotFound (-32001 / 404).
	rows := []row{
		{"", -32001, vns, 404, 400},
		{"0.3", -32001, vns, 404, 400},
		{"0.3.2", -32001, vns, 404, 400},
		{"1.0", -32001, -32001, 404, 404},
		{"9.9", vns, vns, 400, 400},
	}
	for _, r := range rows {
		if c := errCode(rpc(t, on.URL, r.version, "tasks/get", `{"id":"nope"}`)); c != r.v03 {
			t.Errorf("v0.3 on, A2A-Version %q, tasks/get: code %d, want %d", r.version, c, r.v03)
		}
		if c := errCode(rpc(t, on.URL, r.version, "GetTask", `{"id":"nope"}`)); c != r.v10 {
			t.Errorf("v0.3 on, A2A-Version %q, GetTask: code %d, want %d", r.version, c, r.v10)
		}
		if s, body := do(t, "GET", on.URL+"/v1/tasks/nope", r.version, ""); s != r.restV03 {
			t.Errorf("v0.3 on, A2A-Version %q, GET /v1/tasks/nope: %d %s, want %d", r.version, s, body, r.restV03)
		}
		if s, body := do(t, "GET", on.URL+"/tasks/nope", r.version, ""); s != r.restV10 {
			t.Errorf("v0.3 on, A2A-Version %q, GET /tasks/nope: %d %s, want %d", r.version, s, body, r.restV10)
		}
		// v0.3 off: the v0.3 method is refused whatever the header.
		if c := errCode(rpc(t, off.URL, r.version, "tasks/get", `{"id":"nope"}`)); c != vns {
			t.Errorf("v0.3 off, A2A-Version %q, tasks/get: code %d, want %d", r.version, c, vns)
		}
	}
	resp := rpc(t, on.URL, "9.9", "tasks/get", `{"id":"nope"}`)
	if msg := resp["error"].(map[string]any)["message"].(string); !strings.Contains(msg, "0.3") || !strings.Contains(msg, "1.0") {
		t.Errorf("VersionNotSupported message %q does not list the served versions", msg)
	}
}

// TestCardBothGenerations: the card lists the 0.3 interfaces after the
// 1.0 ones and carries the v0.3 members; with v0.3 off it has neither.
func TestCardBothGenerations(t *testing.T) {
	t.Parallel()
	for _, v03on := range []bool{true, false} {
		s := start(t, func(o *a2ahttp.Options) { o.DisableV03 = !v03on })
		_, body := do(t, "GET", s.URL+a2ahttp.CardPath, "", "")
		var card map[string]any
		if err := json.Unmarshal([]byte(body), &card); err != nil {
			t.Fatal(err)
		}
		var versions []string
		for _, in := range card["supportedInterfaces"].([]any) {
			versions = append(versions, in.(map[string]any)["protocolVersion"].(string))
		}
		got := strings.Join(versions, ",")
		if v03on {
			if got != "1.0,1.0,1.0,0.3,0.3,0.3" {
				t.Errorf("interface versions %s, want the three 1.0 ones then the three at 0.3", got)
			}
			if card["protocolVersion"] != "0.3.0" || card["url"] != s.URL+"/" || card["preferredTransport"] != "JSONRPC" {
				t.Errorf("v0.3 members: protocolVersion %v url %v preferredTransport %v", card["protocolVersion"], card["url"], card["preferredTransport"])
			}
			if ai, _ := card["additionalInterfaces"].([]any); len(ai) != 3 {
				t.Errorf("additionalInterfaces %v, want the three 0.3 interfaces", card["additionalInterfaces"])
			}
		} else {
			if got != "1.0,1.0,1.0" || card["url"] != nil || card["protocolVersion"] != nil {
				t.Errorf("v0.3 off: interfaces %s, url %v, protocolVersion %v", got, card["url"], card["protocolVersion"])
			}
		}
	}
}

// sseStream opens an SSE response; next returns the data of the next
// event ("", false at the end).
func sseStream(t *testing.T, url, version, body string) (next func() (string, bool)) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	if version != "" {
		req.Header.Set("A2A-Version", version)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("Content-Type %q: %s", ct, b)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	return func() (string, bool) {
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				return d, true
			}
		}
		return "", false
	}
}

// sseEvents reads the data of every event of an SSE response.
func sseEvents(t *testing.T, url, version, body string) []string {
	t.Helper()
	next := sseStream(t, url, version, body)
	var out []string
	for d, ok := next(); ok; d, ok = next() {
		out = append(out, d)
	}
	return out
}

// TestEscapedMethodName: a v0.3 method name whose '/' is written as a JSON
// escape is still routed to v0.3 (the router skips decoding only bodies
// that cannot name a v0.3 method), and a v1.0 call without any '/' is
// served by v1.0.
func TestEscapedMethodName(t *testing.T) {
	s := start(t, nil)
	for _, method := range []string{`tasks\/get`, `tasks\u002fget`, `tasks\u002Fget`} {
		// TaskNotFoundError is -32001 in both versions; a v0.3 error object
		// is told by its message, a v1.0 answer to an unknown method by -32601.
		if code := errCode(rpc(t, s.URL+"/", "", method, `{"id":"nope"}`)); code != -32001 {
			t.Errorf("method %q: error code %d, want -32001 (v0.3 tasks/get of an unknown task)", method, code)
		}
	}
	if code := errCode(rpc(t, s.URL+"/", "1.0", "GetTask", `{"id":"nope"}`)); code != -32001 {
		t.Errorf("v1.0 GetTask of an unknown task: error code %d, want -32001", code)
	}
	if code := errCode(rpc(t, s.URL+"/", "1.0", "NoSuchMethod", `{}`)); code != -32601 {
		t.Errorf("v1.0 unknown method: error code %d, want -32601", code)
	}
}
