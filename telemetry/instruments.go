package telemetry

import (
	"context"
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

	callsMu     sync.Mutex
	serverCalls map[string]*callDurations // parley.server.request.duration, by binding
	clientCalls map[string]*callDurations // parley.client.request.duration, by binding
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
		serverCalls: make(map[string]*callDurations),
		clientCalls: make(map[string]*callDurations),
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
// at the contexts when the metrics are collected, and add drops up to two
// finished ones each time it adds one, so that the set stays about as
// large as the executions running, between collections too.
type liveSet struct {
	mu   sync.Mutex
	ctxs []context.Context
	next int // where add looks for finished executions
}

// add records the context of an execution that starts.
func (l *liveSet) add(ctx context.Context) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for range 2 {
		if len(l.ctxs) == 0 {
			break
		}
		if l.next >= len(l.ctxs) {
			l.next = 0
		}
		if l.ctxs[l.next].Err() != nil {
			l.remove(l.next)
		} else {
			l.next++
		}
	}
	l.ctxs = append(l.ctxs, ctx)
}

// remove drops the context at i, moving the last one there.
func (l *liveSet) remove(i int) {
	last := len(l.ctxs) - 1
	l.ctxs[i] = l.ctxs[last]
	l.ctxs[last] = nil
	l.ctxs = l.ctxs[:last]
}

// count drops the executions that ended and returns how many run.
func (l *liveSet) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := 0; i < len(l.ctxs); {
		if l.ctxs[i].Err() != nil {
			l.remove(i)
		} else {
			i++
		}
	}
	if cap(l.ctxs) > 64 && len(l.ctxs) < cap(l.ctxs)/4 {
		l.ctxs = append([]context.Context(nil), l.ctxs...) // let a burst's array go
	}
	return len(l.ctxs)
}
