package telemetry

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/embedded"
	"go.opentelemetry.io/otel/trace/noop"
)

// serverSpan is the span of one server operation. Parley records it itself
// for as long as only Parley writes to it: the attributes it sets when the
// operation ends, the tally of the store calls made for it, and an event
// per slow or failed store call. Ended, it goes to the batcher and the
// exporter like the SDK's spans, encoded the same way. The SDK's span
// costs three allocations and about 1.3 KB per operation (the span, a
// copy of its attributes, the snapshot taken when it ends); this one is a
// single allocation, and measured as most of what was left of tracing's
// cost per request.
//
// Anything else that writes to it, that is an agent through
// trace.SpanFromContext (attributes, events, links, errors, a status, a
// name, an early end), hands it to the SDK first: the SDK's span is
// started with the same ids, parent, name, kind and start time, the store
// events recorded so far are replayed into it, and from then on every call
// goes to it, Parley's own at the end included. So what an agent does to
// the span behaves exactly as the SDK specifies (limits, de-duplication,
// truncation, exceptions), and the common case, where no agent touches
// it, pays for none of that.
type serverSpan struct {
	embedded.Span
	t      *Telemetry
	sc     trace.SpanContext
	parent trace.SpanContext
	name   string
	start  time.Time

	calls atomic.Int64 // store calls made for the operation (see store.done)
	nanos atomic.Int64 // their time

	mu            sync.Mutex
	ended         bool
	sdk           trace.Span // the SDK's span, once something other than Parley wrote to this one
	end           time.Time
	sampled       []attribute.KeyValue // the attributes the sampler gave, if any
	result        result               // the attributes the span ended with (see attributes)
	tallied       [2]int64             // calls and nanos when it ended
	events        []sdktrace.Event
	droppedEvents int
	status        sdktrace.Status
}

// startServerSpan starts the span of a server operation named name, whose
// parent is the span context ctx carries, sampled by the sampler the
// tracer provider has too. It returns ctx with the span, and the span;
// nil when the sampler drops it (ctx then carries the new span context,
// not sampled, as the SDK's non-recording spans do).
func (t *Telemetry) startServerSpan(ctx context.Context, name string) (context.Context, *serverSpan) {
	parent := trace.SpanContextFromContext(ctx)
	tid := parent.TraceID()
	if !tid.IsValid() {
		tid = newTraceID()
	}
	res := t.sampler.ShouldSample(sdktrace.SamplingParameters{ParentContext: ctx, TraceID: tid, Name: name, Kind: trace.SpanKindServer})
	flags := parent.TraceFlags() &^ trace.FlagsSampled
	if res.Decision == sdktrace.RecordAndSample {
		flags |= trace.FlagsSampled
	}
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: newSpanID(), TraceFlags: flags, TraceState: res.Tracestate})
	if res.Decision == sdktrace.Drop {
		return trace.ContextWithSpanContext(ctx, sc), nil
	}
	s := &serverSpan{t: t, sc: sc, parent: parent, name: name, start: time.Now(), sampled: res.Attributes}
	return trace.ContextWithSpan(ctx, s), s
}

// finish records the call's result on the span and ends it.
func (s *serverSpan) finish(r *result, code codes.Code, description string) {
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return
	}
	s.ended = true
	if sdk := s.sdk; sdk != nil {
		s.mu.Unlock()
		buf := attrBufs.Get().(*[maxSpanAttrs]attribute.KeyValue)
		kv := tally(r.attributes(buf[:0]), s.calls.Load(), s.nanos.Load())
		sdk.SetAttributes(kv...)
		clear(kv)
		attrBufs.Put(buf)
		sdk.SetStatus(code, description)
		sdk.End()
		return
	}
	s.end = s.start.Add(time.Since(s.start))
	s.result = *r
	s.tallied = [2]int64{s.calls.Load(), s.nanos.Load()} // a detached execution may go on calling
	if code != codes.Unset {
		s.status = sdktrace.Status{Code: code}
		if code == codes.Error {
			s.status.Description = description
		}
	}
	s.mu.Unlock()
	s.t.batch.add(s)
}

// tally appends the attributes of the store calls' tally to kv.
func tally(kv []attribute.KeyValue, calls, nanos int64) []attribute.KeyValue {
	return append(kv, keyStoreCalls.Int64(calls), keyStoreDuration.Float64(ms(time.Duration(nanos))))
}

// attributes appends the attributes of the ended span to kv, within the
// span limits as the SDK applies them to attributes that are valid and
// distinct (these are), and returns them with how many the limits
// dropped. They are kept as the result they come from, not as a slice of
// attributes, and made when the span is exported, into the exporter's
// buffer: the span is then less than half the size, with fewer pointers
// for the garbage collector to follow.
func (s *serverSpan) attributes(kv []attribute.KeyValue) ([]attribute.KeyValue, int) {
	start := len(kv)
	kv = tally(s.result.attributes(append(kv, s.sampled...)), s.tallied[0], s.tallied[1])
	limits := &s.t.limits
	dropped := 0
	if n := limits.AttributeCountLimit; n >= 0 && len(kv)-start > n {
		dropped = len(kv) - start - n
		kv = kv[:start+n]
	}
	if n := limits.AttributeValueLengthLimit; n >= 0 {
		for i := start; i < len(kv); i++ {
			if kv[i].Value.Type() == attribute.STRING {
				kv[i].Value = attribute.StringValue(truncate(kv[i].Value.AsString(), n))
			}
		}
	}
	return kv, dropped
}

// truncate cuts v to at most n characters.
func truncate(v string, n int) string {
	if len(v) <= n {
		return v
	}
	for i := range v {
		if n == 0 {
			return v[:i]
		}
		n--
	}
	return v
}

// storeEvent adds the event of a slow or failed store call, stamped now.
// The events over the limit push out the oldest, as the SDK's do.
func (s *serverSpan) storeEvent(name string, kv ...attribute.KeyValue) {
	ts := time.Now()
	s.mu.Lock()
	if sdk := s.sdk; sdk != nil || s.ended {
		s.mu.Unlock()
		if sdk != nil {
			sdk.AddEvent(name, trace.WithTimestamp(ts), trace.WithAttributes(kv...))
		}
		return
	}
	limits := &s.t.limits
	ev := sdktrace.Event{Name: name, Attributes: kv, Time: ts}
	if n := limits.AttributePerEventCountLimit; n >= 0 && len(kv) > n {
		ev.Attributes, ev.DroppedAttributeCount = kv[:n], len(kv)-n
	}
	switch n := limits.EventCountLimit; {
	case n == 0:
		s.droppedEvents++
	case n > 0 && len(s.events) >= n:
		s.events = append(s.events[1:], ev)
		s.droppedEvents++
	default:
		s.events = append(s.events, ev)
	}
	s.mu.Unlock()
}

// foreign returns the span a write from outside Parley goes to: the SDK's
// span, started now if need be; a no-op span once this one has ended.
func (s *serverSpan) foreign() trace.Span {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sdk == nil {
		if s.ended {
			return noop.Span{}
		}
		s.sdk = s.handOver()
	}
	return s.sdk
}

// handOver starts the SDK's span that takes this one's place (see
// serverSpan), s.mu held. The ids come through the context to idSource;
// the sampler, asked again with the same parent and trace id, decides the
// same way (every sampler Parley configures is deterministic).
func (s *serverSpan) handOver() trace.Span {
	ctx := context.WithValue(trace.ContextWithSpanContext(context.Background(), s.parent), presetIDs{}, s.sc)
	_, sdk := s.t.tracer.Start(ctx, s.name, trace.WithSpanKind(trace.SpanKindServer), trace.WithTimestamp(s.start))
	sdk.SetAttributes(s.sampled...)
	for _, ev := range s.events {
		sdk.AddEvent(ev.Name, trace.WithTimestamp(ev.Time), trace.WithAttributes(ev.Attributes...))
	}
	s.events = nil
	return sdk
}

// End implements trace.Span. Parley ends the span with finish; an End
// from elsewhere ends it early, as the SDK's span would be.
func (s *serverSpan) End(options ...trace.SpanEndOption) { s.foreign().End(options...) }

// AddEvent implements trace.Span.
func (s *serverSpan) AddEvent(name string, options ...trace.EventOption) {
	s.foreign().AddEvent(name, options...)
}

// AddLink implements trace.Span.
func (s *serverSpan) AddLink(link trace.Link) { s.foreign().AddLink(link) }

// RecordError implements trace.Span.
func (s *serverSpan) RecordError(err error, options ...trace.EventOption) {
	if err != nil {
		s.foreign().RecordError(err, options...)
	}
}

// SetStatus implements trace.Span.
func (s *serverSpan) SetStatus(code codes.Code, description string) {
	s.foreign().SetStatus(code, description)
}

// SetName implements trace.Span.
func (s *serverSpan) SetName(name string) { s.foreign().SetName(name) }

// SetAttributes implements trace.Span.
func (s *serverSpan) SetAttributes(kv ...attribute.KeyValue) {
	if len(kv) > 0 {
		s.foreign().SetAttributes(kv...)
	}
}

// IsRecording implements trace.Span: true until the span ends.
func (s *serverSpan) IsRecording() bool {
	s.mu.Lock()
	sdk, ended := s.sdk, s.ended
	s.mu.Unlock()
	if sdk != nil {
		return sdk.IsRecording()
	}
	return !ended
}

// SpanContext implements trace.Span and spanData.
func (s *serverSpan) SpanContext() trace.SpanContext { return s.sc }

// TracerProvider implements trace.Span: the SDK's provider, whose spans
// nest under this one.
func (s *serverSpan) TracerProvider() trace.TracerProvider { return s.t.tp }

// What the exporter reads of an ended span (spanData); the fields do not
// change once the span has ended.

func (s *serverSpan) Name() string              { return s.name }
func (s *serverSpan) Parent() trace.SpanContext { return s.parent }
func (s *serverSpan) SpanKind() trace.SpanKind  { return trace.SpanKindServer }
func (s *serverSpan) StartTime() time.Time      { return s.start }
func (s *serverSpan) EndTime() time.Time        { return s.end }
func (s *serverSpan) Attributes() []attribute.KeyValue {
	kv, _ := s.attributes(nil)
	return kv
}
func (s *serverSpan) Links() []sdktrace.Link   { return nil }
func (s *serverSpan) Events() []sdktrace.Event { return s.events }
func (s *serverSpan) Status() sdktrace.Status  { return s.status }
func (s *serverSpan) DroppedAttributes() int {
	_, n := s.attributes(nil)
	return n
}
func (s *serverSpan) DroppedLinks() int            { return 0 }
func (s *serverSpan) DroppedEvents() int           { return s.droppedEvents }
func (s *serverSpan) Resource() *resource.Resource { return s.t.res }
func (s *serverSpan) InstrumentationScope() instrumentation.Scope {
	return instrumentation.Scope{Name: ScopeName}
}

// spanData is what the exporter reads of an ended span: a serverSpan, or
// the SDK's sdktrace.ReadOnlySpan, which has these methods and more.
type spanData interface {
	Name() string
	SpanContext() trace.SpanContext
	Parent() trace.SpanContext
	SpanKind() trace.SpanKind
	StartTime() time.Time
	EndTime() time.Time
	Attributes() []attribute.KeyValue
	Links() []sdktrace.Link
	Events() []sdktrace.Event
	Status() sdktrace.Status
	InstrumentationScope() instrumentation.Scope
	Resource() *resource.Resource
	DroppedAttributes() int
	DroppedLinks() int
	DroppedEvents() int
}

// idSource is the tracer provider's id generator: random ids from
// math/rand/v2 (the SDK's default draws from one math/rand source under a
// lock), or, for the SDK's span that takes a serverSpan's place, that
// span's ids.
type idSource struct{}

// presetIDs is the context key of the span context whose ids idSource
// gives.
type presetIDs struct{}

// NewIDs implements sdktrace.IDGenerator.
func (idSource) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	if sc, ok := ctx.Value(presetIDs{}).(trace.SpanContext); ok {
		return sc.TraceID(), sc.SpanID()
	}
	return newTraceID(), newSpanID()
}

// NewSpanID implements sdktrace.IDGenerator.
func (idSource) NewSpanID(ctx context.Context, tid trace.TraceID) trace.SpanID {
	if sc, ok := ctx.Value(presetIDs{}).(trace.SpanContext); ok && sc.TraceID() == tid {
		return sc.SpanID()
	}
	return newSpanID()
}

// newTraceID returns a random, valid trace id.
func newTraceID() (id trace.TraceID) {
	for !id.IsValid() {
		binary.NativeEndian.PutUint64(id[:8], rand.Uint64())
		binary.NativeEndian.PutUint64(id[8:], rand.Uint64())
	}
	return id
}

// newSpanID returns a random, valid span id.
func newSpanID() (id trace.SpanID) {
	for !id.IsValid() {
		binary.NativeEndian.PutUint64(id[:], rand.Uint64())
	}
	return id
}
