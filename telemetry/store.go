package telemetry

import (
	"context"
	"errors"
	"sync/atomic"
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
// execution's included) are tallied on the operation's span (see
// storeTally), a failed one as an event. Background calls (the push
// sender reading its outbox, retention sweeps) are measured only. With
// nothing recorded it returns st itself.
//
// The wrapper embeds st, so a method added to taskstore.Store later passes
// through unobserved until it gets a line here.
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

// storeOps are the operations observed; their metric attribute sets are
// made once.
var storeOps = []string{"CreateTask", "Append", "GetTask", "LastSeq", "Events", "ListTasks", "ListActive", "DeleteFinished", "PruneEvents",
	"PutPushConfig", "GetPushConfig", "ListPushConfigs", "DeletePushConfig",
	"PushTargets", "PendingPush", "DeletePush", "SuspendPush",
	"PutMessage", "GetMessage", "SetMessageReply", "DeleteMessagesBefore"}

// opSets holds the metric attributes of every operation, for each
// outcome (ok, error).
var opSets = func() map[string][2]metric.MeasurementOption {
	m := make(map[string][2]metric.MeasurementOption, len(storeOps))
	for _, op := range storeOps {
		m[op] = [2]metric.MeasurementOption{
			metric.WithAttributeSet(attribute.NewSet(keyStoreOp.String(op), keyOutcome.String(outcomeOK))),
			metric.WithAttributeSet(attribute.NewSet(keyStoreOp.String(op), keyOutcome.String(outcomeError))),
		}
	}
	return m
}()

// observe runs one store call and measures it: its latency in the
// histogram and, inside an operation's span, its time added to the
// span's store tally (see storeTally); a failed call is also an event on
// that span, with its error. ErrNotFound and ErrExists are answers, not
// failures.
func observe[T any](s *store, ctx context.Context, op string, f func(context.Context) (T, error)) (T, error) {
	begin := time.Now()
	v, err := f(ctx)
	d := time.Since(begin)
	failed := err != nil && !errors.Is(err, taskstore.ErrNotFound) && !errors.Is(err, taskstore.ErrExists)
	if s.t.metering {
		sets := opSets[op]
		set := sets[0]
		if failed {
			set = sets[1]
		}
		s.t.ins.storeDuration.Record(ctx, d.Seconds(), set)
	}
	if s.t.tracing {
		if tally, _ := ctx.Value(tallyKey{}).(*storeTally); tally != nil {
			tally.calls.Add(1)
			tally.nanos.Add(int64(d))
		}
		if failed {
			trace.SpanFromContext(ctx).AddEvent("store."+op+" failed", trace.WithTimestamp(begin),
				trace.WithAttributes(keyStoreOp.String(op), keyStoreDuration.Float64(ms(d)), keyStoreError.String(err.Error())))
		}
	}
	return v, err
}

// storeTally counts the store calls made for one operation, its
// execution's included. Why a tally and not a span or an event per call:
// a blocking SendMessage makes six store calls, and six spans (or events)
// to record and export per message cost more than all the rest of the
// tracing together — measured, they alone would put tracing past 10 % of
// a SendMessage (docs/observability.md). Per-call latencies are in the
// parley.store.operation.duration histogram.
type storeTally struct {
	calls atomic.Int64
	nanos atomic.Int64
}

type tallyKey struct{}

// withTally returns ctx with a fresh tally for an operation's store calls.
func withTally(ctx context.Context) (context.Context, *storeTally) {
	t := &storeTally{}
	return context.WithValue(ctx, tallyKey{}, t), t
}

// attributes are the span attributes of the tally: parley.store.calls and
// parley.store.duration_ms (time spent in the store).
func (t *storeTally) attributes(kv []attribute.KeyValue) []attribute.KeyValue {
	if t == nil {
		return kv
	}
	return append(kv, keyStoreCalls.Int64(t.calls.Load()), keyStoreDuration.Float64(ms(time.Duration(t.nanos.Load()))))
}

// ms is d in milliseconds, to the microsecond.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// observeErr is observe for calls that return only an error.
func observeErr(s *store, ctx context.Context, op string, f func(context.Context) error) error {
	_, err := observe(s, ctx, op, func(ctx context.Context) (struct{}, error) { return struct{}{}, f(ctx) })
	return err
}

// appended counts an event written by a successful call.
func (s *store) appended(ctx context.Context, ev taskstore.Event, err error) error {
	if err == nil && ev.Response != nil && s.t.metering {
		s.t.ins.events.Add(ctx, 1)
	}
	return err
}

func (s *store) CreateTask(ctx context.Context, sc taskstore.Scope, t *a2a.Task, ev taskstore.Event) error {
	return s.appended(ctx, ev, observeErr(s, ctx, "CreateTask", func(ctx context.Context) error { return s.Store.CreateTask(ctx, sc, t, ev) }))
}

func (s *store) Append(ctx context.Context, sc taskstore.Scope, id string, ev taskstore.Event) error {
	return s.appended(ctx, ev, observeErr(s, ctx, "Append", func(ctx context.Context) error { return s.Store.Append(ctx, sc, id, ev) }))
}

func (s *store) Events(ctx context.Context, sc taskstore.Scope, id string, after uint64, limit int) ([]a2a.StreamEvent, error) {
	return observe(s, ctx, "Events", func(ctx context.Context) ([]a2a.StreamEvent, error) { return s.Store.Events(ctx, sc, id, after, limit) })
}

func (s *store) PruneEvents(ctx context.Context, before time.Time) (int, error) {
	return observe(s, ctx, "PruneEvents", func(ctx context.Context) (int, error) { return s.Store.PruneEvents(ctx, before) })
}

func (s *store) GetTask(ctx context.Context, sc taskstore.Scope, id string) (*a2a.Task, error) {
	return observe(s, ctx, "GetTask", func(ctx context.Context) (*a2a.Task, error) { return s.Store.GetTask(ctx, sc, id) })
}

func (s *store) LastSeq(ctx context.Context, sc taskstore.Scope, id string) (uint64, error) {
	return observe(s, ctx, "LastSeq", func(ctx context.Context) (uint64, error) { return s.Store.LastSeq(ctx, sc, id) })
}

func (s *store) ListTasks(ctx context.Context, sc taskstore.Scope, q taskstore.ListQuery) (taskstore.ListResult, error) {
	return observe(s, ctx, "ListTasks", func(ctx context.Context) (taskstore.ListResult, error) { return s.Store.ListTasks(ctx, sc, q) })
}

func (s *store) ListActive(ctx context.Context) ([]taskstore.ScopedTask, error) {
	return observe(s, ctx, "ListActive", s.Store.ListActive)
}

func (s *store) DeleteFinished(ctx context.Context, before time.Time) (int, error) {
	return observe(s, ctx, "DeleteFinished", func(ctx context.Context) (int, error) { return s.Store.DeleteFinished(ctx, before) })
}

func (s *store) PutPushConfig(ctx context.Context, sc taskstore.Scope, c *a2a.TaskPushNotificationConfig, ev taskstore.Event) error {
	return observeErr(s, ctx, "PutPushConfig", func(ctx context.Context) error { return s.Store.PutPushConfig(ctx, sc, c, ev) })
}

func (s *store) GetPushConfig(ctx context.Context, sc taskstore.Scope, taskID, id string) (*a2a.TaskPushNotificationConfig, error) {
	return observe(s, ctx, "GetPushConfig", func(ctx context.Context) (*a2a.TaskPushNotificationConfig, error) {
		return s.Store.GetPushConfig(ctx, sc, taskID, id)
	})
}

func (s *store) ListPushConfigs(ctx context.Context, sc taskstore.Scope, taskID string) ([]*a2a.TaskPushNotificationConfig, error) {
	return observe(s, ctx, "ListPushConfigs", func(ctx context.Context) ([]*a2a.TaskPushNotificationConfig, error) {
		return s.Store.ListPushConfigs(ctx, sc, taskID)
	})
}

func (s *store) DeletePushConfig(ctx context.Context, sc taskstore.Scope, taskID, id string) error {
	return observeErr(s, ctx, "DeletePushConfig", func(ctx context.Context) error { return s.Store.DeletePushConfig(ctx, sc, taskID, id) })
}

func (s *store) PushTargets(ctx context.Context, taskID string) ([]taskstore.PushTarget, error) {
	return observe(s, ctx, "PushTargets", func(ctx context.Context) ([]taskstore.PushTarget, error) { return s.Store.PushTargets(ctx, taskID) })
}

func (s *store) PendingPush(ctx context.Context, pt taskstore.PushTarget, limit int) ([]*taskstore.Notification, error) {
	return observe(s, ctx, "PendingPush", func(ctx context.Context) ([]*taskstore.Notification, error) {
		return s.Store.PendingPush(ctx, pt, limit)
	})
}

func (s *store) DeletePush(ctx context.Context, ids ...int64) error {
	return observeErr(s, ctx, "DeletePush", func(ctx context.Context) error { return s.Store.DeletePush(ctx, ids...) })
}

func (s *store) SuspendPush(ctx context.Context, pt taskstore.PushTarget, reason string) error {
	return observeErr(s, ctx, "SuspendPush", func(ctx context.Context) error { return s.Store.SuspendPush(ctx, pt, reason) })
}

func (s *store) PutMessage(ctx context.Context, sc taskstore.Scope, r *taskstore.MessageRecord) (*taskstore.MessageRecord, error) {
	return observe(s, ctx, "PutMessage", func(ctx context.Context) (*taskstore.MessageRecord, error) { return s.Store.PutMessage(ctx, sc, r) })
}

func (s *store) GetMessage(ctx context.Context, sc taskstore.Scope, messageID string) (*taskstore.MessageRecord, error) {
	return observe(s, ctx, "GetMessage", func(ctx context.Context) (*taskstore.MessageRecord, error) {
		return s.Store.GetMessage(ctx, sc, messageID)
	})
}

func (s *store) SetMessageReply(ctx context.Context, sc taskstore.Scope, messageID string, reply *a2a.Message) error {
	return observeErr(s, ctx, "SetMessageReply", func(ctx context.Context) error { return s.Store.SetMessageReply(ctx, sc, messageID, reply) })
}

func (s *store) DeleteMessagesBefore(ctx context.Context, before time.Time) (int, error) {
	return observe(s, ctx, "DeleteMessagesBefore", func(ctx context.Context) (int, error) { return s.Store.DeleteMessagesBefore(ctx, before) })
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
