package v03grpc

import (
	"context"
	"errors"
	"iter"
	"net/http"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/grpcbind"
	"parley.dev/parley/internal/transport"
	"parley.dev/parley/internal/v03"
	"parley.dev/parley/internal/v03/v03pb"
)

// Transport is the client half: v1.0 calls to a v0.3 agent's
// a2a.v1.A2AService, answers read back as v1.0.
type Transport struct {
	target, base string
	hc           *http.Client
	md           transport.Headers // metadata sent on every call
}

var _ transport.Transport = (*Transport)(nil)

// NewTransport returns a v0.3 gRPC transport to target (host:port,
// http://host:port or https://host:port), as grpcbind.NewTransport dials.
func NewTransport(target string, cfg transport.Config) (*Transport, error) {
	base, hc, md, err := grpcbind.Dial(target, cfg)
	if err != nil {
		return nil, err
	}
	md.Set("A2A-Version", v03.ProtocolVersion)
	return &Transport{target: target, base: base, hc: hc, md: transport.Headers{Fixed: md, Inject: cfg.Inject, Token: cfg.Token}}, nil
}

// Factory is the factory of the v0.3 gRPC transport, for interfaces at
// protocol version 0.3.
func Factory() transport.Factory {
	return transport.Factory{Binding: a2a.BindingGRPC, Version: v03.ProtocolVersion,
		New: func(in *a2a.AgentInterface, cfg transport.Config) (transport.Transport, error) {
			return NewTransport(in.GetUrl(), cfg)
		}}
}

// Close implements transport.Transport.
func (t *Transport) Close() error { t.hc.CloseIdleConnections(); return nil }

func (t *Transport) url(rpc string) string { return t.base + "/" + ServiceName + "/" + rpc }

// unary calls one rpc with the transport's metadata.
func unaryCall[Req, Resp any](ctx context.Context, t *Transport, rpc string, in *Req) (*Resp, error) {
	c := connect.NewClient[Req, Resp](t.hc, t.url(rpc), connect.WithGRPC(), grpcbind.ClientReadLimit(grpcbind.MaxResponseBytes))
	req := connect.NewRequest(in)
	if err := t.md.Apply(ctx, req.Header()); err != nil {
		return nil, err
	}
	resp, err := c.CallUnary(ctx, req)
	if err != nil {
		return nil, t.failure(ctx, rpc, err)
	}
	return resp.Msg, nil
}

// failure turns a call's error into the error the client reports.
func (t *Transport) failure(ctx context.Context, op string, err error) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	var ce *connect.Error
	if errors.As(err, &ce) && connect.IsWireError(err) {
		if ae := grpcbind.StatusError(ce); ae != nil {
			return ae
		}
		// A transport condition (UNAVAILABLE without an ErrorInfo, say).
		wait, _ := grpcbind.RetryDelay(ce)
		return &transport.Error{Op: op, URL: t.target, Phase: transport.PhaseResponse,
			GRPCStatus: a2a.GRPCCodeName(int(ce.Code())), RetryAfter: wait, Err: err}
	}
	if transport.IsConnect(err) {
		return &transport.Error{Op: op, URL: t.target, Phase: transport.PhaseConnect, Err: err}
	}
	return &transport.Error{Op: op, URL: t.target, Phase: transport.PhaseResponse, Err: err}
}

// toV1 reads a v0.3 answer through package v03's ProtoJSON codec.
func toV1(m proto.Message, out any) error {
	b, err := protojson.Marshal(m)
	if err != nil {
		return err
	}
	return v03.Decode(b, out)
}

func taskName(id string) string { return "tasks/" + id }

// Call implements a2a.Invoker.
func (t *Transport) Call(ctx context.Context, m *a2a.Method, req proto.Message) (proto.Message, error) {
	switch r := req.(type) {
	case *a2a.SendMessageRequest:
		in := &v03pb.SendMessageRequest{}
		if err := fromCodec(v03.PSendToV03(r), in); err != nil {
			return nil, err
		}
		out, err := unaryCall[v03pb.SendMessageRequest, v03pb.SendMessageResponse](ctx, t, "SendMessage", in)
		if err != nil {
			return nil, err
		}
		ev, err := t.event(out)
		if err != nil {
			return nil, err
		}
		if msg := ev.GetMessage(); msg != nil {
			return &a2a.SendMessageResponse{Payload: &a2a.SendMessageResponse_Message{Message: msg}}, nil
		}
		return &a2a.SendMessageResponse{Payload: &a2a.SendMessageResponse_Task{Task: ev.GetTask()}}, nil
	case *a2a.GetTaskRequest:
		out, err := unaryCall[v03pb.GetTaskRequest, v03pb.Task](ctx, t, "GetTask", &v03pb.GetTaskRequest{Name: taskName(r.GetId()), HistoryLength: r.GetHistoryLength()})
		return taskOrErr(out, err)
	case *a2a.CancelTaskRequest:
		out, err := unaryCall[v03pb.CancelTaskRequest, v03pb.Task](ctx, t, "CancelTask", &v03pb.CancelTaskRequest{Name: taskName(r.GetId())})
		return taskOrErr(out, err)
	case *a2a.TaskPushNotificationConfig:
		body := v03.PCreatePushToV03(r)
		cfg := &v03pb.TaskPushNotificationConfig{}
		if err := fromCodec(body.Config, cfg); err != nil {
			return nil, err
		}
		out, err := unaryCall[v03pb.CreateTaskPushNotificationConfigRequest, v03pb.TaskPushNotificationConfig](ctx, t, "CreateTaskPushNotificationConfig",
			&v03pb.CreateTaskPushNotificationConfigRequest{Parent: taskName(r.GetTaskId()), ConfigId: r.GetId(), Config: cfg})
		return configOrErr(r.GetTaskId(), out, err)
	case *a2a.GetTaskPushNotificationConfigRequest:
		out, err := unaryCall[v03pb.GetTaskPushNotificationConfigRequest, v03pb.TaskPushNotificationConfig](ctx, t, "GetTaskPushNotificationConfig",
			&v03pb.GetTaskPushNotificationConfigRequest{Name: v03.ConfigName(r.GetTaskId(), r.GetId())})
		return configOrErr(r.GetTaskId(), out, err)
	case *a2a.ListTaskPushNotificationConfigsRequest:
		out, err := unaryCall[v03pb.ListTaskPushNotificationConfigRequest, v03pb.ListTaskPushNotificationConfigResponse](ctx, t, "ListTaskPushNotificationConfig",
			&v03pb.ListTaskPushNotificationConfigRequest{Parent: taskName(r.GetTaskId())})
		if err != nil {
			return nil, err
		}
		list := &a2a.ListTaskPushNotificationConfigsResponse{}
		for _, c := range out.GetConfigs() {
			v1, err := configOrErr(r.GetTaskId(), c, nil)
			if err != nil {
				return nil, err
			}
			list.Configs = append(list.Configs, v1.(*a2a.TaskPushNotificationConfig))
		}
		return list, nil
	case *a2a.DeleteTaskPushNotificationConfigRequest:
		_, err := unaryCall[v03pb.DeleteTaskPushNotificationConfigRequest, emptypb.Empty](ctx, t, "DeleteTaskPushNotificationConfig",
			&v03pb.DeleteTaskPushNotificationConfigRequest{Name: v03.ConfigName(r.GetTaskId(), r.GetId())})
		if err != nil {
			return nil, err
		}
		return &emptypb.Empty{}, nil
	case *a2a.GetExtendedAgentCardRequest:
		out, err := unaryCall[v03pb.GetAgentCardRequest, v03pb.AgentCard](ctx, t, "GetAgentCard", &v03pb.GetAgentCardRequest{})
		if err != nil {
			return nil, err
		}
		b, err := protojson.Marshal(out)
		if err != nil {
			return nil, err
		}
		return v03.CardToV1(b)
	}
	_, _, err := v03.EncodeRequest(m, req) // ListTasks: UnsupportedOperation
	return nil, err
}

func taskOrErr(out *v03pb.Task, err error) (proto.Message, error) {
	if err != nil {
		return nil, err
	}
	var pt v03.PTask
	if err := toV1(out, &pt); err != nil {
		return nil, err
	}
	return v03.PTaskToV1(&pt)
}

func configOrErr(taskID string, out *v03pb.TaskPushNotificationConfig, err error) (proto.Message, error) {
	if err != nil {
		return nil, err
	}
	var c v03.PTaskPushConfig
	if err := toV1(out, &c); err != nil {
		return nil, err
	}
	return v03.PPushConfigToV1(taskID, &c)
}

// event reads a SendMessageResponse or StreamResponse as a v1.0 event.
func (t *Transport) event(m proto.Message) (*a2a.StreamResponse, error) {
	var ps v03.PStreamResponse
	if err := toV1(m, &ps); err != nil {
		return nil, err
	}
	return v03.PEventToV1(&ps)
}

// Stream implements a2a.Invoker.
func (t *Transport) Stream(ctx context.Context, m *a2a.Method, req proto.Message) iter.Seq2[a2a.StreamEvent, error] {
	return func(yield func(a2a.StreamEvent, error) bool) {
		var st *connect.ServerStreamForClient[v03pb.StreamResponse]
		var err error
		switch r := req.(type) {
		case *a2a.SendMessageRequest:
			in := &v03pb.SendMessageRequest{}
			if err = fromCodec(v03.PSendToV03(r), in); err == nil {
				st, err = serverStream(ctx, t, "SendStreamingMessage", in)
			}
		case *a2a.SubscribeToTaskRequest:
			st, err = serverStream(ctx, t, "TaskSubscription", &v03pb.TaskSubscriptionRequest{Name: taskName(r.GetId())})
		default:
			err = a2a.NewError(a2a.CodeUnsupportedOperation, "%s is not a v0.3 stream", m.Name)
		}
		if err != nil {
			yield(a2a.StreamEvent{}, err)
			return
		}
		defer st.Close()
		for st.Receive() {
			ev, err := t.event(st.Msg())
			if !yield(a2a.StreamEvent{Response: ev}, err) || err != nil {
				return
			}
		}
		if err := st.Err(); err != nil {
			yield(a2a.StreamEvent{}, t.failure(ctx, m.Name, err))
		}
	}
}

func serverStream[Req any](ctx context.Context, t *Transport, rpc string, in *Req) (*connect.ServerStreamForClient[v03pb.StreamResponse], error) {
	c := connect.NewClient[Req, v03pb.StreamResponse](t.hc, t.url(rpc), connect.WithGRPC(), grpcbind.ClientReadLimit(grpcbind.MaxResponseBytes))
	req := connect.NewRequest(in)
	if err := t.md.Apply(ctx, req.Header()); err != nil {
		return nil, err
	}
	st, err := c.CallServerStream(ctx, req)
	if err != nil {
		return nil, t.failure(ctx, rpc, err)
	}
	return st, nil
}
