package a2a

import (
	"context"
	"iter"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"
)

// Invoker performs operations named by their Method: the one seam that
// every binding's server half calls, that every client transport
// implements, and that Middleware wraps. req is a message of the type
// m.NewRequest returns; a unary result has the type m.NewResponse returns.
//
// Call is used for unary methods and Stream for streaming ones (see
// Method.Streaming). Implementations may be called concurrently. A stream
// follows the rules of Service: it ends when the iterator returns, an
// error is its last item, and a consumer may stop early.
type Invoker interface {
	Call(ctx context.Context, m *Method, req proto.Message) (proto.Message, error)
	Stream(ctx context.Context, m *Method, req proto.Message) iter.Seq2[StreamEvent, error]
}

// Middleware wraps an Invoker: it may inspect or change the request and
// the context, refuse the call, or observe its result, then (or instead)
// call next. The same Middleware works on a server (a2ahttp.Options) and
// on a client (client.Options).
type Middleware func(next Invoker) Invoker

// Chain wraps inv in the middleware; the first one is the outermost, so it
// sees a call first and its result last.
func Chain(inv Invoker, mw ...Middleware) Invoker {
	for i := len(mw) - 1; i >= 0; i-- {
		inv = mw[i](inv)
	}
	return inv
}

// InvokerFuncs is an Invoker made of two functions, for middleware that
// treats unary and streaming calls differently. A nil function passes its
// calls to Next.
type InvokerFuncs struct {
	Next       Invoker
	CallFunc   func(ctx context.Context, m *Method, req proto.Message) (proto.Message, error)
	StreamFunc func(ctx context.Context, m *Method, req proto.Message) iter.Seq2[StreamEvent, error]
}

// Call implements Invoker.
func (f InvokerFuncs) Call(ctx context.Context, m *Method, req proto.Message) (proto.Message, error) {
	if f.CallFunc == nil {
		return f.Next.Call(ctx, m, req)
	}
	return f.CallFunc(ctx, m, req)
}

// Stream implements Invoker.
func (f InvokerFuncs) Stream(ctx context.Context, m *Method, req proto.Message) iter.Seq2[StreamEvent, error] {
	if f.StreamFunc == nil {
		return f.Next.Stream(ctx, m, req)
	}
	return f.StreamFunc(ctx, m, req)
}

// NewInvoker returns an Invoker that performs each operation on svc, by the
// method table. A Service made by NewService gives back its Invoker.
func NewInvoker(svc Service) Invoker {
	if s, ok := svc.(invokerService); ok {
		return s.inv
	}
	return serviceInvoker{svc}
}

// serviceInvoker performs each operation on a Service by the method table.
type serviceInvoker struct{ svc Service }

func (s serviceInvoker) Call(ctx context.Context, m *Method, req proto.Message) (proto.Message, error) {
	if m.call == nil {
		return nil, NewError(CodeMethodNotFound, "%s is not a unary operation", m.Name)
	}
	return m.call(ctx, s.svc, req)
}

func (s serviceInvoker) Stream(ctx context.Context, m *Method, req proto.Message) iter.Seq2[StreamEvent, error] {
	if m.stream == nil {
		return errorStream(NewError(CodeMethodNotFound, "%s is not a streaming operation", m.Name))
	}
	return m.stream(ctx, s.svc, req)
}

// errorStream is a stream whose only item is err.
func errorStream(err error) iter.Seq2[StreamEvent, error] {
	return func(yield func(StreamEvent, error) bool) { yield(StreamEvent{}, err) }
}

// NewService returns the Service whose operations call inv with their
// entry of the method table. It is the only place where the eleven
// operations are spelled out for an Invoker: clients and proxies get a
// Service from it.
func NewService(inv Invoker) Service { return invokerService{inv} }

// invokerService is a Service over an Invoker; each method names its
// operation's table entry and types the result.
type invokerService struct{ inv Invoker }

// call performs a unary operation and types its result.
func call[Resp proto.Message](ctx context.Context, inv Invoker, name string, req proto.Message) (Resp, error) {
	var zero Resp
	out, err := inv.Call(ctx, byName[name], req)
	if err != nil {
		return zero, err
	}
	resp, ok := out.(Resp)
	if !ok {
		return zero, NewError(CodeInternal, "%s returned %T", name, out)
	}
	return resp, nil
}

func (s invokerService) SendMessage(ctx context.Context, req *SendMessageRequest) (*SendMessageResponse, error) {
	return call[*SendMessageResponse](ctx, s.inv, MethodSendMessage, req)
}

func (s invokerService) SendStreamingMessage(ctx context.Context, req *SendMessageRequest) iter.Seq2[StreamEvent, error] {
	return s.inv.Stream(ctx, byName[MethodSendStreamingMessage], req)
}

func (s invokerService) GetTask(ctx context.Context, req *GetTaskRequest) (*Task, error) {
	return call[*Task](ctx, s.inv, MethodGetTask, req)
}

func (s invokerService) ListTasks(ctx context.Context, req *ListTasksRequest) (*ListTasksResponse, error) {
	return call[*ListTasksResponse](ctx, s.inv, MethodListTasks, req)
}

func (s invokerService) CancelTask(ctx context.Context, req *CancelTaskRequest) (*Task, error) {
	return call[*Task](ctx, s.inv, MethodCancelTask, req)
}

func (s invokerService) SubscribeToTask(ctx context.Context, req *SubscribeToTaskRequest) iter.Seq2[StreamEvent, error] {
	return s.inv.Stream(ctx, byName[MethodSubscribeToTask], req)
}

func (s invokerService) CreateTaskPushNotificationConfig(ctx context.Context, req *TaskPushNotificationConfig) (*TaskPushNotificationConfig, error) {
	return call[*TaskPushNotificationConfig](ctx, s.inv, MethodCreateTaskPushNotificationConfig, req)
}

func (s invokerService) GetTaskPushNotificationConfig(ctx context.Context, req *GetTaskPushNotificationConfigRequest) (*TaskPushNotificationConfig, error) {
	return call[*TaskPushNotificationConfig](ctx, s.inv, MethodGetTaskPushNotificationConfig, req)
}

func (s invokerService) ListTaskPushNotificationConfigs(ctx context.Context, req *ListTaskPushNotificationConfigsRequest) (*ListTaskPushNotificationConfigsResponse, error) {
	return call[*ListTaskPushNotificationConfigsResponse](ctx, s.inv, MethodListTaskPushNotificationConfigs, req)
}

func (s invokerService) DeleteTaskPushNotificationConfig(ctx context.Context, req *DeleteTaskPushNotificationConfigRequest) error {
	_, err := call[*emptypb.Empty](ctx, s.inv, MethodDeleteTaskPushNotificationConfig, req)
	return err
}

func (s invokerService) GetExtendedAgentCard(ctx context.Context, req *GetExtendedAgentCardRequest) (*AgentCard, error) {
	return call[*AgentCard](ctx, s.inv, MethodGetExtendedAgentCard, req)
}
