package telemetry

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/transport"
)

// summary is what one call revealed, for its span: the ids it named and
// the last state it saw.
type summary struct {
	taskID, contextID string
	state             a2a.TaskState
	events            int
}

// request notes the ids a request names.
func (c *summary) request(req proto.Message) {
	switch r := req.(type) {
	case *a2a.SendMessageRequest:
		c.ids(r.GetMessage().GetTaskId(), r.GetMessage().GetContextId())
	case *a2a.GetTaskRequest, *a2a.CancelTaskRequest, *a2a.SubscribeToTaskRequest:
		c.ids(r.(interface{ GetId() string }).GetId(), "")
	case *a2a.TaskPushNotificationConfig, *a2a.GetTaskPushNotificationConfigRequest,
		*a2a.ListTaskPushNotificationConfigsRequest, *a2a.DeleteTaskPushNotificationConfigRequest:
		c.ids(r.(interface{ GetTaskId() string }).GetTaskId(), "")
	case *a2a.ListTasksRequest:
		c.ids("", r.GetContextId())
	}
}

// response notes the ids and state of a unary result.
func (c *summary) response(resp proto.Message) {
	var t *a2a.Task
	switch r := resp.(type) {
	case *a2a.SendMessageResponse:
		if m := r.GetMessage(); m != nil {
			c.ids(m.GetTaskId(), m.GetContextId())
		}
		t = r.GetTask()
	case *a2a.Task:
		t = r
	}
	if t != nil {
		c.ids(t.GetId(), t.GetContextId())
		c.state = t.GetStatus().GetState()
	}
}

// event notes the ids and state of a stream event.
func (c *summary) event(ev a2a.StreamEvent) {
	c.events++
	if c.taskID == "" || c.contextID == "" {
		c.ids(ev.TaskID(), ev.ContextID())
	}
	if s := ev.State(); s != a2a.StateUnspecified {
		c.state = s
	}
}

// ids keeps the first non-empty ids seen.
func (c *summary) ids(task, ctxID string) {
	if c.taskID == "" {
		c.taskID = task
	}
	if c.contextID == "" {
		c.contextID = ctxID
	}
}

// result is what a call's span records when it ends: its binding, what
// it revealed, and how it ended.
type result struct {
	binding string
	version string // served in, on a server ("" when not known)
	summary
	stream          bool
	outcome, reason string
}

// attributes appends the span attributes of the result to kv.
func (r *result) attributes(kv []attribute.KeyValue) []attribute.KeyValue {
	kv = append(kv, keyBinding.String(r.binding))
	if r.version != "" {
		kv = append(kv, keyVersion.String(r.version))
	}
	if r.taskID != "" {
		kv = append(kv, keyTaskID.String(r.taskID))
	}
	if r.contextID != "" {
		kv = append(kv, keyContextID.String(r.contextID))
	}
	if r.state != a2a.StateUnspecified {
		kv = append(kv, keyTaskState.String(r.state.String()))
	}
	if r.stream {
		kv = append(kv, keyEvents.Int(r.events))
	}
	kv = append(kv, keyOutcome.String(r.outcome))
	if r.reason != "" {
		kv = append(kv, keyReason.String(r.reason))
	}
	return kv
}

// classify names a call's outcome and, for an error, its A2A reason (the
// ErrorInfo reason, or the error's name for the JSON-RPC errors that
// have none, e.g. InvalidParamsError; TRANSPORT for a client that could
// not reach the server or read its answer). A call whose caller went away is
// canceled, whatever the error.
func classify(ctx context.Context, err error) (outcome, reason string) {
	switch {
	case err == nil:
		return outcomeOK, ""
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil:
		return outcomeCanceled, ""
	}
	var te *transport.Error
	if errors.As(err, &te) {
		return outcomeError, "TRANSPORT"
	}
	e := a2a.AsError(err)
	if r := e.Code.Reason(); r != "" {
		return outcomeError, r
	}
	return outcomeError, e.Code.Name()
}

// serverFault reports whether an error is the server's own (its span is
// then marked as failed); errors the caller caused (a task not found,
// invalid parameters) are not, as the OpenTelemetry conventions ask of
// server spans.
func serverFault(err error) bool {
	e := a2a.AsError(err)
	return e.Code == a2a.CodeInternal || e.Code == a2a.CodeInvalidAgentResponse
}

// opSpan is the span of one server operation as the contexts of the
// operation and its execution carry it: the SDK's span, started through
// the tracer, with the tally of the store calls made for the operation
// beside it (see store.done). Every call of the trace.Span interface goes
// to the SDK's span as it is, so what an agent does to the span through
// trace.SpanFromContext behaves as the SDK specifies; Parley sets its own
// attributes, the tally's among them, when the operation ends (endSpan).
type opSpan struct {
	trace.Span
	calls atomic.Int64 // store calls made for the operation
	nanos atomic.Int64 // their time
}

// attrBufs recycles the attribute slices endSpan hands to the SDK's
// spans: the SDK copies them, and one allocated per span (it escapes
// through the Span interface) was a good part of a span's garbage.
var attrBufs = sync.Pool{New: func() any { return new([maxSpanAttrs]attribute.KeyValue) }}

// maxSpanAttrs bounds the attributes a call's span ends with: binding,
// version, task, context, state, events, outcome, reason, and the store
// tally's two.
const maxSpanAttrs = 10

// endSpan records a call's result on its span and ends it. The
// attributes are all set here, at once, rather than some at the span's
// start: it costs less.
func endSpan(span trace.Span, r *result, err error, server bool) {
	code, description := codes.Unset, ""
	if err != nil && r.outcome == outcomeError && (!server || serverFault(err)) {
		code, description = codes.Error, a2a.AsError(err).Message
	}
	buf := attrBufs.Get().(*[maxSpanAttrs]attribute.KeyValue)
	kv := r.attributes(buf[:0])
	if op, ok := span.(*opSpan); ok {
		kv = append(kv, keyStoreCalls.Int64(op.calls.Load()), keyStoreDuration.Float64(ms(time.Duration(op.nanos.Load()))))
	}
	span.SetAttributes(kv...)
	clear(kv) // let the strings go
	attrBufs.Put(buf)
	if code != codes.Unset {
		span.SetStatus(code, description)
	}
	span.End()
}
