package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"strconv"
	"sync/atomic"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
)

// JSONRPCTransport is the JSON-RPC 2.0 binding (brief §9): every operation
// is a POST of {"jsonrpc":"2.0","id":N,"method":...,"params":...} to the
// interface URL exactly as the card gives it, with numeric ids counting up
// from 1. Streams are Server-Sent Events whose data lines are whole JSON-RPC
// responses. It is safe for concurrent use.
type JSONRPCTransport struct {
	url string
	httpBase
	lastID atomic.Int64
}

var _ Transport = (*JSONRPCTransport)(nil)

// NewJSONRPCTransport returns a transport posting to url.
func NewJSONRPCTransport(url string, cfg TransportConfig) (*JSONRPCTransport, error) {
	if _, err := checkURL(url); err != nil {
		return nil, err
	}
	return &JSONRPCTransport{url: url, httpBase: newHTTPBase(cfg)}, nil
}

// rpcResponse is a JSON-RPC response envelope.
type rpcResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *rpcError       `json:"error"`
}

// envelope renders a request. GetExtendedAgentCard with nothing to say
// goes without params (brief §3.0).
func (t *JSONRPCTransport) envelope(method string, params proto.Message) (int64, []byte, error) {
	id := t.lastID.Add(1)
	b := make([]byte, 0, 256)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `,"method":`...)
	b = strconv.AppendQuote(b, method)
	valid := params != nil && params.ProtoReflect().IsValid()
	switch {
	case valid && (method != a2a.MethodGetExtendedAgentCard || proto.Size(params) > 0):
		b = append(b, `,"params":`...)
		var err error
		if b, err = a2a.AppendJSON(b, params); err != nil {
			return 0, nil, err
		}
	case method != a2a.MethodGetExtendedAgentCard:
		b = append(b, `,"params":{}`...)
	}
	return id, append(b, '}'), nil
}

// parse reads a response envelope and checks its id. It returns the result
// or the error the envelope carries.
func (t *JSONRPCTransport) parse(op string, id int64, body []byte) (json.RawMessage, error) {
	var env rpcResponse
	if err := json.Unmarshal(body, &env); err != nil {
		return nil, &TransportError{Op: op, URL: t.url, Phase: PhaseResponse, Err: fmt.Errorf("not a JSON-RPC response: %w", err)}
	}
	if env.Error != nil {
		return nil, env.Error.toError()
	}
	if env.JSONRPC != "2.0" || env.Result == nil {
		return nil, &TransportError{Op: op, URL: t.url, Phase: PhaseResponse, Err: bodySnippet(body)}
	}
	if got := string(bytes.TrimSpace(env.ID)); got != strconv.FormatInt(id, 10) {
		return nil, &TransportError{Op: op, URL: t.url, Phase: PhaseResponse,
			Err: fmt.Errorf("response id %s does not match request id %d", got, id)}
	}
	return env.Result, nil
}

// isEnvelope reports whether a body looks like a JSON-RPC response.
func isEnvelope(body []byte) bool {
	var probe struct {
		JSONRPC string `json:"jsonrpc"`
	}
	return json.Unmarshal(body, &probe) == nil && probe.JSONRPC != ""
}

// call performs a unary operation and decodes the result into out (nil to
// ignore it).
func (t *JSONRPCTransport) call(ctx context.Context, method string, params, out proto.Message) error {
	id, body, err := t.envelope(method, params)
	if err != nil {
		return fmt.Errorf("a2a client: encoding the %s request: %w", method, err)
	}
	resp, err := t.send(ctx, method, "POST", t.url, body, contentTypeJSON, contentTypeJSON)
	if err != nil {
		return err
	}
	rb, err := readAll(ctx, method, t.url, resp)
	if err != nil {
		return err
	}
	if (resp.StatusCode < 200 || resp.StatusCode > 299) && !isEnvelope(rb) {
		return failure(method, t.url, resp, rb)
	}
	result, err := t.parse(method, id, rb)
	if err != nil {
		return err
	}
	if out != nil {
		if err := a2a.Unmarshal(result, out); err != nil {
			return &TransportError{Op: method, URL: t.url, Phase: PhaseResponse, Err: err}
		}
	}
	return nil
}

// stream performs a streaming operation.
func (t *JSONRPCTransport) stream(ctx context.Context, method string, params proto.Message) iter.Seq2[a2a.StreamEvent, error] {
	return func(yield func(a2a.StreamEvent, error) bool) {
		id, body, err := t.envelope(method, params)
		if err != nil {
			yield(a2a.StreamEvent{}, fmt.Errorf("a2a client: encoding the %s request: %w", method, err))
			return
		}
		resp, err := t.send(ctx, method, "POST", t.url, body, contentTypeJSON, contentTypeSSE)
		if err != nil {
			yield(a2a.StreamEvent{}, err)
			return
		}
		if !isEventStream(resp) {
			// An error before the stream started comes as an ordinary
			// JSON-RPC response; so may a server's single answer.
			rb, err := readAll(ctx, method, t.url, resp)
			if err == nil && (resp.StatusCode < 200 || resp.StatusCode > 299) && !isEnvelope(rb) {
				err = failure(method, t.url, resp, rb)
			}
			var result json.RawMessage
			if err == nil {
				result, err = t.parse(method, id, rb)
			}
			if err != nil {
				yield(a2a.StreamEvent{}, err)
				return
			}
			sr := &a2a.StreamResponse{}
			if err := a2a.Unmarshal(result, sr); err != nil || sr.Payload == nil {
				yield(a2a.StreamEvent{}, &TransportError{Op: method, URL: t.url, Phase: PhaseResponse,
					Err: fmt.Errorf("expected %s, got %q: %s", contentTypeSSE, resp.Header.Get("Content-Type"), bodySnippet(rb))})
				return
			}
			yield(a2a.StreamEvent{Response: sr}, nil)
			return
		}
		readEvents(ctx, method, t.url, resp, func(ev sseEvent) (*a2a.StreamResponse, error) {
			result, err := t.parse(method, id, ev.data)
			if err != nil {
				if te, ok := err.(*TransportError); ok {
					te.Phase = PhaseStream
				}
				return nil, err
			}
			sr := &a2a.StreamResponse{}
			if err := a2a.Unmarshal(result, sr); err != nil {
				return nil, &TransportError{Op: method, URL: t.url, Phase: PhaseStream, Err: err}
			}
			return sr, nil
		}, yield)
	}
}

// SendMessage implements a2a.Service.
func (t *JSONRPCTransport) SendMessage(ctx context.Context, req *a2a.SendMessageRequest) (*a2a.SendMessageResponse, error) {
	out := &a2a.SendMessageResponse{}
	if err := t.call(ctx, a2a.MethodSendMessage, req, out); err != nil {
		return nil, err
	}
	return out, nil
}

// SendStreamingMessage implements a2a.Service.
func (t *JSONRPCTransport) SendStreamingMessage(ctx context.Context, req *a2a.SendMessageRequest) iter.Seq2[a2a.StreamEvent, error] {
	return t.stream(ctx, a2a.MethodSendStreamingMessage, req)
}

// GetTask implements a2a.Service.
func (t *JSONRPCTransport) GetTask(ctx context.Context, req *a2a.GetTaskRequest) (*a2a.Task, error) {
	out := &a2a.Task{}
	if err := t.call(ctx, a2a.MethodGetTask, req, out); err != nil {
		return nil, err
	}
	return out, nil
}

// ListTasks implements a2a.Service.
func (t *JSONRPCTransport) ListTasks(ctx context.Context, req *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	out := &a2a.ListTasksResponse{}
	if err := t.call(ctx, a2a.MethodListTasks, req, out); err != nil {
		return nil, err
	}
	return out, nil
}

// CancelTask implements a2a.Service.
func (t *JSONRPCTransport) CancelTask(ctx context.Context, req *a2a.CancelTaskRequest) (*a2a.Task, error) {
	out := &a2a.Task{}
	if err := t.call(ctx, a2a.MethodCancelTask, req, out); err != nil {
		return nil, err
	}
	return out, nil
}

// SubscribeToTask implements a2a.Service.
func (t *JSONRPCTransport) SubscribeToTask(ctx context.Context, req *a2a.SubscribeToTaskRequest) iter.Seq2[a2a.StreamEvent, error] {
	return t.stream(ctx, a2a.MethodSubscribeToTask, req)
}

// CreateTaskPushNotificationConfig implements a2a.Service.
func (t *JSONRPCTransport) CreateTaskPushNotificationConfig(ctx context.Context, req *a2a.TaskPushNotificationConfig) (*a2a.TaskPushNotificationConfig, error) {
	out := &a2a.TaskPushNotificationConfig{}
	if err := t.call(ctx, a2a.MethodCreateTaskPushNotificationConfig, req, out); err != nil {
		return nil, err
	}
	return out, nil
}

// GetTaskPushNotificationConfig implements a2a.Service.
func (t *JSONRPCTransport) GetTaskPushNotificationConfig(ctx context.Context, req *a2a.GetTaskPushNotificationConfigRequest) (*a2a.TaskPushNotificationConfig, error) {
	out := &a2a.TaskPushNotificationConfig{}
	if err := t.call(ctx, a2a.MethodGetTaskPushNotificationConfig, req, out); err != nil {
		return nil, err
	}
	return out, nil
}

// ListTaskPushNotificationConfigs implements a2a.Service.
func (t *JSONRPCTransport) ListTaskPushNotificationConfigs(ctx context.Context, req *a2a.ListTaskPushNotificationConfigsRequest) (*a2a.ListTaskPushNotificationConfigsResponse, error) {
	out := &a2a.ListTaskPushNotificationConfigsResponse{}
	if err := t.call(ctx, a2a.MethodListTaskPushNotificationConfigs, req, out); err != nil {
		return nil, err
	}
	return out, nil
}

// DeleteTaskPushNotificationConfig implements a2a.Service.
func (t *JSONRPCTransport) DeleteTaskPushNotificationConfig(ctx context.Context, req *a2a.DeleteTaskPushNotificationConfigRequest) error {
	return t.call(ctx, a2a.MethodDeleteTaskPushNotificationConfig, req, nil)
}

// GetExtendedAgentCard implements a2a.Service.
func (t *JSONRPCTransport) GetExtendedAgentCard(ctx context.Context, req *a2a.GetExtendedAgentCardRequest) (*a2a.AgentCard, error) {
	out := &a2a.AgentCard{}
	if err := t.call(ctx, a2a.MethodGetExtendedAgentCard, req, out); err != nil {
		return nil, err
	}
	return out, nil
}

// Close implements Transport.
func (t *JSONRPCTransport) Close() error {
	t.hc.CloseIdleConnections()
	return nil
}
