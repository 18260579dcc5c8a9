package v03http

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/httpx"
	"parley.dev/parley/internal/sse"
	v03 "parley.dev/parley/internal/v03"
)

// JSONRPC serves the v0.3 JSON-RPC methods as a dialect of the v1.0
// JSON-RPC handler (jsonrpc.Dialect), which decodes every request's
// envelope once and hands it the requests whose method is a v0.3 one.
// With on false those methods are refused with VersionNotSupportedError.
type JSONRPC struct{ served }

// NewJSONRPC returns the v0.3 JSON-RPC dialect.
func NewJSONRPC(svc a2a.Service, opts *httpx.Options, on bool) *JSONRPC {
	return &JSONRPC{newServed(svc, opts, on)}
}

// served is what both v0.3 HTTP handlers serve with: the service's
// invoker under the options, and whether v0.3 is on.
type served struct {
	inv  a2a.Invoker
	opts httpx.Options
	on   bool
}

func newServed(svc a2a.Service, opts *httpx.Options, on bool) served {
	o := opts.WithDefaults()
	return served{inv: o.Invoker(svc), opts: o, on: on}
}

// Has implements jsonrpc.Dialect: the v0.3 method names.
func (h *JSONRPC) Has(method string) bool { return v03.IsMethod(method) }

// ServeRPC implements jsonrpc.Dialect.
func (h *JSONRPC) ServeRPC(w http.ResponseWriter, r *http.Request, ci *a2a.CallInfo, id json.RawMessage, method string, params json.RawMessage) {
	if err := Admit(ci, h.on); err != nil {
		writeRPCError(w, ci, id, a2a.AsError(err))
		return
	}
	m, req, err := v03.Request(method, params)
	if err != nil {
		writeRPCError(w, ci, id, a2a.AsError(err))
		return
	}
	ctx := a2a.WithCallInfo(r.Context(), ci)
	if m.Streaming {
		enc := &rpcStream{ctx: ctx, h: h, ci: ci, id: id, op: method, subscribe: method == v03.MethodResubscribe,
			sse: strings.Contains(r.Header.Get("Accept"), httpx.ContentTypeSSE)}
		h.opts.Stream(ctx, w, r, h.inv, m, req, enc)
		return
	}
	resp, err := call(ctx, h.inv, method, m, req)
	if err != nil {
		e, _ := httpx.ServerError(ctx, h.opts.Logger, method, err)
		writeRPCError(w, ci, id, e)
		return
	}
	b, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  any             `json:"result"`
	}{"2.0", id, v03.ResultFromV1(method, resp)})
	if err != nil {
		writeRPCError(w, ci, id, a2a.Internal(err))
		return
	}
	httpx.SetResponseHeaders(w.Header(), ci, nil)
	w.Header().Set("Content-Type", httpx.ContentTypeJSON)
	w.Write(b)
}

// call invokes a unary operation; a get without a configuration id,
// decoded as a list, answers with one configuration (v03.FirstPushConfig).
func call(ctx context.Context, inv a2a.Invoker, method string, m *a2a.Method, req proto.Message) (proto.Message, error) {
	resp, err := inv.Call(ctx, m, req)
	if err != nil {
		return nil, err
	}
	if l, ok := resp.(*a2a.ListTaskPushNotificationConfigsResponse); ok && method == v03.MethodPushGet {
		return v03.FirstPushConfig(req.(*a2a.ListTaskPushNotificationConfigsRequest).GetTaskId(), l)
	}
	return resp, nil
}

// rpcError is a JSON-RPC error response.
type rpcError struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   v03.ErrorObject `json:"error"`
}

func appendRPCError(id json.RawMessage, e *a2a.Error) []byte {
	b, _ := json.Marshal(rpcError{"2.0", id, v03.ErrorFromV1(e)})
	return b
}

// writeRPCError writes a JSON-RPC error response: HTTP 200, except 401 for
// authentication, 429 for rate limits and 503 for an unavailable server,
// as the v1.0 binding does.
func writeRPCError(w http.ResponseWriter, ci *a2a.CallInfo, id json.RawMessage, e *a2a.Error) {
	httpx.SetResponseHeaders(w.Header(), ci, e)
	w.Header().Set("Content-Type", httpx.ContentTypeJSON)
	w.WriteHeader(httpx.JSONRPCStatus(e))
	w.Write(appendRPCError(id, e))
}

// rpcStream renders a v0.3 JSON-RPC stream: each event a JSON-RPC response
// whose result is a v0.3 object with its kind, status updates with final.
type rpcStream struct {
	ctx       context.Context // the call's
	h         *JSONRPC
	ci        *a2a.CallInfo
	id        json.RawMessage
	op        string
	subscribe bool
	sse       bool
}

func (e *rpcStream) Refuse(w http.ResponseWriter, err error) {
	ae, _ := httpx.ServerError(e.ctx, e.h.opts.Logger, e.op, err)
	if !e.sse || ae.Code == a2a.CodeUnauthenticated {
		writeRPCError(w, e.ci, e.id, ae)
		return
	}
	httpx.SetResponseHeaders(w.Header(), e.ci, ae)
	sse.NewWriter(w).Event("", 0, appendRPCError(e.id, ae))
}

func (e *rpcStream) Start(h http.Header) { httpx.SetResponseHeaders(h, e.ci, nil) }

func (e *rpcStream) AppendEvent(b []byte, ev a2a.StreamEvent) ([]byte, error) {
	if ev.Cache.Holds(ev.Response) {
		return e.appendShared(b, ev)
	}
	data, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  any             `json:"result"`
	}{"2.0", e.id, v03.EventFromV1(ev.Response, e.subscribe)})
	return append(b, data...), err
}

// appendShared is AppendEvent for an event several streams carry: its
// result is encoded once for all of them, and this stream's envelope (the
// same bytes json.Marshal writes around it) is written around it.
func (e *rpcStream) appendShared(b []byte, ev a2a.StreamEvent) ([]byte, error) {
	result, err := ev.Cache.LoadBytes(ev.Response, rpcKey[e.subscribe], func() ([]byte, error) {
		return json.Marshal(v03.EventFromV1(ev.Response, e.subscribe))
	})
	if err != nil {
		return b, err
	}
	head, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
	}{"2.0", e.id})
	if err != nil {
		return b, err
	}
	b = append(b, head[:len(head)-1]...) // without its closing brace
	b = append(b, `,"result":`...)
	b = append(b, result...)
	return append(b, '}'), nil
}

// rpcKey names the v0.3 JSON-RPC result of an event in its
// a2a.EventCache: a SubscribeToTask stream's differs from a
// SendStreamingMessage one's.
var rpcKey = map[bool]string{false: "v0.3 jsonrpc", true: "v0.3 jsonrpc subscribe"}

func (e *rpcStream) Fail(err error) (string, []byte) {
	ae, _ := httpx.ServerError(e.ctx, e.h.opts.Logger, e.op, err)
	return "", appendRPCError(e.id, ae)
}
