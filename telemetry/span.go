package telemetry

import (
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

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

// tally appends the attributes of the store calls' tally to kv.
func tally(kv []attribute.KeyValue, calls, nanos int64) []attribute.KeyValue {
	return append(kv, keyStoreCalls.Int64(calls), keyStoreDuration.Float64(ms(time.Duration(nanos))))
}
