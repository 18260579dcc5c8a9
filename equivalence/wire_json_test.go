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
	"parley.dev/parley/sse"
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
			return nil, rpcError(env.Error)
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
		return nil, restError(status, doc.Error)
	}
	v := responseType(method)
	if err := a2a.Unmarshal(body, v); err != nil {
		e.t.Fatalf("%s: response does not decode: %v: %s", method, err, body)
	}
	return v, nil
}

// details decodes the JSON form of google.rpc error details.
func details(w *wireErr, raw json.RawMessage) {
	var list []map[string]json.RawMessage
	json.Unmarshal(raw, &list)
	for _, d := range list {
		var typ string
		json.Unmarshal(d["@type"], &typ)
		switch typ {
		case "type.googleapis.com/google.rpc.ErrorInfo":
			json.Unmarshal(d["reason"], &w.reason)
			json.Unmarshal(d["domain"], &w.domain)
			json.Unmarshal(d["metadata"], &w.meta)
		case "type.googleapis.com/google.rpc.BadRequest":
			var fv []struct{ Field string }
			json.Unmarshal(d["fieldViolations"], &fv)
			for _, f := range fv {
				w.fields = append(w.fields, f.Field)
			}
		}
	}
}

// rpcError decodes a JSON-RPC error object. JSON-RPC has no code of its own
// for an oversized request: Parley sends -32600 saying it exceeds the limit.
func rpcError(raw json.RawMessage) *wireErr {
	var o struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	json.Unmarshal(raw, &o)
	w := &wireErr{message: o.Message}
	w.code, _ = a2a.CodeForJSONRPC(o.Code)
	if o.Code == int(a2a.CodeInvalidRequest) && strings.Contains(o.Message, "exceeds the limit") {
		w.code = a2a.CodeRequestTooLarge
	}
	details(w, o.Data)
	return w
}

// restError decodes an HTTP+JSON error body: the ErrorInfo reason names an
// A2A error; other errors are known by their HTTP status.
func restError(status int, raw json.RawMessage) *wireErr {
	var o struct {
		Message string          `json:"message"`
		Details json.RawMessage `json:"details"`
	}
	json.Unmarshal(raw, &o)
	w := &wireErr{message: o.Message}
	details(w, o.Details)
	if c, ok := a2a.CodeForReason(w.reason); ok {
		w.code = c
		return w
	}
	switch status {
	case 400:
		w.code = a2a.CodeInvalidParams
	case 401:
		w.code = a2a.CodeUnauthenticated
	case 404, 405:
		w.code = a2a.CodeMethodNotFound
	case 413:
		w.code = a2a.CodeRequestTooLarge
	default:
		w.code = a2a.CodeInternal
	}
	return w
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
			return nil, rpcError(doc["error"])
		}
		raw = doc["result"]
	} else if doc["error"] != nil {
		s.done = true
		return nil, restError(s.status, doc["error"])
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
