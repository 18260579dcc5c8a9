package telemetry

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
)

// Store returns st observed: every call's latency goes to the
// parley.store.operation.duration histogram, events written to
// parley.store.events.appended, and the calls made for an operation (its
// execution's included) are accounted for on the operation's span: all of
// them in its parley.store.calls and parley.store.duration_ms attributes,
// and each slow or failed one as an event of its own (see slowStoreCall).
// Background calls (the push sender reading its outbox, retention sweeps)
// have no span and are measured only. With nothing recorded it returns st
// itself.
//
// The wrapper embeds st, so a method added to taskstore.Store later passes
// through unobserved until it gets a line here. Each method calls the
// store itself rather than through a closure: the wrapper adds one frame,
// not four, to deep stacks (an execution's goroutine grows its stack, and
// copying it costs by the frame).
func (t *Telemetry) Store(st taskstore.Store) taskstore.Store {
	if !t.Enabled() || st == nil {
		return st
	}
	return &store{Store: st, t: t}
}

// store is an observed taskstore.Store.
type store struct {
	taskstore.Store
	t *Telemetry
}

// storeOp is one store operation and what observing it needs, made once:
// the span event's name, and the options of a duration's Record for each
// outcome (ok, error), which carry its metric attributes.
type storeOp struct {
	event string                   // "store." + the operation
	opts  [2][]metric.RecordOption // ok, error
}

// newStoreOp makes the storeOp of the store method called name.
func newStoreOp(name string) *storeOp {
	opts := func(outcome string) []metric.RecordOption {
		return recordOpts(attribute.NewSet(keyStoreOp.String(name), keyOutcome.String(outcome)))
	}
	return &storeOp{event: "store." + name, opts: [2][]metric.RecordOption{opts(outcomeOK), opts(outcomeError)}}
}

// The operations observed.
var (
	opCreateTask           = newStoreOp("CreateTask")
	opAppend               = newStoreOp("Append")
	opCreateTaskBatch      = newStoreOp("CreateTaskBatch")
	opAppendBatch          = newStoreOp("AppendBatch")
	opGetTask              = newStoreOp("GetTask")
	opLastSeq              = newStoreOp("LastSeq")
	opEvents               = newStoreOp("Events")
	opListTasks            = newStoreOp("ListTasks")
	opListActive           = newStoreOp("ListActive")
	opDeleteFinished       = newStoreOp("DeleteFinished")
	opPruneEvents          = newStoreOp("PruneEvents")
	opTimelineBase         = newStoreOp("TimelineBase")
	opPutPushConfig        = newStoreOp("PutPushConfig")
	opGetPushConfig        = newStoreOp("GetPushConfig")
	opListPushConfigs      = newStoreOp("ListPushConfigs")
	opDeletePushConfig     = newStoreOp("DeletePushConfig")
	opPushTargets          = newStoreOp("PushTargets")
	opPendingPush          = newStoreOp("PendingPush")
	opDeletePush           = newStoreOp("DeletePush")
	opSuspendPush          = newStoreOp("SuspendPush")
	opPutMessage           = newStoreOp("PutMessage")
	opGetMessage           = newStoreOp("GetMessage")
	opSetMessageReply      = newStoreOp("SetMessageReply")
	opDeleteMessagesBefore = newStoreOp("DeleteMessagesBefore")
)

// slowStoreCall is the duration from which a store call made for an
// operation is an event of its own on the operation's span, besides its
// share of the tally.
//
// Why not an event for every call: a blocking SendMessage on the memory
// store makes six calls of a few microseconds each, and events for all of
// them measured at about 50 allocations, 4 KB and 5–10 µs of CPU more per
// message, most of tracing's 10 % budget. An event costs about 1 µs, so
// from 100 µs on it is at most about 1 % of the call it describes: the
// calls that shape an operation's latency are listed one by one, on every
// store, and the fast ones are counted and timed together.
const slowStoreCall = 100 * time.Microsecond

// done measures a store call that began at begin and returned err, as
// Store says (ErrNotFound and ErrExists are answers, not failures), and
// returns err. An event is stamped when the call returned; its start is
// the stamp less parley.store.duration_ms.
func (s *store) done(ctx context.Context, call *storeOp, begin time.Duration, err error) error {
	d := now() - begin
	failed := err != nil && !errors.Is(err, taskstore.ErrNotFound) && !errors.Is(err, taskstore.ErrExists)
	if s.t.metering {
		outcome := 0
		if failed {
			outcome = 1
		}
		s.t.ins.storeDuration.Record(ctx, d.Seconds(), call.opts[outcome]...)
	}
	if !s.t.tracing {
		return err
	}
	span := trace.SpanFromContext(ctx)
	if op, ok := span.(*opSpan); ok {
		op.calls.Add(1)
		op.nanos.Add(int64(d))
	}
	if (!failed && d < slowStoreCall) || !span.IsRecording() {
		return err
	}
	kv := []attribute.KeyValue{keyStoreDuration.Float64(ms(d))}
	if failed {
		kv = append(kv, keyStoreError.String(err.Error()))
	}
	span.AddEvent(call.event, trace.WithAttributes(kv...))
	return err
}

// ms is d in milliseconds, to the microsecond.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// timed is a store call that began at begin, measured by end (done) as it
// returns. Its fields come before the call in the expression that makes
// it, so begin is read before the call is made (the spec's left-to-right
// order of calls).
type timed[T any] struct {
	s     *store
	ctx   context.Context
	op    *storeOp
	begin time.Duration
}

// end measures the call (done) and returns its results.
func (c timed[T]) end(v T, err error) (T, error) { return v, c.s.done(c.ctx, c.op, c.begin, err) }

// appended counts an event written by a successful call.
func (s *store) appended(ev taskstore.Event, err error) error {
	if err == nil && ev.Response != nil && s.t.metering {
		s.t.ins.appended.Add(1)
	}
	return err
}

func (s *store) CreateTask(ctx context.Context, sc taskstore.Scope, t *a2a.Task, ev taskstore.Event) error {
	return s.appended(ev, s.done(ctx, opCreateTask, now(), s.Store.CreateTask(ctx, sc, t, ev)))
}

func (s *store) Append(ctx context.Context, sc taskstore.Scope, id string, ev taskstore.Event) error {
	return s.appended(ev, s.done(ctx, opAppend, now(), s.Store.Append(ctx, sc, id, ev)))
}

func (s *store) CreateTaskBatch(ctx context.Context, sc taskstore.Scope, t *a2a.Task, evs []taskstore.Event) error {
	return s.appendedBatch(evs, s.done(ctx, opCreateTaskBatch, now(), s.Store.CreateTaskBatch(ctx, sc, t, evs)))
}

func (s *store) AppendBatch(ctx context.Context, sc taskstore.Scope, id string, evs []taskstore.Event) error {
	return s.appendedBatch(evs, s.done(ctx, opAppendBatch, now(), s.Store.AppendBatch(ctx, sc, id, evs)))
}

// appendedBatch counts the events of a batch that was stored.
func (s *store) appendedBatch(evs []taskstore.Event, err error) error {
	if err == nil && s.t.metering {
		s.t.ins.appended.Add(int64(len(evs)))
	}
	return err
}

func (s *store) Events(ctx context.Context, sc taskstore.Scope, id string, after uint64, limit int) ([]a2a.StreamEvent, error) {
	return timed[[]a2a.StreamEvent]{s, ctx, opEvents, now()}.end(s.Store.Events(ctx, sc, id, after, limit))
}

func (s *store) PruneEvents(ctx context.Context, before time.Time) (int, error) {
	return timed[int]{s, ctx, opPruneEvents, now()}.end(s.Store.PruneEvents(ctx, before))
}

func (s *store) TimelineBase(ctx context.Context, sc taskstore.Scope, id string) ([]byte, error) {
	return timed[[]byte]{s, ctx, opTimelineBase, now()}.end(s.Store.TimelineBase(ctx, sc, id))
}

func (s *store) GetTask(ctx context.Context, sc taskstore.Scope, id string) (*a2a.Task, error) {
	return timed[*a2a.Task]{s, ctx, opGetTask, now()}.end(s.Store.GetTask(ctx, sc, id))
}

func (s *store) LastSeq(ctx context.Context, sc taskstore.Scope, id string) (uint64, error) {
	return timed[uint64]{s, ctx, opLastSeq, now()}.end(s.Store.LastSeq(ctx, sc, id))
}

func (s *store) ListTasks(ctx context.Context, sc taskstore.Scope, q taskstore.ListQuery) (taskstore.ListResult, error) {
	return timed[taskstore.ListResult]{s, ctx, opListTasks, now()}.end(s.Store.ListTasks(ctx, sc, q))
}

func (s *store) ListActive(ctx context.Context) ([]taskstore.ScopedTask, error) {
	return timed[[]taskstore.ScopedTask]{s, ctx, opListActive, now()}.end(s.Store.ListActive(ctx))
}

func (s *store) DeleteFinished(ctx context.Context, before time.Time) (int, error) {
	return timed[int]{s, ctx, opDeleteFinished, now()}.end(s.Store.DeleteFinished(ctx, before))
}

func (s *store) PutPushConfig(ctx context.Context, sc taskstore.Scope, c *taskstore.PushConfig, ev taskstore.Event) error {
	return s.done(ctx, opPutPushConfig, now(), s.Store.PutPushConfig(ctx, sc, c, ev))
}

func (s *store) GetPushConfig(ctx context.Context, sc taskstore.Scope, taskID, id string) (*taskstore.PushConfig, error) {
	return timed[*taskstore.PushConfig]{s, ctx, opGetPushConfig, now()}.end(s.Store.GetPushConfig(ctx, sc, taskID, id))
}

func (s *store) ListPushConfigs(ctx context.Context, sc taskstore.Scope, taskID string) ([]*taskstore.PushConfig, error) {
	return timed[[]*taskstore.PushConfig]{s, ctx, opListPushConfigs, now()}.end(s.Store.ListPushConfigs(ctx, sc, taskID))
}

func (s *store) DeletePushConfig(ctx context.Context, sc taskstore.Scope, taskID, id string) error {
	return s.done(ctx, opDeletePushConfig, now(), s.Store.DeletePushConfig(ctx, sc, taskID, id))
}

func (s *store) PushTargets(ctx context.Context, taskID string) ([]taskstore.PushTarget, error) {
	return timed[[]taskstore.PushTarget]{s, ctx, opPushTargets, now()}.end(s.Store.PushTargets(ctx, taskID))
}

func (s *store) PendingPush(ctx context.Context, pt taskstore.PushTarget, limit int) ([]*taskstore.Notification, error) {
	return timed[[]*taskstore.Notification]{s, ctx, opPendingPush, now()}.end(s.Store.PendingPush(ctx, pt, limit))
}

func (s *store) DeletePush(ctx context.Context, ids ...int64) error {
	return s.done(ctx, opDeletePush, now(), s.Store.DeletePush(ctx, ids...))
}

func (s *store) SuspendPush(ctx context.Context, pt taskstore.PushTarget, reason string) error {
	return s.done(ctx, opSuspendPush, now(), s.Store.SuspendPush(ctx, pt, reason))
}

func (s *store) PutMessage(ctx context.Context, sc taskstore.Scope, r *taskstore.MessageRecord) (*taskstore.MessageRecord, error) {
	return timed[*taskstore.MessageRecord]{s, ctx, opPutMessage, now()}.end(s.Store.PutMessage(ctx, sc, r))
}

func (s *store) GetMessage(ctx context.Context, sc taskstore.Scope, messageID string) (*taskstore.MessageRecord, error) {
	return timed[*taskstore.MessageRecord]{s, ctx, opGetMessage, now()}.end(s.Store.GetMessage(ctx, sc, messageID))
}

func (s *store) SetMessageReply(ctx context.Context, sc taskstore.Scope, messageID string, reply *a2a.Message) error {
	return s.done(ctx, opSetMessageReply, now(), s.Store.SetMessageReply(ctx, sc, messageID, reply))
}

func (s *store) DeleteMessagesBefore(ctx context.Context, before time.Time) (int, error) {
	return timed[int]{s, ctx, opDeleteMessagesBefore, now()}.end(s.Store.DeleteMessagesBefore(ctx, before))
}

// outboxDepther is the optional store method behind the outbox depth
// gauge (memstore and sqlitestore have it).
type outboxDepther interface {
	OutboxDepth(ctx context.Context) (int64, error)
}

// OutboxDepth passes the call on when the wrapped store can answer it.
func (s *store) OutboxDepth(ctx context.Context) (int64, error) {
	if d, ok := s.Store.(outboxDepther); ok {
		return d.OutboxDepth(ctx)
	}
	return 0, errors.ErrUnsupported
}
