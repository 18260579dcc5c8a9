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
// message is a good part of keeping tracing's cost under 10 %.
func (t *Telemetry) ExecutionContext(ctx, caller context.Context, req *server.Request) context.Context {
	if t.Metrics() {
		t.ins.executions.add(ctx)
	}
	span := trace.SpanFromContext(caller)
	if !t.Tracing() || !span.SpanContext().IsValid() {
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
	if m.Name != a2a.MethodCancelTask && m.Name != a2a.MethodCreateTaskPushNotificationConfig {
		return
	}
	var c summary // the task the request names
	c.request(req)
	if sc := trace.SpanFromContext(ctx).SpanContext(); sc.IsValid() && c.taskID != "" {
		t.tasks.put(c.taskID, sc)
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
// traces of their own. An entry holds the id's hash (two ids with the same
// 64-bit hash would share an entry; at 16,384 tasks that is a chance in
// about 10^12) and the span's ids, no pointer: writing one costs no
// allocation and no write barrier, and the garbage collector does not scan
// the table. The rare trace state (W3C tracestate) is kept beside it, in
// a map. Measured, a map with a ring of ids in insertion order, before
// it, cost over a microsecond per message. It lives in memory, so
// notifications sent after a restart start their own traces too. When a
// task's notifications wait while a newer message arrives, they join the
// newer trace.
type taskTraces struct {
	seed   maphash.Seed
	mu     sync.Mutex
	sets   [][2]taskTrace // a power of two of them
	seq    uint64         // puts so far, to find the entry written longest ago
	states map[uint64]trace.TraceState
}

// taskTrace is one entry of taskTraces.
type taskTrace struct {
	key   uint64 // the hash of the task id; 0 for an empty entry
	seq   uint64 // when it was written
	trace trace.TraceID
	span  trace.SpanID
	flags trace.TraceFlags
}

func newTaskTraces(capacity int) *taskTraces {
	n := 1
	for n*2 < capacity {
		n *= 2
	}
	return &taskTraces{seed: maphash.MakeSeed(), sets: make([][2]taskTrace, n), states: make(map[uint64]trace.TraceState)}
}

// key returns the hash of a task id (never 0) and its set.
func (m *taskTraces) key(taskID string) (uint64, *[2]taskTrace) {
	h := maphash.String(m.seed, taskID) | 1
	return h, &m.sets[(h>>1)&uint64(len(m.sets)-1)]
}

// put records sc as the task's latest trace.
func (m *taskTraces) put(taskID string, sc trace.SpanContext) {
	key, set := m.key(taskID)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.seq++
	i := 0
	switch {
	case set[0].key == key:
	case set[1].key == key, set[1].seq < set[0].seq:
		i = 1
	}
	if old := set[i].key; old != 0 && old != key {
		delete(m.states, old)
	}
	set[i] = taskTrace{key: key, seq: m.seq, trace: sc.TraceID(), span: sc.SpanID(), flags: sc.TraceFlags()}
	if ts := sc.TraceState(); ts.Len() > 0 {
		m.states[key] = ts
	} else if len(m.states) > 0 {
		delete(m.states, key)
	}
}

// get returns the task's latest trace, if remembered.
func (m *taskTraces) get(taskID string) (trace.SpanContext, bool) {
	key, set := m.key(taskID)
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, e := range set {
		if e.key == key {
			return trace.NewSpanContext(trace.SpanContextConfig{TraceID: e.trace, SpanID: e.span, TraceFlags: e.flags, TraceState: m.states[key]}), true
		}
	}
	return trace.SpanContext{}, false
}
