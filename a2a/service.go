package a2a

import (
	"context"
	"iter"
	"strings"
)

// StreamEvent is one item of a stream: the StreamResponse and its sequence
// number within the task (1 for the first event a task ever produced, then
// increasing by one). Seq is 0 when unknown, and for a direct Message reply.
type StreamEvent struct {
	Seq      uint64
	Response *StreamResponse
	// More tells a transport that the producer already holds the next
	// event, so this one need not be pushed to the network on its own
	// (the server's SSE writer then sends both in one write). It is a
	// hint only: an event with More set may still be the last.
	More bool
	// Cache, when not nil, keeps what the transports make of Response
	// (its encodings) for every stream that carries this same event: the
	// server core attaches one to an event it delivers to more than one
	// stream, so that each wire format is encoded once, not once per
	// stream (see EventCache). An event with no Cache is encoded by the
	// stream that sends it.
	Cache *EventCache
}

// Service is the eleven operations of the A2A protocol (spec §3.1), the same
// shape for the server core, for clients of every binding, and for
// middleware. Implementations may be called concurrently.
//
// A stream ends when the iterator returns; an error yielded by it is the last
// item. A consumer that stops early (breaks out of the loop) releases the
// stream; the task itself is not affected.
type Service interface {
	SendMessage(ctx context.Context, req *SendMessageRequest) (*SendMessageResponse, error)
	SendStreamingMessage(ctx context.Context, req *SendMessageRequest) iter.Seq2[StreamEvent, error]
	GetTask(ctx context.Context, req *GetTaskRequest) (*Task, error)
	ListTasks(ctx context.Context, req *ListTasksRequest) (*ListTasksResponse, error)
	CancelTask(ctx context.Context, req *CancelTaskRequest) (*Task, error)
	SubscribeToTask(ctx context.Context, req *SubscribeToTaskRequest) iter.Seq2[StreamEvent, error]
	CreateTaskPushNotificationConfig(ctx context.Context, req *TaskPushNotificationConfig) (*TaskPushNotificationConfig, error)
	GetTaskPushNotificationConfig(ctx context.Context, req *GetTaskPushNotificationConfigRequest) (*TaskPushNotificationConfig, error)
	ListTaskPushNotificationConfigs(ctx context.Context, req *ListTaskPushNotificationConfigsRequest) (*ListTaskPushNotificationConfigsResponse, error)
	DeleteTaskPushNotificationConfig(ctx context.Context, req *DeleteTaskPushNotificationConfigRequest) error
	GetExtendedAgentCard(ctx context.Context, req *GetExtendedAgentCardRequest) (*AgentCard, error)
}

// CallInfo is the per-call information a binding extracts from the transport
// and hands to the core through the context: service parameters (spec
// §3.2.6) and the authenticated principal. The core writes Activated.
//
// A CallInfo belongs to one call; only that call's goroutine touches it.
type CallInfo struct {
	// Version is the A2A-Version service parameter as received ("" if absent).
	Version string
	// Wire is the protocol version the operation's wire form implies, set
	// by the binding that decoded it: "0.3" for a v0.3 operation (a v0.3
	// JSON-RPC method, HTTP+JSON route or gRPC service), "" for a v1.x one,
	// whose version only Version says. The core decides the call's version
	// from the two (spec §3.6.2).
	Wire string
	// Extensions are the URIs of the A2A-Extensions service parameter.
	Extensions []string
	// Principal is the authenticated caller's name, "" when anonymous.
	Principal string
	// Rights are what the caller's credential allows (spec §3.3.2); nil,
	// a credential that declares none, allows everything. The core checks
	// them (Authorize) before anything else an operation does.
	Rights Rights
	// LastEventID is the resume position as received, unparsed: the SSE
	// Last-Event-ID header on the HTTP bindings, the last-event-id
	// metadata on gRPC ("" if absent). Only SubscribeToTask reads it; the
	// core parses and checks it, so every binding refuses a bad one alike.
	LastEventID string
	// Activated is filled by the core with the extensions it activated; the
	// binding echoes them in the response's A2A-Extensions.
	Activated []string
	// Served is filled by the core with the protocol version (Major.Minor)
	// it serves the call in, once chosen (spec §3.6.2); it stays empty for
	// a call refused before that. Telemetry labels calls with it.
	Served string
	// Decoded is set by a binding that decoded the request for this call
	// alone and only encodes the answer: the core may then keep the
	// request's values instead of copying them, and answer with values it
	// shares (with its store, or with other callers), which the binding
	// must not change. Without it, as for the Go API in process, request
	// and answer stay the caller's own.
	Decoded bool
}

type callInfoKey struct{}

// WithCallInfo returns a context carrying ci.
func WithCallInfo(ctx context.Context, ci *CallInfo) context.Context {
	return context.WithValue(ctx, callInfoKey{}, ci)
}

// WithPrincipal returns a context whose CallInfo names principal as the
// authenticated caller. An HTTP middleware in front of a2ahttp.Handler
// calls it to authenticate requests its own way; the handler then keeps
// that principal and runs none of its own authenticators.
func WithPrincipal(ctx context.Context, principal string) context.Context {
	ci := &CallInfo{}
	if old := CallInfoFrom(ctx); old != nil {
		*ci = *old
	}
	ci.Principal = principal
	return WithCallInfo(ctx, ci)
}

// WithRights returns a context whose CallInfo gives the caller rights (see
// CallInfo.Rights), for a middleware that authenticates requests its own
// way, beside WithPrincipal. Without a principal, package a2ahttp's handler
// keeps them as a bound on the rights its own authenticators grant.
func WithRights(ctx context.Context, rights Rights) context.Context {
	ci := &CallInfo{}
	if old := CallInfoFrom(ctx); old != nil {
		*ci = *old
	}
	ci.Rights = rights
	return WithCallInfo(ctx, ci)
}

// CallInfoFrom returns the context's CallInfo, or nil.
func CallInfoFrom(ctx context.Context) *CallInfo {
	ci, _ := ctx.Value(callInfoKey{}).(*CallInfo)
	return ci
}

// ProtocolVersion is the A2A protocol version Parley speaks.
const ProtocolVersion = "1.0"

// RequestedVersion reads a request's A2A-Version service parameter: the
// version asked for, where a missing or empty value means "0.3" (spec
// §3.6.2), and its Major.Minor, by which servers compare it
// (decision B7: a patch number is ignored).
func RequestedVersion(v string) (asked, majorMinor string) {
	asked = strings.TrimSpace(v)
	if asked == "" {
		asked = "0.3"
	}
	// Major.Minor is the value up to its second dot, taken as a substring
	// of asked: nothing is allocated per call.
	majorMinor = asked
	if i := strings.IndexByte(asked, '.'); i >= 0 {
		if j := strings.IndexByte(asked[i+1:], '.'); j >= 0 {
			majorMinor = asked[:i+1+j]
		}
	}
	return asked, majorMinor
}

// The standard protocol binding names of AgentInterface.protocolBinding.
const (
	BindingJSONRPC  = "JSONRPC"
	BindingHTTPJSON = "HTTP+JSON"
	BindingGRPC     = "GRPC"
)
