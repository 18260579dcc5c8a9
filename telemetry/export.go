package telemetry

import (
	"context"
	"fmt"
	"math"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// exporter is the span exporter in front of an OTLP client (the SDK's,
// over HTTP or gRPC, with everything it reads from the environment:
// endpoint, headers, compression, certificates, timeouts, retries). It
// does what the SDK's otlptrace.Exporter does, with one difference that
// matters on a busy server: it encodes the spans to the OTLP protobuf
// wire format itself, into a buffer it reuses, and hands the client each
// resource's spans as the encoded fields of a ResourceSpans message (its
// "unknown" fields, which protobuf writes out as they are). The SDK's
// exporter builds a tree of protobuf messages per span (three per
// attribute) and then encodes it: measured, that was about a third of
// tracing's cost per request, in CPU and in garbage. The messages on the
// wire are the same (TestExporterEncodesAsTheSDK).
type exporter struct {
	client otlptrace.Client

	mu     sync.Mutex // one export at a time: they share buf
	buf    []byte
	groups []spanGroup
}

// spanGroup is the spans of one resource and instrumentation scope, by
// index in the batch.
type spanGroup struct {
	res   *resource.Resource
	key   attribute.Distinct
	scope instrumentation.Scope
	spans []int
	done  bool // written out
}

// newExporter starts client and returns the exporter in front of it.
func newExporter(ctx context.Context, client otlptrace.Client) (*exporter, error) {
	if err := client.Start(ctx); err != nil {
		return nil, err
	}
	return &exporter{client: client}, nil
}

// maxKeptBuffer bounds the encoding buffer kept between exports; a larger
// batch's buffer is let go.
const maxKeptBuffer = 4 << 20

// export sends a batch of spans (see spanExporter).
func (e *exporter) export(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	groups := e.group(spans)
	if len(groups) == 0 {
		return nil
	}
	// One ResourceSpans per resource, with the scopes of its spans.
	var out []*tracepb.ResourceSpans
	var bounds []int
	b := e.buf[:0]
	for i := range groups {
		if groups[i].done {
			continue
		}
		res, key := groups[i].res, groups[i].key
		start := len(b)
		if res != nil {
			b = appendResource(b, res)
		}
		for j := i; j < len(groups); j++ {
			if g := &groups[j]; !g.done && g.key == key {
				b = e.appendScopeSpans(b, g, spans)
				g.done = true
			}
		}
		if res != nil && res.SchemaURL() != "" {
			b = appendString(b, 3, res.SchemaURL())
		}
		bounds = append(bounds, start, len(b))
		out = append(out, &tracepb.ResourceSpans{})
	}
	// The buffer may have moved while it grew: take the slices at the end.
	for j, rs := range out {
		rs.ProtoReflect().SetUnknown(protoreflect.RawFields(b[bounds[2*j]:bounds[2*j+1]]))
	}
	err := e.client.UploadTraces(ctx, out)
	if cap(b) <= maxKeptBuffer {
		e.buf = b[:0]
	} else {
		e.buf = nil
	}
	if err != nil {
		return fmt.Errorf("traces export: %w", err)
	}
	return nil
}

// group sorts the batch's spans by resource and scope, in the order they
// first appear; the groups' slices are kept from one export to the next.
func (e *exporter) group(spans []sdktrace.ReadOnlySpan) []spanGroup {
	groups := e.groups[:0]
	for i, sd := range spans {
		if sd == nil {
			continue
		}
		res, scope := sd.Resource(), sd.InstrumentationScope()
		key := res.Equivalent()
		j := 0
		for j < len(groups) && (groups[j].key != key || groups[j].scope != scope) {
			j++
		}
		if j == len(groups) {
			if len(groups) < cap(groups) {
				groups = groups[:j+1]
			} else {
				groups = append(groups, spanGroup{})
			}
			groups[j] = spanGroup{res: res, key: key, scope: scope, spans: groups[j].spans[:0]}
		}
		groups[j].spans = append(groups[j].spans, i)
	}
	e.groups = groups
	return groups
}

// Shutdown stops the client (see spanExporter).
func (e *exporter) Shutdown(ctx context.Context) error { return e.client.Stop(ctx) }

// The encoding, field by field, of opentelemetry/proto/trace/v1 and
// common/v1, as the SDK's exporter fills the messages
// (exporters/otlp/otlptrace/internal/tracetransform).

// appendTag appends a field's tag; every field number here is below 16,
// so the tag is one byte, but appendUvarint does not assume it.
func appendTag(b []byte, num protowire.Number, typ protowire.Type) []byte {
	return appendUvarint(b, protowire.EncodeTag(num, typ))
}

// appendUvarint is protowire.AppendVarint with the one-byte case, most of
// the tags and lengths of a span, first and inlined.
func appendUvarint(b []byte, v uint64) []byte {
	if v < 0x80 {
		return append(b, byte(v))
	}
	return protowire.AppendVarint(b, v)
}

// openField starts a length-delimited field, reserving one byte for its
// length; closeField writes the length, moving the content up when it
// needs more bytes (a field of 128 bytes or more: the spans and the
// messages around them, not their attributes, which are most fields).
func openField(b []byte, num protowire.Number) ([]byte, int) {
	b = appendTag(b, num, protowire.BytesType)
	return append(b, 0), len(b) + 1
}

func closeField(b []byte, start int) []byte {
	n := len(b) - start
	if n < 0x80 {
		b[start-1] = byte(n)
		return b
	}
	more := protowire.SizeVarint(uint64(n)) - 1
	b = append(b, make([]byte, more)...)
	copy(b[start+more:], b[start:start+n])
	protowire.AppendVarint(b[start-1:start-1], uint64(n))
	return b
}

func appendString(b []byte, num protowire.Number, s string) []byte {
	b = appendTag(b, num, protowire.BytesType)
	return append(appendUvarint(b, uint64(len(s))), s...)
}

func appendBytes(b []byte, num protowire.Number, v []byte) []byte {
	b = appendTag(b, num, protowire.BytesType)
	return append(appendUvarint(b, uint64(len(v))), v...)
}

func appendFixed64(b []byte, num protowire.Number, v uint64) []byte {
	b = appendTag(b, num, protowire.Fixed64Type)
	return protowire.AppendFixed64(b, v)
}

func appendFixed32(b []byte, num protowire.Number, v uint32) []byte {
	b = appendTag(b, num, protowire.Fixed32Type)
	return protowire.AppendFixed32(b, v)
}

func appendVarint(b []byte, num protowire.Number, v uint64) []byte {
	b = appendTag(b, num, protowire.VarintType)
	return appendUvarint(b, v)
}

// appendCount appends a dropped count, omitted when zero as proto3 does.
func appendCount(b []byte, num protowire.Number, n int) []byte {
	if n <= 0 {
		return b
	}
	return appendVarint(b, num, uint64(min(int64(n), math.MaxUint32)))
}

// appendResource appends ResourceSpans.resource.
func appendResource(b []byte, res *resource.Resource) []byte {
	b, s := openField(b, 1)
	for it := res.Iter(); it.Next(); {
		b = appendKeyValue(b, 1, it.Attribute())
	}
	return closeField(b, s)
}

// appendScopeSpans appends one ResourceSpans.scope_spans.
func (e *exporter) appendScopeSpans(b []byte, g *spanGroup, spans []sdktrace.ReadOnlySpan) []byte {
	b, s := openField(b, 2)
	if g.scope != (instrumentation.Scope{}) {
		var is int
		b, is = openField(b, 1)
		if g.scope.Name != "" {
			b = appendString(b, 1, g.scope.Name)
		}
		if g.scope.Version != "" {
			b = appendString(b, 2, g.scope.Version)
		}
		for it := g.scope.Attributes.Iter(); it.Next(); {
			b = appendKeyValue(b, 3, it.Attribute())
		}
		b = closeField(b, is)
	}
	for _, i := range g.spans {
		b = e.appendSpan(b, spans[i])
	}
	if g.scope.SchemaURL != "" {
		b = appendString(b, 3, g.scope.SchemaURL)
	}
	return closeField(b, s)
}

// appendSpan appends one ScopeSpans.spans.
func (e *exporter) appendSpan(b []byte, sd sdktrace.ReadOnlySpan) []byte {
	b, s := openField(b, 2)
	sc := sd.SpanContext()
	tid, sid := sc.TraceID(), sc.SpanID()
	b = appendBytes(b, 1, tid[:])
	b = appendBytes(b, 2, sid[:])
	if ts := sc.TraceState(); ts.Len() > 0 {
		b = appendString(b, 3, ts.String())
	}
	parent := sd.Parent()
	if psid := parent.SpanID(); psid.IsValid() {
		b = appendBytes(b, 4, psid[:])
	}
	if name := sd.Name(); name != "" {
		b = appendString(b, 5, name)
	}
	if k := spanKind(sd.SpanKind()); k != 0 {
		b = appendVarint(b, 6, uint64(k))
	}
	b = appendFixed64(b, 7, uint64(max(0, sd.StartTime().UnixNano())))
	b = appendFixed64(b, 8, uint64(max(0, sd.EndTime().UnixNano())))
	attrs, dropped := sd.Attributes(), sd.DroppedAttributes()
	for _, kv := range attrs {
		b = appendKeyValue(b, 9, kv)
	}
	b = appendCount(b, 10, dropped)
	for _, ev := range sd.Events() {
		var es int
		b, es = openField(b, 11)
		b = appendFixed64(b, 1, uint64(max(0, ev.Time.UnixNano())))
		if ev.Name != "" {
			b = appendString(b, 2, ev.Name)
		}
		for _, kv := range ev.Attributes {
			b = appendKeyValue(b, 3, kv)
		}
		b = appendCount(b, 4, ev.DroppedAttributeCount)
		b = closeField(b, es)
	}
	b = appendCount(b, 12, sd.DroppedEvents())
	for _, l := range sd.Links() {
		var ls int
		b, ls = openField(b, 13)
		ltid, lsid := l.SpanContext.TraceID(), l.SpanContext.SpanID()
		b = appendBytes(b, 1, ltid[:])
		b = appendBytes(b, 2, lsid[:])
		for _, kv := range l.Attributes {
			b = appendKeyValue(b, 4, kv)
		}
		b = appendCount(b, 5, l.DroppedAttributeCount)
		b = appendFixed32(b, 6, spanFlags(l.SpanContext.TraceFlags(), l.SpanContext))
		b = closeField(b, ls)
	}
	b = appendCount(b, 14, sd.DroppedLinks())
	// The SDK's exporter always sets the status, empty or not.
	var st int
	b, st = openField(b, 15)
	status := sd.Status()
	if status.Description != "" {
		b = appendString(b, 2, status.Description)
	}
	switch status.Code {
	case codes.Ok:
		b = appendVarint(b, 3, uint64(tracepb.Status_STATUS_CODE_OK))
	case codes.Error:
		b = appendVarint(b, 3, uint64(tracepb.Status_STATUS_CODE_ERROR))
	}
	b = closeField(b, st)
	b = appendFixed32(b, 16, spanFlags(sc.TraceFlags(), parent))
	return closeField(b, s)
}

// spanFlags are the W3C trace flags and whether the parent is remote.
func spanFlags(tf trace.TraceFlags, parent trace.SpanContext) uint32 {
	flags := uint32(tf) | uint32(tracepb.SpanFlags_SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK)
	if parent.IsRemote() {
		flags |= uint32(tracepb.SpanFlags_SPAN_FLAGS_CONTEXT_IS_REMOTE_MASK)
	}
	return flags
}

// spanKind maps a span kind to the protocol's.
func spanKind(k trace.SpanKind) tracepb.Span_SpanKind {
	switch k {
	case trace.SpanKindInternal:
		return tracepb.Span_SPAN_KIND_INTERNAL
	case trace.SpanKindClient:
		return tracepb.Span_SPAN_KIND_CLIENT
	case trace.SpanKindServer:
		return tracepb.Span_SPAN_KIND_SERVER
	case trace.SpanKindProducer:
		return tracepb.Span_SPAN_KIND_PRODUCER
	case trace.SpanKindConsumer:
		return tracepb.Span_SPAN_KIND_CONSUMER
	}
	return tracepb.Span_SPAN_KIND_UNSPECIFIED
}

// appendKeyValue appends a common.v1.KeyValue as field num.
func appendKeyValue(b []byte, num protowire.Number, kv attribute.KeyValue) []byte {
	b, s := openField(b, num)
	if kv.Key != "" {
		b = appendString(b, 1, string(kv.Key))
	}
	b = appendAnyValue(b, 2, kv.Value)
	return closeField(b, s)
}

// appendArray appends the elements of xs, each made a value by val, as
// an AnyValue's array_value (field 5, an ArrayValue of values, field 1).
func appendArray[T any](b []byte, xs []T, val func(T) attribute.Value) []byte {
	b, a := openField(b, 5)
	for _, x := range xs {
		b = appendAnyValue(b, 1, val(x))
	}
	return closeField(b, a)
}

// appendAnyValue appends a common.v1.AnyValue as field num; the value is
// a oneof, written even when it is its type's zero value.
func appendAnyValue(b []byte, num protowire.Number, v attribute.Value) []byte {
	b, s := openField(b, num)
	switch v.Type() {
	case attribute.BOOL:
		b = appendVarint(b, 2, protowire.EncodeBool(v.AsBool()))
	case attribute.INT64:
		b = appendVarint(b, 3, uint64(v.AsInt64()))
	case attribute.FLOAT64:
		b = appendFixed64(b, 4, math.Float64bits(v.AsFloat64()))
	case attribute.STRING:
		b = appendString(b, 1, v.AsString())
	case attribute.BYTESLICE:
		b = appendBytes(b, 7, v.AsByteSlice())
	case attribute.BOOLSLICE:
		b = appendArray(b, v.AsBoolSlice(), attribute.BoolValue)
	case attribute.INT64SLICE:
		b = appendArray(b, v.AsInt64Slice(), attribute.Int64Value)
	case attribute.FLOAT64SLICE:
		b = appendArray(b, v.AsFloat64Slice(), attribute.Float64Value)
	case attribute.STRINGSLICE:
		b = appendArray(b, v.AsStringSlice(), attribute.StringValue)
	case attribute.SLICE:
		b = appendArray(b, v.AsSlice(), func(x attribute.Value) attribute.Value { return x })
	case attribute.MAP:
		var m int
		b, m = openField(b, 6)
		for _, kv := range v.AsMap() {
			b = appendKeyValue(b, 1, kv)
		}
		b = closeField(b, m)
	case attribute.EMPTY:
	default:
		b = appendString(b, 1, "INVALID")
	}
	return closeField(b, s)
}
