package telemetry

import (
	"context"
	"errors"
	"sort"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
)

// captureClient is an OTLP client that keeps what it would send, as the
// receiver would decode it.
type captureClient struct {
	mu   sync.Mutex
	got  []*coltracepb.ExportTraceServiceRequest
	fail error
}

func (c *captureClient) Start(context.Context) error { return nil }
func (c *captureClient) Stop(context.Context) error  { return nil }
func (c *captureClient) UploadTraces(_ context.Context, rs []*tracepb.ResourceSpans) error {
	b, err := proto.Marshal(&coltracepb.ExportTraceServiceRequest{ResourceSpans: rs})
	if err != nil {
		return err
	}
	var req coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(b, &req); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.got = append(c.got, &req)
	return c.fail
}

// collector is a span processor that keeps the ended spans.
type collector struct {
	mu    sync.Mutex
	spans []sdktrace.ReadOnlySpan
}

func (c *collector) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (c *collector) OnEnd(s sdktrace.ReadOnlySpan) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.spans = append(c.spans, s)
}
func (c *collector) Shutdown(context.Context) error   { return nil }
func (c *collector) ForceFlush(context.Context) error { return nil }

// The exporter sends what the SDK's OTLP exporter sends, message for
// message, for spans with every kind of attribute value, events, links,
// statuses, remote parents, trace state, dropped counts, two scopes and
// two resources; its buffer, reused, does not leak from one export into
// the next.
func TestExporterEncodesAsTheSDK(t *testing.T) {
	col := &collector{}
	limits := sdktrace.NewSpanLimits()
	limits.AttributePerEventCountLimit = 2
	limits.EventCountLimit = 3
	provider := func(service string) *sdktrace.TracerProvider {
		res := resource.NewWithAttributes("https://opentelemetry.io/schemas/1.26.0", attribute.String("service.name", service), attribute.Int("replica", 3))
		return sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(col), sdktrace.WithResource(res), sdktrace.WithRawSpanLimits(limits))
	}
	p1, p2 := provider("one"), provider("two")
	scoped := p1.Tracer("scoped", trace.WithInstrumentationVersion("1.2.3"), trace.WithSchemaURL("https://example.com/schema"),
		trace.WithInstrumentationAttributes(attribute.String("lib", "x")))
	plain := p1.Tracer("")

	remote := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1, 2, 3}, SpanID: trace.SpanID{4, 5, 6}, TraceFlags: trace.FlagsSampled, Remote: true,
	})
	ts, err := trace.ParseTraceState("vendor=abc,other=1")
	if err != nil {
		t.Fatal(err)
	}
	remote = remote.WithTraceState(ts)
	ctx := trace.ContextWithRemoteSpanContext(context.Background(), remote)

	_, s1 := scoped.Start(ctx, "SendMessage", trace.WithSpanKind(trace.SpanKindServer), trace.WithLinks(
		trace.Link{SpanContext: remote, Attributes: []attribute.KeyValue{attribute.String("why", "retry")}}))
	s1.SetAttributes(
		attribute.Bool("b", true), attribute.Bool("f", false), attribute.Int64("i", -42), attribute.Int64("zero", 0),
		attribute.Float64("x", 0.125), attribute.String("s", "héllo"), attribute.String("empty", ""),
		attribute.BoolSlice("bs", []bool{true, false}), attribute.Int64Slice("is", []int64{1, -2}),
		attribute.Float64Slice("fs", []float64{1.5}), attribute.StringSlice("ss", []string{"a", ""}),
		attribute.StringSlice("none", nil), attribute.ByteSlice("bytes", []byte{0, 1, 2}),
		attribute.Slice("mixed", attribute.IntValue(1), attribute.StringValue("two")),
		attribute.Map("m", attribute.String("k", "v"), attribute.Int("n", 7)),
		attribute.KeyValue{Key: "nothing"},
	)
	s1.AddEvent("store.Append", trace.WithAttributes(attribute.Float64("parley.store.duration_ms", 0.25)))
	s1.AddEvent("many", trace.WithAttributes(attribute.Int("a", 1), attribute.Int("b", 2), attribute.Int("c", 3)))
	s1.AddEvent("")
	s1.AddEvent("dropped")
	s1.SetStatus(codes.Error, "the agent failed")
	s1.End()

	_, s2 := plain.Start(context.Background(), "push.webhook", trace.WithSpanKind(trace.SpanKindClient))
	s2.SetStatus(codes.Ok, "")
	s2.End()
	_, s3 := p2.Tracer("scoped").Start(context.Background(), "other resource", trace.WithSpanKind(trace.SpanKindProducer))
	s3.End()
	_, s4 := scoped.Start(ctx, "second in scope", trace.WithSpanKind(trace.SpanKindConsumer))
	s4.End()
	_, s5 := p1.Tracer("internal").Start(context.Background(), "internal")
	s5.End()

	spans := col.spans
	sdkClient, ourClient := &captureClient{}, &captureClient{}
	sdkExp := otlptrace.NewUnstarted(sdkClient)
	exp, err := newExporter(context.Background(), ourClient)
	if err != nil {
		t.Fatal(err)
	}
	// The fourth batch's messages need lengths of three bytes.
	var big []sdktrace.ReadOnlySpan
	for range 100 {
		big = append(big, spans...)
	}
	for _, batch := range [][]sdktrace.ReadOnlySpan{spans, spans[1:2], spans, big} {
		if err := sdkExp.ExportSpans(context.Background(), batch); err != nil {
			t.Fatal(err)
		}
		if err := exp.export(context.Background(), readOnly(batch)); err != nil {
			t.Fatal(err)
		}
	}
	if len(sdkClient.got) != 4 || len(ourClient.got) != 4 {
		t.Fatalf("%d and %d requests, want 4 each", len(sdkClient.got), len(ourClient.got))
	}
	for i := range sdkClient.got {
		want, got := sdkClient.got[i], ourClient.got[i]
		for _, r := range []*coltracepb.ExportTraceServiceRequest{want, got} {
			// The SDK's exporter orders resources by map iteration.
			sort.Slice(r.ResourceSpans, func(a, b int) bool {
				return r.ResourceSpans[a].GetResource().String() < r.ResourceSpans[b].GetResource().String()
			})
		}
		if !proto.Equal(want, got) {
			t.Errorf("request %d differs from the SDK's:\n%s", i, diff(want, got))
		}
	}
	if n := len(ourClient.got[0].GetResourceSpans()); n != 2 {
		t.Errorf("%d resources, want 2", n)
	}

	// An upload's error is returned, wrapped as the SDK's exporter does.
	ourClient.fail = errors.New("collector down")
	if err := exp.export(context.Background(), readOnly(spans)); err == nil || err.Error() != "traces export: collector down" {
		t.Errorf("export error %v, want traces export: collector down", err)
	}
	if err := exp.export(context.Background(), nil); err != nil {
		t.Errorf("empty export: %v", err)
	}
}

// readOnly is the SDK's spans as the exporter takes them.
func readOnly(spans []sdktrace.ReadOnlySpan) []sdktrace.ReadOnlySpan {
	out := make([]sdktrace.ReadOnlySpan, len(spans))
	for i, s := range spans {
		out[i] = s
	}
	return out
}

// diff shows the two messages.
func diff(want, got proto.Message) string {
	return "want\n" + prototext.Format(want) + "\ngot\n" + prototext.Format(got)
}
