package telemetry

import (
	"context"
	"hash/maphash"
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
// execution are events on it (see Store). An execution that outlives its
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
		t.ins.executions.add(ctx)
	}
	if !t.tracing {
		return ctx
	}
	span := trace.SpanFromContext(caller)
	if !span.SpanContext().IsValid() {
		return ctx
	}
	t.tasks.put(req.TaskID, span.SpanContext())
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
//
// It is a fixed table of capacity entries in sets of two, a task's set
// chosen by a hash of its id: a task written again takes the newer trace
// in place, and a new task takes the place of the one in its set written
// longest ago. So past the capacity the tasks written longest ago are
// forgotten, roughly (by set, not overall), and their webhooks start
// traces of their own. Every put is a hash, a lock and two comparisons,
// with no allocation (a map with a ring of ids in insertion order, before
// it, measured at over a microsecond per message). It lives in memory, so
// notifications sent after a restart start their own traces too. When a
// task's notifications wait while a newer message arrives, they join the
// newer trace.
type taskTraces struct {
	seed maphash.Seed
	mu   sync.Mutex
	sets [][2]taskTrace // a power of two of them
	seq  uint64         // puts so far, to find the entry written longest ago
}

// taskTrace is one entry of taskTraces.
type taskTrace struct {
	id  string
	sc  trace.SpanContext
	seq uint64 // when it was written; 0 for an empty entry
}

func newTaskTraces(capacity int) *taskTraces {
	n := 1
	for n*2 < capacity {
		n *= 2
	}
	return &taskTraces{seed: maphash.MakeSeed(), sets: make([][2]taskTrace, n)}
}

// set returns the set of a task's entry.
func (m *taskTraces) set(taskID string) *[2]taskTrace {
	return &m.sets[maphash.String(m.seed, taskID)&uint64(len(m.sets)-1)]
}

// put records sc as the task's latest trace.
func (m *taskTraces) put(taskID string, sc trace.SpanContext) {
	set := m.set(taskID)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.seq++
	i := 0
	switch {
	case set[0].id == taskID && set[0].seq != 0:
	case set[1].id == taskID && set[1].seq != 0, set[1].seq < set[0].seq:
		i = 1
	}
	set[i] = taskTrace{id: taskID, sc: sc, seq: m.seq}
}

// get returns the task's latest trace, if remembered.
func (m *taskTraces) get(taskID string) (trace.SpanContext, bool) {
	set := m.set(taskID)
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, e := range set {
		if e.seq != 0 && e.id == taskID {
			return e.sc, true
		}
	}
	return trace.SpanContext{}, false
}
