package a2ahttp_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/testkit"
)

// limitsEnv is a real loopback server: a2ahttp in front of the conformance
// agent, JSON-RPC at /rpc and HTTP+JSON at /rest.
type limitsEnv struct {
	url    string
	client *http.Client
	ids    atomic.Int64
}

// defaultMaxBody is a2ahttp's documented default body limit (10 MiB).
const defaultMaxBody = 10 << 20

func startLimits(t testing.TB) *limitsEnv {
	t.Helper()
	s := testkit.StartServer(t, &testkit.Options{Quiet: true, Interfaces: func(string) []*a2a.AgentInterface {
		return []*a2a.AgentInterface{
			{Url: "http://127.0.0.1/rpc", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.ProtocolVersion},
			{Url: "http://127.0.0.1/rest", ProtocolBinding: a2a.BindingHTTPJSON, ProtocolVersion: a2a.ProtocolVersion},
		}
	}})
	client := s.HTTP.Client()
	client.Timeout = 30 * time.Second
	return &limitsEnv{url: s.URL, client: client}
}

// limitsReply is a decoded HTTP answer.
type limitsReply struct {
	status int
	ct     string
	body   []byte
	obj    map[string]any
}

func (e *limitsEnv) post(t testing.TB, path, contentType string, body io.Reader) limitsReply {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.url+path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("A2A-Version", "1.0")
	req.Header.Set("Content-Type", contentType)
	res, err := e.client.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("POST %s: reading the answer: %v", path, err)
	}
	r := limitsReply{status: res.StatusCode, ct: res.Header.Get("Content-Type"), body: b}
	if err := json.Unmarshal(b, &r.obj); err != nil {
		t.Fatalf("POST %s: answer is not a JSON object (%v): %.300q", path, err, b)
	}
	return r
}

// rpc posts a JSON-RPC body and returns the answer, which must be an
// HTTP 200 JSON-RPC 2.0 response.
func (e *limitsEnv) rpc(t testing.TB, body io.Reader) limitsReply {
	t.Helper()
	r := e.post(t, "/rpc", "application/json", body)
	if r.status != http.StatusOK || r.obj["jsonrpc"] != "2.0" {
		t.Fatalf("JSON-RPC answer: HTTP %d %.300s", r.status, r.body)
	}
	return r
}

// rpcErr checks a JSON-RPC error answer and returns its code and message.
func rpcErr(t testing.TB, r limitsReply) (int, string) {
	t.Helper()
	e, ok := r.obj["error"].(map[string]any)
	if !ok {
		t.Fatalf("want a JSON-RPC error, got %.300s", r.body)
	}
	code, _ := e["code"].(float64)
	msg, _ := e["message"].(string)
	if msg == "" {
		t.Errorf("error without a message: %.300s", r.body)
	}
	if _, ok := e["data"].([]any); !ok {
		t.Errorf("error.data is not an array: %.300s", r.body)
	}
	return int(code), msg
}

// restErr checks an HTTP+JSON error answer and returns its message.
func restErr(t testing.TB, r limitsReply, status int) string {
	t.Helper()
	if r.status != status {
		t.Fatalf("HTTP status %d, want %d: %.300s", r.status, status, r.body)
	}
	if r.ct != "application/a2a+json" {
		t.Errorf("Content-Type %q, want application/a2a+json", r.ct)
	}
	e, ok := r.obj["error"].(map[string]any)
	if !ok || len(r.obj) != 1 {
		t.Fatalf(`want {"error":{...}}, got %.300s`, r.body)
	}
	if code, _ := e["code"].(float64); int(code) != status {
		t.Errorf("error.code %v, want %d", e["code"], status)
	}
	msg, _ := e["message"].(string)
	if s, _ := e["status"].(string); s == "" || msg == "" {
		t.Errorf("error without status or message: %.300s", r.body)
	}
	if _, ok := e["details"].([]any); !ok {
		t.Errorf("error.details is not an array: %.300s", r.body)
	}
	return msg
}

func (e *limitsEnv) nextID() string { return "limits-" + strconv.FormatInt(e.ids.Add(1), 10) }

// sendParams is a SendMessageRequest with one text part.
func sendParams(id, text string) string {
	return fmt.Sprintf(`{"message":{"messageId":%q,"role":"ROLE_USER","parts":[{"text":%q}]}}`, id, text)
}

// checkServing sends an ordinary SendMessage on both bindings and checks
// the completed echo task.
func (e *limitsEnv) checkServing(t testing.TB) {
	t.Helper()
	text := "still here " + e.nextID()
	r := e.rpc(t, strings.NewReader(`{"jsonrpc":"2.0","id":"after","method":"SendMessage","params":`+sendParams(e.nextID(), text)+`}`))
	if r.obj["id"] != "after" {
		t.Errorf("JSON-RPC id %v, want after", r.obj["id"])
	}
	checkEchoTask(t, "JSON-RPC", r.obj["result"], text)

	r = e.post(t, "/rest/message:send", "application/a2a+json", strings.NewReader(sendParams(e.nextID(), text)))
	if r.status != http.StatusOK {
		t.Fatalf("REST SendMessage: HTTP %d %.300s", r.status, r.body)
	}
	checkEchoTask(t, "REST", r.obj, text)
}

func checkEchoTask(t testing.TB, binding string, result any, text string) {
	t.Helper()
	task, _ := result.(map[string]any)["task"].(map[string]any)
	status, _ := task["status"].(map[string]any)
	if status["state"] != "TASK_STATE_COMPLETED" {
		t.Fatalf("%s SendMessage: want a completed task, got %v", binding, result)
	}
	arts, _ := task["artifacts"].([]any)
	if len(arts) != 1 || !strings.Contains(fmt.Sprint(arts[0]), text) {
		t.Errorf("%s SendMessage: artifacts %v, want one echoing %q", binding, arts, text)
	}
}

// hugeSend is a well-formed SendMessage (params, or a JSON-RPC request when
// rpc is set) of about size bytes: the size alone makes it unacceptable.
func hugeSend(size int, rpc bool) []byte {
	head := `{"message":{"messageId":"huge","role":"ROLE_USER","parts":[{"text":"`
	tail := `"}]}}`
	if rpc {
		head = `{"jsonrpc":"2.0","id":"huge","method":"SendMessage","params":` + head
		tail += `}`
	}
	b := make([]byte, 0, size)
	b = append(b, head...)
	b = append(b, bytes.Repeat([]byte("x"), size-len(head)-len(tail))...)
	return append(b, tail...)
}

// unsized hides the length of a reader, so the client streams the body
// chunked and the server only learns its size by reading it.
type unsized struct{ r io.Reader }

func (u unsized) Read(p []byte) (int, error) { return u.r.Read(p) }

func TestOversizedBodyRefused(t *testing.T) {
	e := startLimits(t)
	const size = 20 << 20
	limit := strconv.Itoa(defaultMaxBody)
	for _, chunked := range []bool{false, true} {
		body := func(rpc bool) io.Reader {
			r := bytes.NewReader(hugeSend(size, rpc))
			if chunked {
				return unsized{r}
			}
			return r
		}
		t.Run(fmt.Sprintf("JSONRPC/chunked=%v", chunked), func(t *testing.T) {
			r := e.rpc(t, body(true))
			code, msg := rpcErr(t, r)
			if code != int(a2a.CodeInvalidRequest) {
				t.Errorf("code %d, want %d", code, a2a.CodeInvalidRequest)
			}
			if !strings.Contains(msg, limit) {
				t.Errorf("message %q does not name the limit (%s bytes)", msg, limit)
			}
			if r.obj["id"] != nil {
				t.Errorf("id %v, want null (the body was not read)", r.obj["id"])
			}
			e.checkServing(t)
		})
		t.Run(fmt.Sprintf("REST/chunked=%v", chunked), func(t *testing.T) {
			r := e.post(t, "/rest/message:send", "application/a2a+json", body(false))
			msg := restErr(t, r, http.StatusRequestEntityTooLarge)
			if !strings.Contains(msg, limit) {
				t.Errorf("message %q does not name the limit (%s bytes)", msg, limit)
			}
			if st, _ := r.obj["error"].(map[string]any)["status"].(string); st != "RESOURCE_EXHAUSTED" {
				t.Errorf("status %q, want RESOURCE_EXHAUSTED", st)
			}
			e.checkServing(t)
		})
	}
	// A body just under the limit is read and judged on its content (here
	// a GetTask padded with JSON whitespace).
	t.Run("JSONRPC/just-under", func(t *testing.T) {
		req := []byte(`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"no-such-task"}}`)
		body := append(bytes.Repeat([]byte(" "), defaultMaxBody-len(req)), req...)
		code, msg := rpcErr(t, e.rpc(t, bytes.NewReader(body)))
		if code != int(a2a.CodeTaskNotFound) {
			t.Errorf("a body of exactly the limit got %d %q, want TaskNotFound", code, msg)
		}
	})
}

// deep returns n nested open/close pairs.
func deep(open, close string, n int) string {
	return strings.Repeat(open, n) + strings.Repeat(close, n)
}

func TestJSONRPCBadRequests(t *testing.T) {
	e := startLimits(t)
	tests := []struct {
		name string
		body string
		code a2a.Code
		want string // a word the message must contain
	}{
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}]`, a2a.CodeInvalidRequest, "batch"},
		{"empty batch", ` []`, a2a.CodeInvalidRequest, "batch"},
		{"notification", `{"jsonrpc":"2.0","method":"SendMessage","params":` + sendParams("n-1", "hi") + `}`, a2a.CodeInvalidRequest, "id"},
		{"invalid JSON", `{"jsonrpc":"2.0","id":1,"method":`, a2a.CodeParseError, "JSON"},
		{"not JSON", `hello`, a2a.CodeParseError, "JSON"},
		{"empty body", ``, a2a.CodeParseError, ""},
		{"unknown method", `{"jsonrpc":"2.0","id":1,"method":"message/sendd","params":{}}`, a2a.CodeMethodNotFound, "message/sendd"},
		{"params array", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":["x"]}`, a2a.CodeInvalidParams, "params"},
		{"params string", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":"x"}`, a2a.CodeInvalidParams, "params"},
		{"params number", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":1}`, a2a.CodeInvalidParams, "params"},
		{"wrong version", `{"jsonrpc":"1.0","id":1,"method":"GetTask","params":{"id":"x"}}`, a2a.CodeInvalidRequest, "jsonrpc"},
		{"object id", `{"jsonrpc":"2.0","id":{},"method":"GetTask","params":{"id":"x"}}`, a2a.CodeInvalidRequest, "id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, msg := rpcErr(t, e.rpc(t, strings.NewReader(tt.body)))
			if code != int(tt.code) {
				t.Errorf("code %d (%q), want %d", code, msg, tt.code)
			}
			if !strings.Contains(strings.ToLower(msg), strings.ToLower(tt.want)) {
				t.Errorf("message %q does not mention %q", msg, tt.want)
			}
		})
	}
	e.checkServing(t)
}

// TestDeeplyNestedJSON: nesting far beyond any real request is refused
// with an error, on both bindings, and the server goes on serving.
func TestDeeplyNestedJSON(t *testing.T) {
	e := startLimits(t)
	const n = 100_000
	bodies := map[string]string{
		"arrays in params":       `{"metadata":{"x":` + deep("[", "]", n) + `},"message":{"messageId":"d-1","role":"ROLE_USER","parts":[{"text":"hi"}]}}`,
		"objects in params":      `{"metadata":` + strings.Repeat(`{"a":`, n) + `1` + strings.Repeat("}", n) + `,"message":{"messageId":"d-2","role":"ROLE_USER","parts":[{"text":"hi"}]}}`,
		"arrays in unknown":      `{"unknown":` + deep("[", "]", n) + `,"message":{"messageId":"d-3","role":"ROLE_USER","parts":[{"text":"hi"}]}}`,
		"arrays in a data part":  `{"message":{"messageId":"d-4","role":"ROLE_USER","parts":[{"data":` + deep("[", "]", n) + `}]}}`,
		"unclosed arrays":        `{"metadata":{"x":` + strings.Repeat("[", n) + `}}`,
		"moderate (100) nesting": `{"metadata":{"x":` + deep("[", "]", 100) + `},"message":{"messageId":"d-5","role":"ROLE_USER","parts":[{"text":"hi"}]}}`,
	}
	for name, params := range bodies {
		t.Run("JSONRPC/"+name, func(t *testing.T) {
			r := e.rpc(t, strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"SendMessage","params":`+params+`}`))
			code, msg := rpcErr(t, r)
			t.Logf("%d %s", code, msg)
			switch a2a.Code(code) {
			case a2a.CodeParseError, a2a.CodeInvalidRequest, a2a.CodeInvalidParams:
			default:
				t.Errorf("code %d (%q), want a parse, request or params error", code, msg)
			}
		})
		t.Run("REST/"+name, func(t *testing.T) {
			r := e.post(t, "/rest/message:send", "application/a2a+json", strings.NewReader(params))
			t.Log(restErr(t, r, http.StatusBadRequest))
		})
	}
	e.checkServing(t)
}
