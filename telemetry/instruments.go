package telemetry

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// Attribute keys of Parley's spans and metrics.
const (
	keyMethod        = attribute.Key("a2a.method")           // the operation, e.g. SendMessage
	keyBinding       = attribute.Key("a2a.binding")          // JSONRPC, HTTP+JSON or GRPC
	keyVersion       = attribute.Key("a2a.protocol.version") // the version a server served a call in, e.g. 1.0 or 0.3
	keyOutcome       = attribute.Key("a2a.outcome")          // ok, error or canceled
	keyReason        = attribute.Key("a2a.error.reason")     // e.g. TASK_NOT_FOUND
	keyTaskID        = attribute.Key("a2a.task.id")
	keyContextID     = attribute.Key("a2a.context.id")
	keyTaskState     = attribute.Key("a2a.task.state")    // the last state a call saw
	keyEvents        = attribute.Key("a2a.stream.events") // events a stream carried
	keyStoreOp       = attribute.Key("parley.store.operation")
	keyStoreDuration = attribute.Key("parley.store.duration_ms")
	keyStoreError    = attribute.Key("parley.store.error")
	keyStoreCalls    = attribute.Key("parley.store.calls")
	keyPushOutcome   = attribute.Key("parley.push.outcome") // delivered, retry or dropped
	keyPushConfig    = attribute.Key("parley.push.config.id")
	keySeq           = attribute.Key("parley.event.seq")
	keyServerAddress = attribute.Key("server.address")
	keyURLScheme     = attribute.Key("url.scheme")
)

// Outcomes of an operation.
const (
	outcomeOK       = "ok"
	outcomeError    = "error"
	outcomeCanceled = "canceled"
)

// durationBuckets are the histogram boundaries, in seconds: from half a
// millisecond (a read from memory) to five minutes (a long stream).
var durationBuckets = [...]float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300}

// instruments are the metrics Parley records, each named in a comment
// below; the events appended and the active executions are counted in
// Parley's memory and read when the metrics are collected.
type instruments struct {
	meter          metric.Meter
	streamsOpen    metric.Int64UpDownCounter // parley.server.streams.open
	appended       atomic.Int64              // parley.store.events.appended
	executions     liveSet                   // parley.server.executions.active
	serverDuration metric.Float64Histogram   // parley.server.request.duration
	clientDuration metric.Float64Histogram   // parley.client.request.duration
	storeDuration  metric.Float64Histogram   // parley.store.operation.duration
	calls          sync.Map                  // callSide → *callDurations (parley.server/client.request.duration)
}

func newInstruments(m metric.Meter) *instruments {
	ins := &instruments{
		meter: m,
		streamsOpen: must(m.Int64UpDownCounter("parley.server.streams.open", metric.WithUnit("{stream}"),
			metric.WithDescription("Streams (SendStreamingMessage, SubscribeToTask) being served now."))),
		serverDuration: durationHistogram(m, "parley.server.request.duration",
			"Duration of A2A operations served, streams until they end, by method, binding and outcome."),
		clientDuration: durationHistogram(m, "parley.client.request.duration",
			"Duration of A2A calls made by the client library, by method, binding and outcome."),
		storeDuration: durationHistogram(m, "parley.store.operation.duration",
			"Duration of task store calls, by operation and outcome."),
	}
	must(m.Int64ObservableUpDownCounter("parley.server.executions.active", metric.WithUnit("{execution}"),
		metric.WithDescription("Agent executions running now, detached ones included."),
		metric.WithInt64Callback(func(_ context.Context, o metric.Int64Observer) error {
			o.Observe(int64(ins.executions.count()))
			return nil
		})))
	must(m.Int64ObservableCounter("parley.store.events.appended", metric.WithUnit("{event}"),
		metric.WithDescription("Task events written to the store."),
		metric.WithInt64Callback(func(_ context.Context, o metric.Int64Observer) error {
			o.Observe(ins.appended.Load())
			return nil
		})))
	return ins
}

// liveSet holds the contexts of the agent executions that may be running:
// an execution is running until its context is done (the core cancels it
// when the execution ends). Finding out when each one ends would take a
// goroutine per execution (context.AfterFunc starts one), which measured
// as a good part of the metrics' cost per message; instead, count looks
// at the contexts when the metrics are collected, and add drops the
// finished ones whenever the set has doubled since it last did, so that
// between collections too it stays within twice the executions running
// (or 64), at a cost per execution that does not grow with them.
type liveSet struct {
	mu      sync.Mutex
	ctxs    []context.Context
	sweepAt int // the length at which add drops the finished ones
}

// add records the context of an execution that starts.
func (l *liveSet) add(ctx context.Context) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.ctxs) >= l.sweepAt {
		l.sweep()
	}
	l.ctxs = append(l.ctxs, ctx)
}

// sweep drops the executions that ended. Callers hold l.mu.
func (l *liveSet) sweep() {
	l.ctxs = slices.DeleteFunc(l.ctxs, func(c context.Context) bool { return c.Err() != nil })
	if cap(l.ctxs) > 64 && len(l.ctxs) < cap(l.ctxs)/4 {
		l.ctxs = append([]context.Context(nil), l.ctxs...) // let a burst's array go
	}
	l.sweepAt = max(2*len(l.ctxs), 64)
}

// count drops the executions that ended and returns how many run.
func (l *liveSet) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sweep()
	return len(l.ctxs)
}
