// Package jsonrpc is the JSON-RPC 2.0 binding of A2A (brief §9): one POST
// endpoint whose `method` is the operation name and whose `params` is the
// operation's request message in ProtoJSON. It only translates: every rule
// is in the a2a.Service it serves.
package jsonrpc

import (
	"bytes"
	"encoding/json"
	"iter"
	"net/http"
	"strconv"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/httpx"
)

// Options configure a Handler: body limit, SSE keep-alive interval (0 means
// 15 s, negative turns it off) and logger.
type Options = httpx.Options

// Handler serves the JSON-RPC binding for one a2a.Service. Mount it at the
// URL the agent card declares for the JSONRPC interface.
type Handler struct {
	svc  a2a.Service
	opts Options
}

// NewHandler returns a Handler. opts may be nil.
func NewHandler(svc a2a.Service, opts *Options) *Handler {
	return &Handler{svc: svc, opts: opts.WithDefaults()}
}

// envelope is a JSON-RPC 2.0 request. id keeps its raw JSON so the reply
// echoes it exactly.
type envelope struct {
	JSONRPC string
	ID      json.RawMessage
	Method  *string
	Params  json.RawMessage
}

// decodeEnvelope reads the four members by their exact names: JSON-RPC
// member names are case-sensitive, so "ID" is not "id" (encoding/json's
// struct decoding would match it).
func decodeEnvelope(body []byte) (envelope, *a2a.Error) {
	var members map[string]json.RawMessage
	var env envelope
	if err := json.Unmarshal(body, &members); err != nil {
		if _, ok := err.(*json.UnmarshalTypeError); ok {
			return env, a2a.NewError(a2a.CodeInvalidRequest, "the request is not a JSON-RPC request object")
		}
		return env, a2a.NewError(a2a.CodeParseError, "invalid JSON: %v", err)
	}
	if members == nil {
		return env, a2a.NewError(a2a.CodeInvalidRequest, "the request is not a JSON-RPC request object")
	}
	env.ID, env.Params = members["id"], members["params"]
	if v, ok := members["jsonrpc"]; ok && json.Unmarshal(v, &env.JSONRPC) != nil {
		env.JSONRPC = ""
	}
	if v, ok := members["method"]; ok {
		var m string
		if json.Unmarshal(v, &m) != nil {
			return env, a2a.NewError(a2a.CodeInvalidRequest, `"method" must be a string`)
		}
		env.Method = &m
	}
	return env, nil
}

var nullID = json.RawMessage("null")

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		h.writeError(w, nil, nullID, a2a.NewError(a2a.CodeInvalidRequest, "JSON-RPC requests must use POST"), http.StatusMethodNotAllowed)
		return
	}
	ci := httpx.CallInfo(r)
	body, err := httpx.ReadBody(w, r, h.opts.MaxBody)
	if err != nil {
		h.writeError(w, ci, nullID, a2a.AsError(err), 0)
		return
	}
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '[' {
		h.writeError(w, ci, nullID, a2a.NewError(a2a.CodeInvalidRequest, "batch requests are not supported: send one JSON-RPC request per HTTP request"), 0)
		return
	}
	env, envErr := decodeEnvelope(body)
	if envErr != nil {
		h.writeError(w, ci, nullID, envErr, 0)
		return
	}
	id, idErr := checkID(env.ID)
	switch {
	case idErr != nil:
		h.writeError(w, ci, nullID, idErr, 0)
		return
	case env.JSONRPC != "2.0":
		h.writeError(w, ci, id, a2a.NewError(a2a.CodeInvalidRequest, `"jsonrpc" must be "2.0"`), 0)
		return
	case env.Method == nil:
		h.writeError(w, ci, id, a2a.NewError(a2a.CodeInvalidRequest, `"method" is required`), 0)
		return
	}
	m := a2a.MethodByName(*env.Method)
	if m == nil {
		h.writeError(w, ci, id, a2a.NewError(a2a.CodeMethodNotFound, "method %q not found", *env.Method), 0)
		return
	}
	req := m.NewRequest()
	if p := bytes.TrimSpace(env.Params); len(p) > 0 && !bytes.Equal(p, nullID) {
		if p[0] != '{' {
			h.writeError(w, ci, id, a2a.NewError(a2a.CodeInvalidParams, `"params" must be an object`), 0)
			return
		}
		if err := a2a.Unmarshal(p, req); err != nil {
			h.writeError(w, ci, id, a2a.NewError(a2a.CodeInvalidParams, "%v", err), 0)
			return
		}
	}
	ctx := a2a.WithCallInfo(r.Context(), ci)
	if m.Stream != nil {
		h.stream(w, ci, id, m, m.Stream(ctx, h.svc, req))
		return
	}
	resp, err := m.Call(ctx, h.svc, req)
	if err != nil {
		e := a2a.AsError(err)
		httpx.LogError(h.opts.Logger, m.Name, e)
		h.writeError(w, ci, id, e, 0)
		return
	}
	b := append(make([]byte, 0, 512), `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"result":`...)
	b, err = a2a.AppendJSON(b, resp)
	if err != nil {
		h.writeError(w, ci, id, a2a.Internal(err), 0)
		return
	}
	b = append(b, '}')
	httpx.SetResponseHeaders(w, ci, nil)
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

// stream answers a streaming method with SSE, each event a complete
// JSON-RPC response carrying the request's id (brief §5.1). An error before
// the first event is an ordinary JSON-RPC error response.
func (h *Handler) stream(w http.ResponseWriter, ci *a2a.CallInfo, id json.RawMessage, m *a2a.Method, seq iter.Seq2[a2a.StreamEvent, error]) {
	httpx.Stream(w, ci, h.opts, m.Name, seq, "",
		func(e *a2a.Error) { h.writeError(w, ci, id, e, 0) },
		func(resp *a2a.StreamResponse) ([]byte, error) {
			b := append(make([]byte, 0, 512), `{"jsonrpc":"2.0","id":`...)
			b = append(b, id...)
			b = append(b, `,"result":`...)
			b, err := a2a.AppendJSON(b, resp)
			return append(b, '}'), err
		},
		func(e *a2a.Error) []byte { return appendError(nil, id, e) })
}

// checkID accepts a string, number or null id and refuses a missing one
// (a notification: the spec is silent, brief §3.0; Parley answers every
// request, so it refuses notifications) and any other JSON type.
func checkID(raw json.RawMessage) (json.RawMessage, *a2a.Error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, a2a.NewError(a2a.CodeInvalidRequest, `"id" is required: notifications (requests without an id) are not supported`)
	}
	switch c := raw[0]; {
	case c == '"', c == '-', c >= '0' && c <= '9', bytes.Equal(raw, nullID):
		return raw, nil
	}
	return nil, a2a.NewError(a2a.CodeInvalidRequest, `"id" must be a string, a number or null`)
}

// writeError writes a JSON-RPC error response. JSON-RPC errors travel in an
// HTTP 200 response, except authentication errors (401 with a challenge)
// and the explicit status given.
func (h *Handler) writeError(w http.ResponseWriter, ci *a2a.CallInfo, id json.RawMessage, e *a2a.Error, status int) {
	httpx.SetResponseHeaders(w, ci, e)
	if status == 0 {
		status = http.StatusOK
		if e.Code == a2a.CodeUnauthenticated {
			status = http.StatusUnauthorized
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(appendError(nil, id, e))
}

// appendError renders a JSON-RPC error response: code, message and data,
// the array of error details (brief §7.4).
func appendError(b []byte, id json.RawMessage, e *a2a.Error) []byte {
	if id == nil {
		id = nullID
	}
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"error":{"code":`...)
	b = strconv.AppendInt(b, int64(e.Code.JSONRPC()), 10)
	b = append(b, `,"message":`...)
	msg, _ := json.Marshal(e.WireMessage())
	b = append(b, msg...)
	b = append(b, `,"data":`...)
	b = httpx.AppendDetails(b, e)
	return append(b, "}}"...)
}
