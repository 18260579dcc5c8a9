package telemetry

import (
	"context"
	"sync"

	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/server"
)

// ExecutionContext is the hook of server.Options.ExecutionContext: the
// agent's context carries the span of the request that started the
// execution (SendMessage or SendStreamingMessage), so the agent's own
// spans nest under it, and the store calls the core makes for the
// execution are tallied on it (see Store). An execution that outlives its
// request (a non-blocking send, a detached agent) keeps that span as its
// parent after it ended, as OpenTelemetry allows. The active executions
// count lasts as long as the execution, detached work included. Push
// notifications the execution queues join the request's trace (see
// taskTraces). Set it whatever the configuration: it does nothing when
// nothing is recorded.
//
// There is no span of its own for the execution: the request's span
// covers it for blocking and streaming sends, and one span fewer per
// message is a good part of keeping tracing's cost under 10 %
// (docs/observability.md).
func (t *Telemetry) ExecutionContext(ctx, caller context.Context, req *server.Request) context.Context {
	if t == nil || !t.Enabled() {
		return ctx
	}
	if t.metering {
		t.ins.executions.Add(ctx, 1)
		context.AfterFunc(ctx, func() { t.ins.executions.Add(context.Background(), -1) })
	}
	if !t.tracing {
		return ctx
	}
	span := trace.SpanFromContext(caller)
	if !span.SpanContext().IsValid() {
		return ctx
	}
	t.tasks.put(req.TaskID, span.SpanContext())
	if tally := caller.Value(tallyKey{}); tally != nil {
		ctx = context.WithValue(ctx, tallyKey{}, tally)
	}
	return trace.ContextWithSpan(ctx, span)
}

// noteTaskWrite records the trace of an operation that queues push
// notifications for a task outside any execution: CancelTask (the
// CANCELED status) and CreateTaskPushNotificationConfig (the first
// snapshot).
func (t *Telemetry) noteTaskWrite(ctx context.Context, m *a2a.Method, req proto.Message) {
	var id string
	switch r := req.(type) {
	case *a2a.CancelTaskRequest:
		id = r.GetId()
	case *a2a.TaskPushNotificationConfig:
		id = r.GetTaskId()
	default:
		return
	}
	if sc := trace.SpanFromContext(ctx).SpanContext(); sc.IsValid() && id != "" {
		t.tasks.put(id, sc)
	}
}

// taskTraceCap bounds the tasks whose trace is remembered.
const taskTraceCap = 16384

// taskTraces remembers, per task, the span of the latest operation or
// execution that wrote to it, so that a webhook POST, made later by the
// push sender from the store's outbox, joins the trace that caused it.
// It is bounded: past its capacity the oldest tasks are forgotten, and
// their webhooks start traces of their own. It lives in memory, so
// notifications sent after a restart start their own traces too. When a
// task's notifications wait while a newer message arrives, they join the
// newer trace.
type taskTraces struct {
	mu    sync.Mutex
	byID  map[string]trace.SpanContext
	order []string // ring of ids, oldest at next
	next  int
}

func newTaskTraces(capacity int) *taskTraces {
	return &taskTraces{byID: make(map[string]trace.SpanContext), order: make([]string, 0, capacity)}
}

// put records sc as the task's latest trace.
func (m *taskTraces) put(taskID string, sc trace.SpanContext) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.byID[taskID]; !ok {
		if len(m.order) < cap(m.order) {
			m.order = append(m.order, taskID)
		} else {
			delete(m.byID, m.order[m.next])
			m.order[m.next] = taskID
			m.next = (m.next + 1) % len(m.order)
		}
	}
	m.byID[taskID] = sc
}

// get returns the task's latest trace, if remembered.
func (m *taskTraces) get(taskID string) (trace.SpanContext, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	sc, ok := m.byID[taskID]
	return sc, ok
}
