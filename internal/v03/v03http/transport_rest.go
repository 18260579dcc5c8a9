package v03http

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/httpx"
	"parley.dev/parley/internal/sse"
	"parley.dev/parley/internal/transport"
	"parley.dev/parley/internal/v03"
)

// RESTTransport speaks v0.3 HTTP+JSON below one base URL (routes /v1/…).
type RESTTransport struct {
	base string
	httpx.Caller
}

var _ transport.Transport = (*RESTTransport)(nil)

// NewRESTTransport returns a v0.3 HTTP+JSON transport for base.
func NewRESTTransport(base string, cfg transport.Config) (*RESTTransport, error) {
	if _, err := httpx.CheckURL(base); err != nil {
		return nil, err
	}
	return &RESTTransport{base: strings.TrimRight(base, "/"), Caller: httpx.NewCaller(v03Config(cfg))}, nil
}

// RESTFactory is the factory of the v0.3 HTTP+JSON transport, for
// interfaces at protocol version 0.3.
func RESTFactory() transport.Factory {
	return transport.Factory{Binding: a2a.BindingHTTPJSON, Version: v03.ProtocolVersion,
		New: func(in *a2a.AgentInterface, cfg transport.Config) (transport.Transport, error) {
			return NewRESTTransport(in.GetUrl(), cfg)
		}}
}

// restCall is one request of a v1.0 operation on the v0.3 routes.
type restCall struct {
	method, path string
	body         any
	taskID       string
}

func task(id string) string { return "/v1/tasks/" + url.PathEscape(id) }

func restRequest(m *a2a.Method, req proto.Message) (restCall, error) {
	switch r := req.(type) {
	case *a2a.SendMessageRequest:
		p := "/v1/message:send"
		if m.Name == a2a.MethodSendStreamingMessage {
			p = "/v1/message:stream"
		}
		return restCall{method: http.MethodPost, path: p, body: v03.PSendToV03(r)}, nil
	case *a2a.GetTaskRequest:
		p := task(r.GetId())
		if r.HistoryLength != nil {
			p += "?historyLength=" + strconv.Itoa(int(r.GetHistoryLength()))
		}
		return restCall{method: http.MethodGet, path: p}, nil
	case *a2a.CancelTaskRequest:
		return restCall{method: http.MethodPost, path: task(r.GetId()) + ":cancel"}, nil
	case *a2a.SubscribeToTaskRequest:
		return restCall{method: http.MethodPost, path: task(r.GetId()) + ":subscribe"}, nil
	case *a2a.TaskPushNotificationConfig:
		return restCall{method: http.MethodPost, path: task(r.GetTaskId()) + "/pushNotificationConfigs", body: v03.PCreatePushToV03(r), taskID: r.GetTaskId()}, nil
	case *a2a.GetTaskPushNotificationConfigRequest:
		return restCall{method: http.MethodGet, path: task(r.GetTaskId()) + "/pushNotificationConfigs/" + url.PathEscape(r.GetId()), taskID: r.GetTaskId()}, nil
	case *a2a.ListTaskPushNotificationConfigsRequest:
		return restCall{method: http.MethodGet, path: task(r.GetTaskId()) + "/pushNotificationConfigs", taskID: r.GetTaskId()}, nil
	case *a2a.DeleteTaskPushNotificationConfigRequest:
		return restCall{method: http.MethodDelete, path: task(r.GetTaskId()) + "/pushNotificationConfigs/" + url.PathEscape(r.GetId())}, nil
	case *a2a.GetExtendedAgentCardRequest:
		return restCall{method: http.MethodGet, path: "/v1/card"}, nil
	}
	return restCall{}, a2a.NewError(a2a.CodeUnsupportedOperation, "%s has no A2A v0.3 counterpart", m.Name)
}

func (t *RESTTransport) send(ctx context.Context, m *a2a.Method, req proto.Message, accept string) (restCall, *http.Response, error) {
	rc, err := restRequest(m, req)
	if err != nil {
		return rc, nil, err
	}
	var body []byte
	if rc.body != nil {
		if body, err = json.Marshal(rc.body); err != nil {
			return rc, nil, fmt.Errorf("a2a client: encoding the %s request: %w", m.Name, err)
		}
	}
	resp, err := t.Send(ctx, m.Name, rc.method, t.base+rc.path, body, httpx.ContentTypeJSON, accept)
	return rc, resp, err
}

// failure reads a v0.3 error body ({code, message, data}), its HTTP
// status telling apart errors that share a code, or reports the status.
func (t *RESTTransport) failure(op string, resp *http.Response, body []byte) error {
	var o v03.ErrorObject
	if json.Unmarshal(body, &o) == nil && o.Code != 0 {
		return v03.ErrorToV1Status(o, resp.StatusCode)
	}
	return httpx.Failure(op, t.base, resp, body)
}

// Call implements a2a.Invoker.
func (t *RESTTransport) Call(ctx context.Context, m *a2a.Method, req proto.Message) (proto.Message, error) {
	rc, resp, err := t.send(ctx, m, req, httpx.ContentTypeJSON)
	if err != nil {
		return nil, err
	}
	rb, err := httpx.ReadAll(ctx, m.Name, t.base, resp)
	if err != nil {
		return nil, err
	}
	if !httpx.Success(resp) {
		return nil, t.failure(m.Name, resp, rb)
	}
	bad := func(err error) error {
		return &transport.Error{Op: m.Name, URL: t.base + rc.path, Phase: transport.PhaseResponse, Err: err}
	}
	switch m.Name {
	case a2a.MethodDeleteTaskPushNotificationConfig:
		return &emptypb.Empty{}, nil
	case a2a.MethodGetExtendedAgentCard:
		return v03.CardToV1(rb)
	case a2a.MethodGetTask, a2a.MethodCancelTask:
		var pt v03.PTask
		if err := json.Unmarshal(rb, &pt); err != nil {
			return nil, bad(err)
		}
		return v03.PTaskToV1(&pt)
	case a2a.MethodSendMessage:
		var ps v03.PStreamResponse
		if err := json.Unmarshal(rb, &ps); err != nil {
			return nil, bad(err)
		}
		ev, err := v03.PEventToV1(&ps)
		if err != nil {
			return nil, err
		}
		if msg := ev.GetMessage(); msg != nil {
			return &a2a.SendMessageResponse{Payload: &a2a.SendMessageResponse_Message{Message: msg}}, nil
		}
		return &a2a.SendMessageResponse{Payload: &a2a.SendMessageResponse_Task{Task: ev.GetTask()}}, nil
	case a2a.MethodListTaskPushNotificationConfigs:
		var l v03.PListPushResponse
		if err := json.Unmarshal(rb, &l); err != nil {
			return nil, bad(err)
		}
		out := &a2a.ListTaskPushNotificationConfigsResponse{}
		for i := range l.Configs {
			c, err := v03.PPushConfigToV1(rc.taskID, &l.Configs[i])
			if err != nil {
				return nil, err
			}
			out.Configs = append(out.Configs, c)
		}
		return out, nil
	default: // push config create and get
		var c v03.PTaskPushConfig
		if err := json.Unmarshal(rb, &c); err != nil {
			return nil, bad(err)
		}
		return v03.PPushConfigToV1(rc.taskID, &c)
	}
}

// Stream implements a2a.Invoker.
func (t *RESTTransport) Stream(ctx context.Context, m *a2a.Method, req proto.Message) iter.Seq2[a2a.StreamEvent, error] {
	return func(yield func(a2a.StreamEvent, error) bool) {
		rc, resp, err := t.send(ctx, m, req, httpx.ContentTypeSSE)
		if err != nil {
			yield(a2a.StreamEvent{}, err)
			return
		}
		if !httpx.IsEventStream(resp) {
			rb, err := httpx.ReadAll(ctx, m.Name, t.base, resp)
			if err == nil {
				err = t.failure(m.Name, resp, rb)
			}
			yield(a2a.StreamEvent{}, err)
			return
		}
		decode := func(ev sse.Event) (*a2a.StreamResponse, error) {
			if ev.Name == "error" {
				var o v03.ErrorObject
				if json.Unmarshal(ev.Data, &o) != nil {
					return nil, &transport.Error{Op: m.Name, URL: t.base + rc.path, Phase: transport.PhaseStream, Err: httpx.BodySnippet(ev.Data)}
				}
				return nil, v03.ErrorToV1(o)
			}
			var ps v03.PStreamResponse
			if err := json.Unmarshal(ev.Data, &ps); err != nil {
				return nil, &transport.Error{Op: m.Name, URL: t.base + rc.path, Phase: transport.PhaseStream, Err: err}
			}
			return v03.PEventToV1(&ps)
		}
		for ev, err := range httpx.ReadEvents(ctx, m.Name, t.base+rc.path, resp, decode) {
			ev.Seq = 0
			if !yield(ev, err) {
				return
			}
		}
	}
}
