package a2ahttp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/a2ahttp"
	"parley.dev/parley/internal/testkit"
	"parley.dev/parley/server"
	"parley.dev/parley/taskstore"
)

// env is one Parley server on a loopback port, spoken to with raw HTTP.
type env struct {
	t     *testing.T
	url   string
	srv   *server.Server
	card  *a2a.AgentCard
	store taskstore.Store // set by startWithStore
}

// config adjusts a test server.
type config struct {
	agent     server.Agent
	tokens    map[string]string
	keepAlive time.Duration
	mutate    func(card *a2a.AgentCard, o *server.Options)
}

// start runs the conformance agent (or cfg.agent) behind a2ahttp on a
// loopback port, with a card listing JSON-RPC and HTTP+JSON.
func start(t *testing.T, cfg config) *env {
	t.Helper()
	s := testkit.StartServer(t, &testkit.Options{
		Agent:  cfg.agent,
		Tokens: cfg.tokens,
		Mutate: cfg.mutate,
		Interfaces: func(base string) []*a2a.AgentInterface {
			return testkit.Interfaces(base)[:2] // no gRPC interface
		},
		HTTP: func(o *a2ahttp.Options) {
			if cfg.keepAlive != 0 {
				o.KeepAlive = cfg.keepAlive
			}
		},
	})
	return &env{t: t, url: s.URL, srv: s.Core, card: s.Card}
}

// binding names used in test names.
const (
	jsonRPC = "JSONRPC"
	restB   = "HTTP+JSON"
)

var bindings = []string{jsonRPC, restB}

// result is the outcome of one call, the same shape for both bindings.
type result struct {
	status int
	header http.Header
	body   []byte
	// value is the operation's result (JSON-RPC `result`, REST body).
	value map[string]any
	// err is set for an error outcome.
	err *wireErr
	// events are the data of an SSE stream, with their ids.
	events []sseEvent
}

type wireErr struct {
	code    a2a.Code
	message string
	reason  string
	meta    map[string]string
	fields  []string // BadRequest field violations
}

type sseEvent struct {
	id   string
	data map[string]any
}

// callOpts adds headers to a call.
type callOpts struct {
	version  *string // nil means "1.0"
	token    string
	headers  map[string]string
	tenant   string // REST: use the /{tenant}/ route form
	restVerb string // REST: override the verb
}

// call performs an operation over a binding. params is the operation's
// request message as JSON.
func (e *env) call(binding, method string, params string, o ...callOpts) result {
	e.t.Helper()
	var opt callOpts
	if len(o) > 0 {
		opt = o[0]
	}
	var req *http.Request
	if binding == jsonRPC {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":"req-1","method":%q`, method)
		if params != "" {
			body += `,"params":` + params
		}
		body += "}"
		req, _ = http.NewRequest("POST", e.url+"/", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
	} else {
		req = e.restRequest(method, params, opt)
	}
	v := "1.0"
	if opt.version != nil {
		v = *opt.version
	}
	if v != "" {
		req.Header.Set("A2A-Version", v)
	}
	if opt.token != "" {
		req.Header.Set("Authorization", "Bearer "+opt.token)
	}
	for k, val := range opt.headers {
		req.Header.Set(k, val)
	}
	return e.do(binding, req)
}

// restRequest builds the HTTP+JSON request of an operation from its JSON
// params: path variables and the tenant go into the path, the rest into
// the body (POST) or the query (GET, DELETE).
func (e *env) restRequest(method, params string, opt callOpts) *http.Request {
	e.t.Helper()
	m := a2a.MethodByName(method)
	if m == nil {
		e.t.Fatalf("unknown method %s", method)
	}
	p := map[string]any{}
	if params != "" {
		if err := json.Unmarshal([]byte(params), &p); err != nil {
			e.t.Fatalf("bad params %s: %v", params, err)
		}
	}
	path := m.Path
	for _, name := range []string{"taskId", "id"} {
		ph := "{" + name + "}"
		if strings.Contains(path, ph) {
			v, _ := p[name].(string)
			path = strings.Replace(path, ph, url.PathEscape(v), 1)
			delete(p, name)
		}
	}
	if opt.tenant != "" {
		path = "/" + url.PathEscape(opt.tenant) + path
	}
	verb := m.HTTPMethod
	if opt.restVerb != "" {
		verb = opt.restVerb
	}
	var body io.Reader
	if verb == "POST" {
		b, _ := json.Marshal(p)
		body = bytes.NewReader(b)
	} else if len(p) > 0 {
		q := url.Values{}
		for k, v := range p {
			switch x := v.(type) {
			case string:
				q.Set(k, x)
			default:
				b, _ := json.Marshal(x)
				q.Set(k, string(b))
			}
		}
		path += "?" + q.Encode()
	}
	req, _ := http.NewRequest(verb, e.url+path, body)
	if body != nil {
		req.Header.Set("Content-Type", "application/a2a+json")
	}
	return req
}

// do sends a request and decodes the outcome.
func (e *env) do(binding string, req *http.Request) result {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		e.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	res := result{status: resp.StatusCode, header: resp.Header}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		res.events = readSSE(e.t, resp.Body)
		if binding == jsonRPC {
			for i, ev := range res.events {
				if ev.data["jsonrpc"] != "2.0" || ev.data["id"] != "req-1" {
					e.t.Fatalf("SSE event %d is not a JSON-RPC response for id req-1: %v", i, ev.data)
				}
				if errObj, ok := ev.data["error"].(map[string]any); ok {
					res.err = e.rpcError(errObj)
					res.events[i].data = nil
					continue
				}
				res.events[i].data, _ = ev.data["result"].(map[string]any)
			}
		} else {
			for i, ev := range res.events {
				if errObj, ok := ev.data["error"].(map[string]any); ok {
					res.err = e.restError(resp.StatusCode, errObj)
					res.events[i].data = nil
				}
			}
		}
		return res
	}
	res.body, _ = io.ReadAll(resp.Body)
	var doc map[string]any
	if err := json.Unmarshal(res.body, &doc); err != nil {
		e.t.Fatalf("%s %s: response is not JSON (status %d): %q", req.Method, req.URL, resp.StatusCode, res.body)
	}
	if binding == jsonRPC {
		if doc["jsonrpc"] != "2.0" {
			e.t.Fatalf("not a JSON-RPC response: %s", res.body)
		}
		if errObj, ok := doc["error"].(map[string]any); ok {
			res.err = e.rpcError(errObj)
			return res
		}
		res.value, _ = doc["result"].(map[string]any)
		return res
	}
	if errObj, ok := doc["error"].(map[string]any); ok && resp.StatusCode >= 400 {
		res.err = e.restError(resp.StatusCode, errObj)
		return res
	}
	res.value = doc
	return res
}

// rpcError decodes a JSON-RPC error object (testkit.RPCWireError).
func (e *env) rpcError(o map[string]any) *wireErr {
	e.t.Helper()
	w, err := testkit.RPCWireError(e.reencode(o))
	return e.fromWire(w, err)
}

// restError decodes the google.rpc.Status of an HTTP+JSON error
// (testkit.StatusWireError): the ErrorInfo reason names an A2A error;
// other errors are known by their HTTP status.
func (e *env) restError(status int, o map[string]any) *wireErr {
	e.t.Helper()
	w, err := testkit.StatusWireError(status, e.reencode(o))
	return e.fromWire(w, err)
}

// reencode turns decoded JSON back into its text.
func (e *env) reencode(v any) []byte {
	e.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		e.t.Fatal(err)
	}
	return b
}

// fromWire is the result error of a decoded error, which must decode and
// whose ErrorInfo, if any, must be in the A2A domain for an A2A error and
// in Parley's for another (a2a.Error.Info).
func (e *env) fromWire(w *testkit.WireError, err error) *wireErr {
	e.t.Helper()
	if err != nil {
		e.t.Fatal(err)
	}
	domain := a2a.DomainParley
	if w.Code.IsA2A() {
		domain = a2a.DomainA2A
	}
	if w.ErrorInfo && w.Domain != domain {
		e.t.Fatalf("ErrorInfo domain %q, want %q: %v", w.Domain, domain, w)
	}
	return &wireErr{code: w.Code, message: w.Message, reason: w.Reason, meta: w.Metadata, fields: w.Fields}
}

// readSSE reads a whole event stream and decodes the data of each event
// as JSON. The only event name Parley writes is "error".
func readSSE(t *testing.T, r io.Reader) []sseEvent {
	t.Helper()
	var out []sseEvent
	for _, ev := range testkit.ReadSSE(t, r, "error") {
		var m map[string]any
		if err := json.Unmarshal(ev.Data, &m); err != nil {
			t.Fatalf("SSE data is not JSON: %q", ev.Data)
		}
		id := ""
		if ev.ID != 0 {
			id = strconv.FormatUint(ev.ID, 10)
		}
		out = append(out, sseEvent{id: id, data: m})
	}
	return out
}

// get walks a path of keys through decoded JSON.
func get(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			l, _ := v.([]any)
			if k < 0 || k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

func str(v any, path ...any) string {
	s, _ := get(v, path...).(string)
	return s
}

// msg returns SendMessageRequest JSON with one text part.
func msg(text string, extra ...string) string {
	fields := fmt.Sprintf(`"messageId":%q,"role":"ROLE_USER","parts":[{"text":%q}]`, a2a.NewID(), text)
	for _, x := range extra {
		fields += "," + x
	}
	return `{"message":{` + fields + `}}`
}

// mustOK fails unless the call succeeded.
func mustOK(t *testing.T, r result) result {
	t.Helper()
	if r.err != nil {
		t.Fatalf("unexpected error %s: %s", r.err.code.Name(), r.err.message)
	}
	if r.status != 200 {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	return r
}

// mustErr fails unless the call failed with the code.
func mustErr(t *testing.T, r result, code a2a.Code) *wireErr {
	t.Helper()
	if r.err == nil {
		t.Fatalf("got success %s, want %s", r.body, code.Name())
	}
	if r.err.code != code {
		t.Fatalf("got %s (%s), want %s", r.err.code.Name(), r.err.message, code.Name())
	}
	if code.IsA2A() && r.err.reason != code.Reason() {
		t.Fatalf("ErrorInfo reason %q, want %q", r.err.reason, code.Reason())
	}
	return r.err
}

func ptr[T any](v T) *T { return &v }
