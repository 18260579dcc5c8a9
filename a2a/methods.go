package a2a

import (
	"context"
	"iter"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"
)

// Method describes one operation of the A2A service in every binding. The
// table Methods drives dispatch in each binding, so adding an operation is
// one entry here plus its core implementation.
type Method struct {
	// Name is the operation's name: the JSON-RPC method and the gRPC rpc.
	Name string
	// HTTPMethod and Path are the HTTP+JSON route (brief §3.0, from the
	// proto's google.api.http annotations). Path segments in braces are
	// variables; every route is also served under a leading /{tenant}.
	HTTPMethod string
	Path       string
	// AltHTTPMethod is a second verb accepted on the same path ("" if none).
	AltHTTPMethod string
	// Streaming operations answer with Server-Sent Events.
	Streaming bool
	// HasBody is true when the HTTP+JSON request carries a JSON body.
	HasBody bool
	// NewRequest returns an empty request message of the operation.
	NewRequest func() proto.Message
	// Call invokes a unary operation; nil for streaming ones.
	Call func(ctx context.Context, s Service, req proto.Message) (proto.Message, error)
	// Stream invokes a streaming operation; nil for unary ones.
	Stream func(ctx context.Context, s Service, req proto.Message) iter.Seq2[StreamEvent, error]
}

// unary adapts a typed unary operation to Method.Call.
func unary[Req, Resp proto.Message](f func(Service, context.Context, Req) (Resp, error)) func(context.Context, Service, proto.Message) (proto.Message, error) {
	return func(ctx context.Context, s Service, req proto.Message) (proto.Message, error) {
		resp, err := f(s, ctx, req.(Req))
		if err != nil {
			return nil, err
		}
		return resp, nil
	}
}

// streaming adapts a typed streaming operation to Method.Stream.
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

// Methods lists the eleven operations.
//
// SubscribeToTask: the proto says GET and the prose says POST (brief §12.2
// D1); Parley serves both (DESIGN B1).
var Methods []Method

func init() {
	Methods = []Method{
		{Name: MethodSendMessage, HTTPMethod: "POST", Path: "/message:send", HasBody: true,
			NewRequest: newMsg[SendMessageRequest](), Call: unary(Service.SendMessage)},
		{Name: MethodSendStreamingMessage, HTTPMethod: "POST", Path: "/message:stream", HasBody: true, Streaming: true,
			NewRequest: newMsg[SendMessageRequest](), Stream: streaming(Service.SendStreamingMessage)},
		{Name: MethodGetTask, HTTPMethod: "GET", Path: "/tasks/{id}",
			NewRequest: newMsg[GetTaskRequest](), Call: unary(Service.GetTask)},
		{Name: MethodListTasks, HTTPMethod: "GET", Path: "/tasks",
			NewRequest: newMsg[ListTasksRequest](), Call: unary(Service.ListTasks)},
		{Name: MethodCancelTask, HTTPMethod: "POST", Path: "/tasks/{id}:cancel", HasBody: true,
			NewRequest: newMsg[CancelTaskRequest](), Call: unary(Service.CancelTask)},
		{Name: MethodSubscribeToTask, HTTPMethod: "GET", AltHTTPMethod: "POST", Path: "/tasks/{id}:subscribe", Streaming: true,
			NewRequest: newMsg[SubscribeToTaskRequest](), Stream: streaming(Service.SubscribeToTask)},
		{Name: MethodCreateTaskPushNotificationConfig, HTTPMethod: "POST", Path: "/tasks/{taskId}/pushNotificationConfigs", HasBody: true,
			NewRequest: newMsg[TaskPushNotificationConfig](), Call: unary(Service.CreateTaskPushNotificationConfig)},
		{Name: MethodGetTaskPushNotificationConfig, HTTPMethod: "GET", Path: "/tasks/{taskId}/pushNotificationConfigs/{id}",
			NewRequest: newMsg[GetTaskPushNotificationConfigRequest](), Call: unary(Service.GetTaskPushNotificationConfig)},
		{Name: MethodListTaskPushNotificationConfigs, HTTPMethod: "GET", Path: "/tasks/{taskId}/pushNotificationConfigs",
			NewRequest: newMsg[ListTaskPushNotificationConfigsRequest](), Call: unary(Service.ListTaskPushNotificationConfigs)},
		{Name: MethodDeleteTaskPushNotificationConfig, HTTPMethod: "DELETE", Path: "/tasks/{taskId}/pushNotificationConfigs/{id}",
			NewRequest: newMsg[DeleteTaskPushNotificationConfigRequest](), Call: unary(deleteConfig)},
		{Name: MethodGetExtendedAgentCard, HTTPMethod: "GET", Path: "/extendedAgentCard",
			NewRequest: newMsg[GetExtendedAgentCardRequest](), Call: unary(Service.GetExtendedAgentCard)},
	}
}

// MethodByName returns the method with the name, or nil.
func MethodByName(name string) *Method {
	for i := range Methods {
		if Methods[i].Name == name {
			return &Methods[i]
		}
	}
	return nil
}
