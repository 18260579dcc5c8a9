// Package jsonrpc is the JSON-RPC 2.0 binding of A2A (spec §9), both
// halves: Handler serves it and Transport calls it. Every operation is a
// POST whose `method` is the operation name and whose `params` is the
// operation's request message in ProtoJSON; streams are Server-Sent Events
// whose data lines are whole JSON-RPC responses. Both halves are driven by
// the method table (a2a.Methods) and only translate: every rule is in the
// a2a.Service being served.
package jsonrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/httpx"
	"parley.dev/parley/internal/sse"
)

// Options configure a Handler: body limit, SSE keep-alive interval (0 means
// 15 s, negative turns it off), logger and middleware.
type Options = httpx.Options

// Handler serves the JSON-RPC binding for one a2a.Service. Mount it at the
// URL the agent card declares for the JSONRPC interface.
type Handler struct {
	inv      a2a.Invoker
	opts     Options
	dialects []Dialect
}

// A Dialect serves, at the same URL, the JSON-RPC methods of another
// protocol version (A2A v0.3's "message/send", …). The request's envelope
// is decoded and checked once, by the Handler, and its method name alone
// says whose it is: a name that is no operation of a2a.Methods goes to
// the first dialect that has it.
type Dialect interface {
	// Has reports whether method is one of the dialect's.
	Has(method string) bool
	// ServeRPC serves a request whose envelope is valid: id is its id,
	// params its raw params (nil when absent). ci is the call's CallInfo,
	// its service parameters read.
	ServeRPC(w http.ResponseWriter, r *http.Request, ci *a2a.CallInfo, id json.RawMessage, method string, params json.RawMessage)
}

// NewHandler returns a Handler, which serves dialects' methods too. opts
// may be nil.
func NewHandler(svc a2a.Service, opts *Options, dialects ...Dialect) *Handler {
	o := opts.WithDefaults()
	return &Handler{inv: o.Invoker(svc), opts: o, dialects: dialects}
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		writeError(w, nil, nullID, a2a.NewError(a2a.CodeInvalidRequest, "JSON-RPC requests must use POST"), http.StatusMethodNotAllowed)
		return
	}
	ci := httpx.CallInfo(r)
	if !jsonMedia(r.Header.Get("Content-Type")) {
		// A browser sends text/plain or a form across sites without asking
		// first (no CORS preflight); JSON-RPC over HTTP is JSON.
		writeError(w, ci, nullID, a2a.NewError(a2a.CodeInvalidRequest,
			"Content-Type %q is not accepted: JSON-RPC requests are application/json", r.Header.Get("Content-Type")), http.StatusUnsupportedMediaType)
		return
	}
	body, err := httpx.ReadBody(w, r, h.opts.MaxBody)
	if err != nil {
		writeError(w, ci, nullID, a2a.AsError(err), 0)
		return
	}
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '[' {
		writeError(w, ci, nullID, a2a.NewError(a2a.CodeInvalidRequest, "batch requests are not supported: send one JSON-RPC request per HTTP request"), 0)
		return
	}
	env, envErr := decodeEnvelope(body)
	if envErr != nil {
		writeError(w, ci, nullID, envErr, 0)
		return
	}
	id, idErr := checkID(env.ID)
	switch {
	case idErr != nil:
		writeError(w, ci, nullID, idErr, 0)
		return
	case env.JSONRPC != "2.0":
		writeError(w, ci, id, a2a.NewError(a2a.CodeInvalidRequest, `"jsonrpc" must be "2.0"`), 0)
		return
	case env.Method == nil:
		writeError(w, ci, id, a2a.NewError(a2a.CodeInvalidRequest, `"method" is required`), 0)
		return
	}
	m := a2a.MethodByName(*env.Method)
	if m == nil {
		for _, d := range h.dialects {
			if d.Has(*env.Method) {
				d.ServeRPC(w, r, ci, id, *env.Method, env.Params)
				return
			}
		}
		writeError(w, ci, id, a2a.NewError(a2a.CodeMethodNotFound, "method %q not found", *env.Method), 0)
		return
	}
	req := m.NewRequest()
	if p := bytes.TrimSpace(env.Params); len(p) > 0 && !bytes.Equal(p, nullID) {
		if p[0] != '{' {
			writeError(w, ci, id, a2a.NewError(a2a.CodeInvalidParams, `"params" must be an object`), 0)
			return
		}
		if err := a2a.Unmarshal(p, req); err != nil {
			writeError(w, ci, id, a2a.InvalidParamsFor(err), 0)
			return
		}
	}
	ctx := a2a.WithCallInfo(r.Context(), ci)
	if m.Streaming {
		h.opts.Stream(ctx, w, r, h.inv, m, req, &streamEncoder{ctx: ctx, h: h, ci: ci, id: id, op: m.Name, sse: acceptsEventStream(r)})
		return
	}
	resp, err := h.inv.Call(ctx, m, req)
	if err != nil {
		e, _ := httpx.ServerError(ctx, h.opts.Logger, m.Name, err)
		writeError(w, ci, id, e, 0)
		return
	}
	bp := httpx.Body()
	b, err := appendResult(*bp, id, resp)
	defer httpx.PutBody(bp, b)
	if err != nil {
		writeError(w, ci, id, a2a.Internal(err), 0)
		return
	}
	httpx.SetResponseHeaders(w.Header(), ci, nil)
	httpx.WriteAnswer(w, 0, httpx.ContentTypeJSON, b)
}

// streamEncoder renders a stream (spec §9.4.2): each event a complete
// JSON-RPC response carrying the request's id; an error after the first
// event is a last event holding a JSON-RPC error response. An error before
// the first event is, for a request that accepts text/event-stream, a
// stream of that one error event, and otherwise an ordinary JSON-RPC error
// response (see Refuse).
type streamEncoder struct {
	ctx context.Context // the call's
	h   *Handler
	ci  *a2a.CallInfo
	id  json.RawMessage
	op  string
	sse bool // the request accepts text/event-stream
}

// Refuse answers a stream that failed before it started. The spec shows
// streaming errors only as stream events (§9.4.2) and does not say what a
// refusal looks like, so both are read by Parley's Transport; a client
// that asked for text/event-stream gets an SSE response whose one event
// is the JSON-RPC error response (the official Go SDK reads nothing
// else), any other the plain JSON-RPC error body. An authentication error
// keeps its 401 and challenge whatever the request accepts.
func (e *streamEncoder) Refuse(w http.ResponseWriter, err error) {
	ae, _ := httpx.ServerError(e.ctx, e.h.opts.Logger, e.op, err)
	if !e.sse || ae.Code == a2a.CodeUnauthenticated {
		writeError(w, e.ci, e.id, ae, 0)
		return
	}
	httpx.SetResponseHeaders(w.Header(), e.ci, ae)
	sse.NewWriter(w).Event("", 0, appendError(nil, e.id, ae))
}

func (e *streamEncoder) Start(h http.Header) { httpx.SetResponseHeaders(h, e.ci, nil) }

func (e *streamEncoder) AppendEvent(b []byte, ev a2a.StreamEvent) ([]byte, error) {
	return appendEvent(b, e.id, ev)
}

func (e *streamEncoder) Fail(err error) (string, []byte) {
	ae, _ := httpx.ServerError(e.ctx, e.h.opts.Logger, e.op, err)
	return "", appendError(nil, e.id, ae)
}

// WriteError answers r, refused before its body was read (by
// authentication in front of the handler, say), with a JSON-RPC error
// response whose id is null: 401 with a challenge for an authentication
// error, otherwise the error's HTTP status.
func WriteError(w http.ResponseWriter, _ *http.Request, e *a2a.Error) {
	writeError(w, nil, nullID, e, e.Code.HTTPStatus())
}

// writeError writes a JSON-RPC error response. JSON-RPC errors travel in an
// HTTP 200 response, except authentication errors (401 with a challenge),
// rate limits (429), an unavailable server (503 with Retry-After) and the
// explicit status given.
func writeError(w http.ResponseWriter, ci *a2a.CallInfo, id json.RawMessage, e *a2a.Error, status int) {
	httpx.SetResponseHeaders(w.Header(), ci, e)
	if status == 0 {
		status = httpx.JSONRPCStatus(e)
	}
	httpx.WriteAnswer(w, status, httpx.ContentTypeJSON, appendError(nil, id, e))
}

// acceptsEventStream reports whether the request's Accept header names
// text/event-stream (with a q-value above 0).
func acceptsEventStream(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept") {
		for _, rng := range strings.Split(v, ",") {
			mt, params, err := mime.ParseMediaType(strings.TrimSpace(rng))
			if err != nil || mt != httpx.ContentTypeSSE {
				continue
			}
			if q, err := strconv.ParseFloat(params["q"], 64); err == nil && q <= 0 {
				continue
			}
			return true
		}
	}
	return false
}

// jsonMedia reports whether a Content-Type is JSON: application/json or a
// +json type such as application/a2a+json.
func jsonMedia(ct string) bool {
	if ct == httpx.ContentTypeJSON {
		return true // the common case, without parsing
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && (mt == "application/json" || (strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json")))
}
