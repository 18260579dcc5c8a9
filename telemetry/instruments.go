package telemetry

import (
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// Attribute keys of Parley's spans and metrics.
const (
	keyMethod        = attribute.Key("a2a.method")       // the operation, e.g. SendMessage
	keyBinding       = attribute.Key("a2a.binding")      // JSONRPC, HTTP+JSON or GRPC
	keyOutcome       = attribute.Key("a2a.outcome")      // ok, error or canceled
	keyReason        = attribute.Key("a2a.error.reason") // e.g. TASK_NOT_FOUND
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
var durationBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300}

// instruments are the metrics Parley records (docs/observability.md
// explains each).
type instruments struct {
	meter          metric.Meter
	serverDuration metric.Float64Histogram   // parley.server.request.duration
	streamsOpen    metric.Int64UpDownCounter // parley.server.streams.open
	executions     metric.Int64UpDownCounter // parley.server.executions.active
	events         metric.Int64Counter       // parley.store.events.appended
	storeDuration  metric.Float64Histogram   // parley.store.operation.duration
	clientDuration metric.Float64Histogram   // parley.client.request.duration
}

func newInstruments(m metric.Meter) *instruments {
	hist := func(name, desc string) metric.Float64Histogram {
		return must(m.Float64Histogram(name, metric.WithUnit("s"), metric.WithDescription(desc),
			metric.WithExplicitBucketBoundaries(durationBuckets...)))
	}
	return &instruments{
		meter:          m,
		serverDuration: hist("parley.server.request.duration", "Duration of A2A operations served, streams until they end, by method, binding and outcome."),
		streamsOpen: must(m.Int64UpDownCounter("parley.server.streams.open", metric.WithUnit("{stream}"),
			metric.WithDescription("Streams (SendStreamingMessage, SubscribeToTask) being served now."))),
		executions: must(m.Int64UpDownCounter("parley.server.executions.active", metric.WithUnit("{execution}"),
			metric.WithDescription("Agent executions running now, detached ones included."))),
		events: must(m.Int64Counter("parley.store.events.appended", metric.WithUnit("{event}"),
			metric.WithDescription("Task events written to the store."))),
		storeDuration:  hist("parley.store.operation.duration", "Duration of task store calls, by operation and outcome."),
		clientDuration: hist("parley.client.request.duration", "Duration of A2A calls made by the client library, by method, binding and outcome."),
	}
}
