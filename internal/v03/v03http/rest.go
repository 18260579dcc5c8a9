package v03http

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/httpx"
	"parley.dev/parley/internal/v03"
)

// REST serves the v0.3 HTTP+JSON routes, all under /v1/ (mount it where
// the card's HTTP+JSON URL points, with that path stripped). Bodies are
// the v0.3 proto in ProtoJSON; errors are {code, message, data} with the
// JSON-RPC code and the HTTP status of the error's kind.
type REST struct{ served }

// NewREST returns the v0.3 HTTP+JSON handler. With on false every route
// is refused with VersionNotSupportedError.
func NewREST(svc a2a.Service, opts *httpx.Options, on bool) *REST {
	return &REST{newServed(svc, opts, on)}
}

// IsRoute reports whether path (below the HTTP+JSON base) is a v0.3 route.
func IsRoute(path string) bool { return strings.HasPrefix(path, "/v1/") }

// route is a matched v0.3 route.
type route struct {
	op       string // the v0.3 method name it corresponds to
	taskID   string
	configID string
}

// match finds the route of a request; ok is false for a path that is no
// v0.3 route, allow lists the verbs of a path that is one with another
// verb.
func match(method, escaped string) (r route, allow string, ok bool) {
	p := strings.TrimPrefix(escaped, "/v1/")
	verb := func(want string, op string) (route, string, bool) {
		if method == want || (want == http.MethodGet && method == http.MethodHead) {
			r.op = op
			return r, "", true
		}
		return r, want, true
	}
	switch p {
	case "message:send":
		return verb(http.MethodPost, v03.MethodSend)
	case "message:stream":
		return verb(http.MethodPost, v03.MethodStream)
	case "card":
		return verb(http.MethodGet, v03.MethodExtendedCard)
	}
	rest, found := strings.CutPrefix(p, "tasks/")
	if !found || rest == "" {
		return r, "", false
	}
	segs := strings.Split(rest, "/")
	unescape := func(s string) (string, bool) {
		u, err := url.PathUnescape(s)
		return u, err == nil && u != ""
	}
	var good bool
	switch len(segs) {
	case 1:
		id, action, _ := strings.Cut(segs[0], ":")
		if r.taskID, good = unescape(id); !good {
			return r, "", false
		}
		switch action {
		case "":
			return verb(http.MethodGet, v03.MethodGet)
		case "cancel":
			return verb(http.MethodPost, v03.MethodCancel)
		case "subscribe":
			if method == http.MethodPost {
				return verb(http.MethodPost, v03.MethodResubscribe)
			}
			return verb(http.MethodGet, v03.MethodResubscribe)
		}
	case 2, 3:
		if segs[1] != "pushNotificationConfigs" {
			return r, "", false
		}
		if r.taskID, good = unescape(segs[0]); !good {
			return r, "", false
		}
		// A config route: its own verb's operation, else GET's, else 405
		// naming both.
		orGet := func(own, ownOp, getOp string) (route, string, bool) {
			if method == own {
				return verb(own, ownOp)
			}
			r2, _, _ := verb(http.MethodGet, getOp)
			if r2.op == "" {
				return r, "GET, " + own, true
			}
			return r2, "", true
		}
		if len(segs) == 2 {
			return orGet(http.MethodPost, v03.MethodPushSet, v03.MethodPushList)
		}
		if r.configID, good = unescape(segs[2]); !good {
			return r, "", false
		}
		return orGet(http.MethodDelete, v03.MethodPushDelete, v03.MethodPushGet)
	}
	return r, "", false
}

// ServeHTTP implements http.Handler.
func (h *REST) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ci := httpx.CallInfo(r)
	rt, allow, ok := match(r.Method, r.URL.EscapedPath())
	switch {
	case !ok:
		writeRESTError(w, ci, a2a.NewError(a2a.CodeMethodNotFound, "no v0.3 HTTP+JSON route %s %s", r.Method, r.URL.Path))
		return
	case rt.op == "":
		w.Header().Set("Allow", allow)
		writeRESTErrorStatus(w, ci, a2a.NewError(a2a.CodeMethodNotFound, "%s is not allowed on %s (allowed: %s)", r.Method, r.URL.Path, allow), http.StatusMethodNotAllowed)
		return
	}
	if err := Admit(ci, h.on); err != nil {
		writeRESTError(w, ci, a2a.AsError(err))
		return
	}
	m, req, err := h.decode(w, r, rt)
	if err != nil {
		writeRESTError(w, ci, a2a.AsError(err))
		return
	}
	ctx := a2a.WithCallInfo(r.Context(), ci)
	if m.Streaming {
		h.opts.Stream(ctx, w, r, h.inv, m, req, &restStream{ctx: ctx, h: h, ci: ci, op: rt.op, subscribe: rt.op == v03.MethodResubscribe})
		return
	}
	resp, err := h.inv.Call(ctx, m, req)
	if err != nil {
		e, _ := httpx.ServerError(ctx, h.opts.Logger, rt.op, err)
		writeRESTError(w, ci, e)
		return
	}
	out, status := restResult(rt.op, resp)
	httpx.SetResponseHeaders(w.Header(), ci, nil)
	if status == http.StatusNoContent {
		w.WriteHeader(status)
		return
	}
	b, err := json.Marshal(out)
	if err != nil {
		writeRESTError(w, ci, a2a.Internal(err))
		return
	}
	w.Header().Set("Content-Type", httpx.ContentTypeJSON)
	w.WriteHeader(status)
	w.Write(b)
}

// decode builds the v1.0 request of a route from its path, query and body.
func (h *REST) decode(w http.ResponseWriter, r *http.Request, rt route) (*a2a.Method, proto.Message, error) {
	var name string
	var req proto.Message
	switch rt.op {
	case v03.MethodSend, v03.MethodStream:
		var p v03.PSendRequest
		if err := h.body(w, r, &p); err != nil {
			return nil, nil, err
		}
		sr, err := v03.PSendToV1(&p)
		if err != nil {
			return nil, nil, err
		}
		name, req = a2a.MethodSendMessage, sr
		if rt.op == v03.MethodStream {
			name = a2a.MethodSendStreamingMessage
		}
	case v03.MethodGet:
		g := &a2a.GetTaskRequest{Id: rt.taskID}
		q := r.URL.Query()
		hl := q.Get("historyLength")
		if hl == "" {
			hl = q.Get("history_length")
		}
		if hl != "" {
			n, err := strconv.ParseInt(hl, 10, 32)
			if err != nil {
				return nil, nil, a2a.InvalidParams(a2a.FieldViolation{Field: "historyLength", Description: "must be an integer"})
			}
			if n != 0 { // the v0.3 proto's int32: 0 is "unset"
				n32 := int32(n)
				g.HistoryLength = &n32
			}
		}
		name, req = a2a.MethodGetTask, g
	case v03.MethodCancel:
		name, req = a2a.MethodCancelTask, &a2a.CancelTaskRequest{Id: rt.taskID}
	case v03.MethodResubscribe:
		name, req = a2a.MethodSubscribeToTask, &a2a.SubscribeToTaskRequest{Id: rt.taskID}
	case v03.MethodPushSet:
		var p v03.PCreatePushRequest
		if err := h.body(w, r, &p); err != nil {
			return nil, nil, err
		}
		cfg, err := v03.PCreatePushToV1(rt.taskID, &p)
		if err != nil {
			return nil, nil, err
		}
		name, req = a2a.MethodCreateTaskPushNotificationConfig, cfg
	case v03.MethodPushList:
		name, req = a2a.MethodListTaskPushNotificationConfigs, &a2a.ListTaskPushNotificationConfigsRequest{TaskId: rt.taskID}
	case v03.MethodPushGet:
		name, req = a2a.MethodGetTaskPushNotificationConfig, &a2a.GetTaskPushNotificationConfigRequest{TaskId: rt.taskID, Id: rt.configID}
	case v03.MethodPushDelete:
		name, req = a2a.MethodDeleteTaskPushNotificationConfig, &a2a.DeleteTaskPushNotificationConfigRequest{TaskId: rt.taskID, Id: rt.configID}
	case v03.MethodExtendedCard:
		name, req = a2a.MethodGetExtendedAgentCard, &a2a.GetExtendedAgentCardRequest{}
	}
	return a2a.MethodByName(name), req, nil
}

// body reads a JSON request body into out.
func (h *REST) body(w http.ResponseWriter, r *http.Request, out any) error {
	b, err := httpx.ReadBody(w, r, h.opts.MaxBody)
	if err != nil {
		return err
	}
	if len(strings.TrimSpace(string(b))) > 0 && !json.Valid(b) {
		return a2a.NewError(a2a.CodeParseError, "the request body is not valid JSON")
	}
	return v03.Decode(b, out)
}

// restResult is the v0.3 body and status of a unary operation's response.
func restResult(op string, resp proto.Message) (any, int) {
	switch r := resp.(type) {
	case *a2a.SendMessageResponse:
		return v03.PSendResultFromV1(r), http.StatusOK
	case *a2a.Task:
		return v03.PTaskFromV1(r), http.StatusOK
	case *a2a.TaskPushNotificationConfig:
		return v03.PPushConfigFromV1(r), http.StatusOK
	case *a2a.ListTaskPushNotificationConfigsResponse:
		out := v03.PListPushResponse{Configs: []v03.PTaskPushConfig{}}
		for _, c := range r.GetConfigs() {
			out.Configs = append(out.Configs, v03.PPushConfigFromV1(c))
		}
		return out, http.StatusOK
	case *a2a.AgentCard:
		return json.RawMessage(v03.CardJSON(r)), http.StatusOK
	}
	return nil, http.StatusNoContent
}

// WriteRESTError answers a request refused before its v0.3 HTTP+JSON
// handler ran (by authentication, say).
func WriteRESTError(w http.ResponseWriter, _ *http.Request, e *a2a.Error) {
	writeRESTError(w, nil, e)
}

func writeRESTError(w http.ResponseWriter, ci *a2a.CallInfo, e *a2a.Error) {
	writeRESTErrorStatus(w, ci, e, e.Code.HTTPStatus())
}

func writeRESTErrorStatus(w http.ResponseWriter, ci *a2a.CallInfo, e *a2a.Error, status int) {
	httpx.SetResponseHeaders(w.Header(), ci, e)
	b, _ := json.Marshal(v03.ErrorFromV1(e))
	w.Header().Set("Content-Type", httpx.ContentTypeJSON)
	w.WriteHeader(status)
	w.Write(b)
}

// restStream renders a v0.3 HTTP+JSON stream: each event's data a proto
// StreamResponse; an error after the start an "error" event holding the
// error object.
type restStream struct {
	ctx       context.Context // the call's
	h         *REST
	ci        *a2a.CallInfo
	op        string
	subscribe bool
}

func (e *restStream) Refuse(w http.ResponseWriter, err error) {
	ae, _ := httpx.ServerError(e.ctx, e.h.opts.Logger, e.op, err)
	writeRESTError(w, e.ci, ae)
}

func (e *restStream) Start(h http.Header) { httpx.SetResponseHeaders(h, e.ci, nil) }

func (e *restStream) AppendEvent(b []byte, ev a2a.StreamEvent) ([]byte, error) {
	// An event several streams carry is encoded once for all of them.
	data, err := ev.Cache.LoadBytes(ev.Response, restKey[e.subscribe], func() ([]byte, error) {
		return json.Marshal(v03.PEventFromV1(ev.Response, e.subscribe))
	})
	return append(b, data...), err
}

// restKey names the v0.3 HTTP+JSON encoding of an event in its
// a2a.EventCache: a SubscribeToTask stream's differs from a
// SendStreamingMessage one's.
var restKey = map[bool]string{false: "v0.3 rest", true: "v0.3 rest subscribe"}

func (e *restStream) Fail(err error) (string, []byte) {
	ae, _ := httpx.ServerError(e.ctx, e.h.opts.Logger, e.op, err)
	b, _ := json.Marshal(v03.ErrorFromV1(ae))
	return "error", b
}
