package equivalence_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/a2aconnect"
)

// The raw wire of gRPC: calls through the generated client over cleartext
// HTTP/2, statuses decoded into an outcome.

// grpcUnary calls a unary RPC with the generated client.
func (e *env) grpcUnary(ctx context.Context, method string, req proto.Message, o callOpts) outcome {
	c := e.grpc
	var (
		v   proto.Message
		h   http.Header
		err error
	)
	switch method {
	case a2a.MethodSendMessage:
		v, h, err = unaryCall(ctx, c.SendMessage, req, o)
	case a2a.MethodGetTask:
		v, h, err = unaryCall(ctx, c.GetTask, req, o)
	case a2a.MethodListTasks:
		v, h, err = unaryCall(ctx, c.ListTasks, req, o)
	case a2a.MethodCancelTask:
		v, h, err = unaryCall(ctx, c.CancelTask, req, o)
	case a2a.MethodCreateTaskPushNotificationConfig:
		v, h, err = unaryCall(ctx, c.CreateTaskPushNotificationConfig, req, o)
	case a2a.MethodGetTaskPushNotificationConfig:
		v, h, err = unaryCall(ctx, c.GetTaskPushNotificationConfig, req, o)
	case a2a.MethodListTaskPushNotificationConfigs:
		v, h, err = unaryCall(ctx, c.ListTaskPushNotificationConfigs, req, o)
	case a2a.MethodDeleteTaskPushNotificationConfig:
		v, h, err = unaryCall(ctx, c.DeleteTaskPushNotificationConfig, req, o)
	case a2a.MethodGetExtendedAgentCard:
		v, h, err = unaryCall(ctx, c.GetExtendedAgentCard, req, o)
	default: // an operation that does not exist
		raw := connect.NewClient[emptypb.Empty, emptypb.Empty](e.h2c, e.base+"/"+a2aconnect.A2AServiceName+"/"+method, connect.WithGRPC())
		v, h, err = unaryCall(ctx, raw.CallUnary, &emptypb.Empty{}, o)
	}
	if err != nil {
		return grpcOutcome(e.t, err, nil)
	}
	return outcome{value: v, extensions: h.Get("A2A-Extensions"), challenge: h.Get("WWW-Authenticate")}
}

func unaryCall[Req, Resp any](ctx context.Context, f func(context.Context, *connect.Request[Req]) (*connect.Response[Resp], error), req proto.Message, o callOpts) (proto.Message, http.Header, error) {
	if req == nil {
		req = any(new(Req)).(proto.Message)
	}
	r := connect.NewRequest(any(req).(*Req))
	for k, v := range o.header() {
		r.Header()[k] = v
	}
	resp, err := f(ctx, r)
	if err != nil {
		return nil, nil, err
	}
	return any(resp.Msg).(proto.Message), resp.Header(), nil
}

// grpcOutcome decodes a gRPC status: the ErrorInfo reason names an A2A
// error; other errors are known by their gRPC code.
func grpcOutcome(t testing.TB, err error, header http.Header) outcome {
	var ce *connect.Error
	if !errors.As(err, &ce) {
		t.Fatalf("gRPC call failed without a status: %v", err)
	}
	if !connect.IsWireError(err) {
		t.Fatalf("gRPC error did not come from the server: %v", err)
	}
	w := &wireErr{message: ce.Message()}
	for _, d := range ce.Details() {
		v, err := d.Value()
		if err != nil {
			t.Fatalf("undecodable error detail %s: %v", d.Type(), err)
		}
		switch x := v.(type) {
		case *errdetails.ErrorInfo:
			w.reason, w.domain, w.meta = x.Reason, x.Domain, x.Metadata
		case *errdetails.BadRequest:
			for _, f := range x.FieldViolations {
				w.fields = append(w.fields, f.Field)
			}
		}
	}
	if c, ok := a2a.CodeForReason(w.reason); ok {
		w.code = c
	} else {
		switch ce.Code() {
		case connect.CodeInvalidArgument:
			w.code = a2a.CodeInvalidParams
		case connect.CodeUnauthenticated:
			w.code = a2a.CodeUnauthenticated
		case connect.CodeUnimplemented:
			w.code = a2a.CodeMethodNotFound
		case connect.CodeResourceExhausted:
			w.code = a2a.CodeRequestTooLarge
		default:
			w.code = a2a.CodeInternal
		}
	}
	if header == nil {
		header = ce.Meta()
	}
	return outcome{err: w, extensions: header.Get("A2A-Extensions"), challenge: header.Get("WWW-Authenticate")}
}

// grpcSource reads a server stream.
type grpcSource struct {
	t      testing.TB
	s      *connect.ServerStreamForClient[a2a.StreamResponse]
	cancel context.CancelFunc
	last   outcome // the status that ended the stream
}

func (g *grpcSource) recv() (*a2a.StreamResponse, *wireErr) {
	if g.s.Receive() {
		return g.s.Msg(), nil
	}
	if err := g.s.Err(); err != nil {
		g.last = grpcOutcome(g.t, err, nil)
		return nil, g.last.err
	}
	return nil, nil
}

func (g *grpcSource) close() { g.cancel(); g.s.Close() }

func (e *env) grpcOpen(ctx context.Context, method string, req proto.Message, o callOpts) (source, outcome) {
	ctx, cancel := context.WithCancel(ctx)
	r := connect.NewRequest[a2a.SendMessageRequest](nil)
	var (
		s   *connect.ServerStreamForClient[a2a.StreamResponse]
		err error
	)
	switch method {
	case a2a.MethodSendStreamingMessage:
		r.Msg = req.(*a2a.SendMessageRequest)
		for k, v := range o.header() {
			r.Header()[k] = v
		}
		s, err = e.grpc.SendStreamingMessage(ctx, r)
	case a2a.MethodSubscribeToTask:
		sr := connect.NewRequest(req.(*a2a.SubscribeToTaskRequest))
		for k, v := range o.header() {
			sr.Header()[k] = v
		}
		s, err = e.grpc.SubscribeToTask(ctx, sr)
	default:
		e.t.Fatalf("%s is not a streaming operation", method)
	}
	if err != nil {
		cancel()
		o := grpcOutcome(e.t, err, nil)
		return errSource{o.err}, o
	}
	g := &grpcSource{t: e.t, s: s, cancel: cancel}
	// The first Receive reads the response headers (or the status of a
	// stream refused before its first event).
	first, werr := g.recv()
	if first == nil {
		g.close()
		if werr == nil {
			e.t.Fatalf("%s: the stream ended without an event or a status", method)
		}
		return errSource{werr}, outcome{extensions: g.last.extensions, challenge: g.last.challenge}
	}
	h := s.ResponseHeader()
	out := outcome{extensions: h.Get("A2A-Extensions"), challenge: h.Get("WWW-Authenticate")}
	return &prefetched{first: first, source: g}, out
}

// prefetched is a source whose first event was already read.
type prefetched struct {
	first *a2a.StreamResponse
	source
}

func (p *prefetched) recv() (*a2a.StreamResponse, *wireErr) {
	if p.first != nil {
		ev := p.first
		p.first = nil
		return ev, nil
	}
	return p.source.recv()
}
