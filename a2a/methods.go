package a2a

import (
	"context"
	"iter"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"
)

// Method describes one operation of the A2A service in every binding. The
// method table (see Methods) drives every binding on both sides (server handlers and
// client transports) through the Invoker seam, so adding an operation is
// one entry here, one method on Service and NewService, and its core
// implementation.
type Method struct {
	// Name is the operation's name: the JSON-RPC method and the gRPC rpc.
	Name string
	// HTTPMethod and Path are the HTTP+JSON route (spec §11.3, taken
	// from the proto's google.api.http annotations). Path segments in braces are
	// variables; every route is also served under a leading /{tenant}.
	HTTPMethod string
	Path       string
	// AltHTTPMethod is a second verb accepted on the same path ("" if none).
	AltHTTPMethod string
	// Streaming operations answer with Server-Sent Events.
	Streaming bool
	// HasBody is true when the HTTP+JSON request carries a JSON body.
	HasBody bool
	// RetrySafe is true when receiving the same request twice does no harm,
	// so a client may repeat it after a failure that left it unsure
	// whether the server got it: the reads, the operations the spec makes
	// idempotent (CancelTask, DeleteTaskPushNotificationConfig, spec
	// §3.3.1, §3.1.10), and SendMessage and SendStreamingMessage, which a
	// client resends with the same messageId (decision B14: a resend
	// returns the original result and does not run the agent again).
	RetrySafe bool
	// Right is the right a caller needs to call the operation (spec
	// §3.3.2, §13.1): the core refuses a caller whose credential lacks it
	// with PermissionDeniedError before it reads anything (Authorize).
	Right Right
	// NewRequest returns an empty request message of the operation.
	NewRequest func() proto.Message
	// NewResponse returns an empty response message of a unary operation
	// (emptypb.Empty for DeleteTaskPushNotificationConfig); nil for
	// streaming ones, whose items are StreamResponse messages.
	NewResponse func() proto.Message

	// call and stream invoke the operation on a Service (see NewInvoker).
	call   func(ctx context.Context, s Service, req proto.Message) (proto.Message, error)
	stream func(ctx context.Context, s Service, req proto.Message) iter.Seq2[StreamEvent, error]
}

// unary adapts a typed unary operation to Method.call.
func unary[Req, Resp proto.Message](f func(Service, context.Context, Req) (Resp, error)) func(context.Context, Service, proto.Message) (proto.Message, error) {
	return func(ctx context.Context, s Service, req proto.Message) (proto.Message, error) {
		resp, err := f(s, ctx, req.(Req))
		if err != nil {
			return nil, err
		}
		return resp, nil
	}
}

// streaming adapts a typed streaming operation to Method.stream.
func streaming[Req proto.Message](f func(Service, context.Context, Req) iter.Seq2[StreamEvent, error]) func(context.Context, Service, proto.Message) iter.Seq2[StreamEvent, error] {
	return func(ctx context.Context, s Service, req proto.Message) iter.Seq2[StreamEvent, error] {
		return f(s, ctx, req.(Req))
	}
}

func newMsg[T any, P interface {
	*T
	proto.Message
}]() func() proto.Message {
	return func() proto.Message { return P(new(T)) }
}

func deleteConfig(s Service, ctx context.Context, req *DeleteTaskPushNotificationConfigRequest) (*emptypb.Empty, error) {
	if err := s.DeleteTaskPushNotificationConfig(ctx, req); err != nil {
		return nil, err
	}
	return &emptypb.Empty{}, nil
}

// The operation names.
const (
	MethodSendMessage                      = "SendMessage"
	MethodSendStreamingMessage             = "SendStreamingMessage"
	MethodGetTask                          = "GetTask"
	MethodListTasks                        = "ListTasks"
	MethodCancelTask                       = "CancelTask"
	MethodSubscribeToTask                  = "SubscribeToTask"
	MethodCreateTaskPushNotificationConfig = "CreateTaskPushNotificationConfig"
	MethodGetTaskPushNotificationConfig    = "GetTaskPushNotificationConfig"
	MethodListTaskPushNotificationConfigs  = "ListTaskPushNotificationConfigs"
	MethodDeleteTaskPushNotificationConfig = "DeleteTaskPushNotificationConfig"
	MethodGetExtendedAgentCard             = "GetExtendedAgentCard"
)

// methods is the method table: the eleven operations, in the order of
// spec §3.1. It is unexported so that no importer can replace, reorder or
// extend it; Methods and MethodByName read it.
//
// SubscribeToTask: the proto's google.api.http annotation says GET and
// the prose (spec §5.3, §11.3.2) says POST; Parley serves both
// (decision B1).
var methods []Method

func init() {
	methods = []Method{
		{Name: MethodSendMessage, HTTPMethod: "POST", Path: "/message:send", HasBody: true, RetrySafe: true,
			Right:      RightTasksWrite,
			NewRequest: newMsg[SendMessageRequest](), NewResponse: newMsg[SendMessageResponse](), call: unary(Service.SendMessage)},
		{Name: MethodSendStreamingMessage, HTTPMethod: "POST", Path: "/message:stream", HasBody: true, Streaming: true, RetrySafe: true,
			Right:      RightTasksWrite,
			NewRequest: newMsg[SendMessageRequest](), stream: streaming(Service.SendStreamingMessage)},
		{Name: MethodGetTask, HTTPMethod: "GET", Path: "/tasks/{id}", RetrySafe: true,
			Right:      RightTasksRead,
			NewRequest: newMsg[GetTaskRequest](), NewResponse: newMsg[Task](), call: unary(Service.GetTask)},
		{Name: MethodListTasks, HTTPMethod: "GET", Path: "/tasks", RetrySafe: true,
			Right:      RightTasksRead,
			NewRequest: newMsg[ListTasksRequest](), NewResponse: newMsg[ListTasksResponse](), call: unary(Service.ListTasks)},
		{Name: MethodCancelTask, HTTPMethod: "POST", Path: "/tasks/{id}:cancel", HasBody: true, RetrySafe: true,
			Right:      RightTasksWrite,
			NewRequest: newMsg[CancelTaskRequest](), NewResponse: newMsg[Task](), call: unary(Service.CancelTask)},
		{Name: MethodSubscribeToTask, HTTPMethod: "GET", AltHTTPMethod: "POST", Path: "/tasks/{id}:subscribe", Streaming: true, RetrySafe: true,
			Right:      RightTasksRead,
			NewRequest: newMsg[SubscribeToTaskRequest](), stream: streaming(Service.SubscribeToTask)},
		{Name: MethodCreateTaskPushNotificationConfig, HTTPMethod: "POST", Path: "/tasks/{taskId}/pushNotificationConfigs", HasBody: true,
			Right:      RightPush,
			NewRequest: newMsg[TaskPushNotificationConfig](), NewResponse: newMsg[TaskPushNotificationConfig](), call: unary(Service.CreateTaskPushNotificationConfig)},
		{Name: MethodGetTaskPushNotificationConfig, HTTPMethod: "GET", Path: "/tasks/{taskId}/pushNotificationConfigs/{id}", RetrySafe: true,
			Right:      RightPush,
			NewRequest: newMsg[GetTaskPushNotificationConfigRequest](), NewResponse: newMsg[TaskPushNotificationConfig](), call: unary(Service.GetTaskPushNotificationConfig)},
		{Name: MethodListTaskPushNotificationConfigs, HTTPMethod: "GET", Path: "/tasks/{taskId}/pushNotificationConfigs", RetrySafe: true,
			Right:      RightPush,
			NewRequest: newMsg[ListTaskPushNotificationConfigsRequest](), NewResponse: newMsg[ListTaskPushNotificationConfigsResponse](), call: unary(Service.ListTaskPushNotificationConfigs)},
		{Name: MethodDeleteTaskPushNotificationConfig, HTTPMethod: "DELETE", Path: "/tasks/{taskId}/pushNotificationConfigs/{id}", RetrySafe: true,
			Right:      RightPush,
			NewRequest: newMsg[DeleteTaskPushNotificationConfigRequest](), NewResponse: newMsg[emptypb.Empty](), call: unary(deleteConfig)},
		{Name: MethodGetExtendedAgentCard, HTTPMethod: "GET", Path: "/extendedAgentCard", RetrySafe: true,
			Right:      RightExtendedCard,
			NewRequest: newMsg[GetExtendedAgentCardRequest](), NewResponse: newMsg[AgentCard](), call: unary(Service.GetExtendedAgentCard)},
	}
	for i := range methods {
		byName[methods[i].Name] = &methods[i]
	}
}

var byName = map[string]*Method{}

// Methods yields the eleven operations of the A2A service, in a fixed
// order (that of spec §3.1). Each *Method is the table's own, the same
// pointer MethodByName returns and an Invoker is called with, so it may
// key a map; it is shared by every binding and must not be modified.
func Methods() iter.Seq[*Method] {
	return func(yield func(*Method) bool) {
		for i := range methods {
			if !yield(&methods[i]) {
				return
			}
		}
	}
}

// MethodByName returns the method with the name (one of the Method
// constants), or nil. Like Methods it returns the table's own Method,
// which must not be modified.
func MethodByName(name string) *Method { return byName[name] }
