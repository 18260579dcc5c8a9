package equivalence_test

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

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/sse"
	"parley.dev/parley/internal/testkit"
)

// The raw wire of the JSON bindings: a call is a JSON-RPC or HTTP+JSON
// request built by hand, its answer a JSON body or an SSE stream decoded
// into an outcome.

// source is an open event stream.
type source interface {
	// recv returns the next event; at the end it returns nil and the error
	// that ended the stream (nil for a normal end).
	recv() (*a2a.StreamResponse, *wireErr)
	close()
}

// errSource is a stream that failed before its first event.
type errSource struct{ err *wireErr }

func (s errSource) recv() (*a2a.StreamResponse, *wireErr) { return nil, s.err }

func (s errSource) close() {}

// unary performs a unary call over a binding.
func (e *env) unary(ctx context.Context, b, method string, req proto.Message, o callOpts) outcome {
	switch b {
	case grpcB:
		return e.grpcUnary(ctx, method, req, o)
	default:
		r := e.httpRequest(ctx, b, method, req, o)
		resp, err := e.hc.Do(r)
		if err != nil {
			e.t.Fatalf("%s %s: %v", r.Method, r.URL, err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			e.t.Fatalf("%s %s: reading the body: %v", r.Method, r.URL, err)
		}
		out := outcome{extensions: resp.Header.Get("A2A-Extensions"), challenge: resp.Header.Get("WWW-Authenticate")}
		out.value, out.err = e.decodeJSON(b, method, resp.StatusCode, body)
		return out
	}
}

// open starts a streaming call over a binding.
func (e *env) open(ctx context.Context, b, method string, req proto.Message, o callOpts) (source, outcome) {
	if b == grpcB {
		return e.grpcOpen(ctx, method, req, o)
	}
	r := e.httpRequest(ctx, b, method, req, o)
	resp, err := e.hc.Do(r)
	if err != nil {
		e.t.Fatalf("%s %s: %v", r.Method, r.URL, err)
	}
	out := outcome{extensions: resp.Header.Get("A2A-Extensions"), challenge: resp.Header.Get("WWW-Authenticate")}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		_, werr := e.decodeJSON(b, method, resp.StatusCode, body)
		if werr == nil {
			e.t.Fatalf("%s: a stream answered %d %s without an error", method, resp.StatusCode, body)
		}
		return errSource{werr}, out
	}
	return &sseSource{e: e, b: b, status: resp.StatusCode, body: resp.Body, r: sse.NewReader(resp.Body, maxEvent)}, out
}

// httpRequest builds the JSON-RPC or HTTP+JSON request of an operation.
func (e *env) httpRequest(ctx context.Context, b, method string, req proto.Message, o callOpts) *http.Request {
	e.t.Helper()
	var params []byte = []byte("{}")
	if req != nil {
		var err error
		if params, err = a2a.Marshal(req); err != nil {
			e.t.Fatal(err)
		}
	}
	var r *http.Request
	if b == jsonRPC {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":"req-1","method":%q,"params":%s}`, method, params)
		r, _ = http.NewRequestWithContext(ctx, "POST", e.base+"/", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
	} else {
		r = e.restRequest(ctx, method, params)
	}
	for k, v := range o.header() {
		r.Header[k] = v
	}
	return r
}

// restRequest maps a request message onto its HTTP+JSON route: path
// variables and the tenant go into the path, the rest into the body (POST)
// or the query string (GET, DELETE).
func (e *env) restRequest(ctx context.Context, method string, params []byte) *http.Request {
	m := a2a.MethodByName(method)
	if m == nil { // an operation that does not exist
		r, _ := http.NewRequestWithContext(ctx, "GET", e.base+"/"+method, nil)
		return r
	}
	p := map[string]any{}
	if err := json.Unmarshal(params, &p); err != nil {
		e.t.Fatal(err)
	}
	path := m.Path
	for _, name := range []string{"taskId", "id"} {
		if ph := "{" + name + "}"; strings.Contains(path, ph) {
			v, _ := p[name].(string)
			path = strings.Replace(path, ph, url.PathEscape(v), 1)
			delete(p, name)
		}
	}
	if ten, _ := p["tenant"].(string); ten != "" {
		path = "/" + url.PathEscape(ten) + path
		delete(p, "tenant")
	}
	var body io.Reader
	if m.HTTPMethod == "POST" {
		b, _ := json.Marshal(p)
		body = bytes.NewReader(b)
	} else if len(p) > 0 {
		q := url.Values{}
		for k, v := range p {
			switch x := v.(type) {
			case string:
				q.Set(k, x)
			case float64:
				q.Set(k, strconv.FormatFloat(x, 'f', -1, 64))
			case bool:
				q.Set(k, strconv.FormatBool(x))
			default:
				e.t.Fatalf("%s: %s cannot go in a query string", method, k)
			}
		}
		path += "?" + q.Encode()
	}
	r, _ := http.NewRequestWithContext(ctx, m.HTTPMethod, e.base+path, body)
	if body != nil {
		r.Header.Set("Content-Type", "application/a2a+json")
	}
	return r
}

// decodeJSON decodes a JSON-RPC or HTTP+JSON unary response.
func (e *env) decodeJSON(b, method string, status int, body []byte) (proto.Message, *wireErr) {
	e.t.Helper()
	if b == jsonRPC {
		var env struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      any             `json:"id"`
			Result  json.RawMessage `json:"result"`
			Error   json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(body, &env); err != nil || env.JSONRPC != "2.0" {
			e.t.Fatalf("%s: not a JSON-RPC response (%d): %s", method, status, body)
		}
		if env.Error != nil {
			return nil, e.rpcError(env.Error)
		}
		v := responseType(method)
		if err := a2a.Unmarshal(env.Result, v); err != nil {
			e.t.Fatalf("%s: result does not decode: %v: %s", method, err, body)
		}
		return v, nil
	}
	if status >= 400 {
		var doc struct {
			Error json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(body, &doc); err != nil || doc.Error == nil {
			e.t.Fatalf("%s: error response %d is not a google.rpc.Status body: %s", method, status, body)
		}
		return nil, e.restError(status, doc.Error)
	}
	v := responseType(method)
	if err := a2a.Unmarshal(body, v); err != nil {
		e.t.Fatalf("%s: response does not decode: %v: %s", method, err, body)
	}
	return v, nil
}

// rpcError decodes a JSON-RPC error object (testkit.RPCWireError). JSON-RPC
// has no code of its own for an oversized request: Parley sends -32600
// saying it exceeds the limit.
func (e *env) rpcError(raw json.RawMessage) *wireErr {
	e.t.Helper()
	w, err := testkit.RPCWireError(raw)
	if err != nil {
		e.t.Fatal(err)
	}
	if w.Code == a2a.CodeInvalidRequest && strings.Contains(w.Message, "exceeds the limit") {
		w.Code = a2a.CodeRequestTooLarge
	}
	return fromWire(w)
}

// restError decodes an HTTP+JSON error body (testkit.StatusWireError): the
// ErrorInfo reason names an A2A error; other errors are known by their
// HTTP status.
func (e *env) restError(status int, raw json.RawMessage) *wireErr {
	e.t.Helper()
	w, err := testkit.StatusWireError(status, raw)
	if err != nil {
		e.t.Fatal(err)
	}
	return fromWire(w)
}

// fromWire is the outcome error of a decoded JSON error.
func fromWire(w *testkit.WireError) *wireErr {
	return &wireErr{code: w.Code, message: w.Message, reason: w.Reason, domain: w.Domain, meta: w.Metadata, fields: w.Fields}
}

// sseSource reads a Server-Sent Events stream of either JSON binding.
type sseSource struct {
	e      *env
	b      string
	status int
	body   io.ReadCloser
	r      *sse.Reader
	done   bool
}

func (s *sseSource) recv() (*a2a.StreamResponse, *wireErr) {
	if s.done {
		return nil, nil
	}
	ev, err := s.r.Next()
	if err != nil { // the end of the stream, or a broken connection
		s.done = true
		return nil, nil
	}
	return s.event(ev.Data)
}

func (s *sseSource) event(data []byte) (*a2a.StreamResponse, *wireErr) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil {
		s.e.t.Fatalf("SSE data is not JSON: %q", data)
	}
	raw := json.RawMessage(data)
	if s.b == jsonRPC {
		if doc["jsonrpc"] == nil || string(doc["id"]) != `"req-1"` {
			s.e.t.Fatalf("SSE event is not a JSON-RPC response for id req-1: %s", data)
		}
		if doc["error"] != nil {
			s.done = true
			return nil, s.e.rpcError(doc["error"])
		}
		raw = doc["result"]
	} else if doc["error"] != nil {
		s.done = true
		return nil, s.e.restError(s.status, doc["error"])
	}
	ev := &a2a.StreamResponse{}
	if err := a2a.Unmarshal(raw, ev); err != nil {
		s.e.t.Fatalf("SSE event does not decode as a StreamResponse: %v: %s", err, data)
	}
	return ev, nil
}

func (s *sseSource) close() { s.body.Close() }

// maxEvent is the largest SSE event a stream may carry.
const maxEvent = 16 << 20
