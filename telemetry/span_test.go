package telemetry

import (
	"context"
	"errors"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/attribute"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/resource"
	"go.opentelemetry.io/otel/trace"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
	"parley.dev/parley/a2a"
)

// tracingOnly is a Telemetry that traces (as New makes it, configured by
// getenv), its spans exported to a captureClient.
func tracingOnly(t *testing.T, getenv func(string) string) (*Telemetry, *captureClient) {
	t.Helper()
	capture := &captureClient{}
	tel := &Telemetry{}
	res := resource.NewSchemaless(attribute.String("service.name", "test"))
	if err := tel.startTracing(context.Background(), capture, res, getenv); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tel.Shutdown(context.Background()) })
	return tel, capture
}

// exported flushes tel and returns the spans sent so far, in order.
func exported(t *testing.T, tel *Telemetry, capture *captureClient) []*tracepb.Span {
	t.Helper()
	if err := tel.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	capture.mu.Lock()
	defer capture.mu.Unlock()
	var spans []*tracepb.Span
	for _, req := range capture.got {
		for _, rs := range req.GetResourceSpans() {
			for _, ss := range rs.GetScopeSpans() {
				spans = append(spans, ss.GetSpans()...)
			}
		}
	}
	capture.got = nil
	return spans
}

// timeless is a span without its ids and times, which two spans made one
// after the other cannot share.
func timeless(s *tracepb.Span) *tracepb.Span {
	s = proto.CloneOf(s)
	s.TraceId, s.SpanId, s.StartTimeUnixNano, s.EndTimeUnixNano = nil, nil, 0, 0
	for _, ev := range s.Events {
		ev.TimeUnixNano = 0
	}
	return s
}

// The server span Parley records itself is exported as the SDK's span
// would be after the same calls: alone, within tight limits, and when an
// agent writes to it (then it is the SDK's span, with the same ids).
func TestServerSpanAsTheSDK(t *testing.T) {
	remote := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{7}, SpanID: trace.SpanID{8}, TraceFlags: trace.FlagsSampled, Remote: true})
	ts, _ := trace.ParseTraceState("k=v")
	remote = remote.WithTraceState(ts)
	failed := errors.New("disk full")
	end := &result{binding: "JSONRPC", summary: summary{taskID: "task-with-a-long-id", contextID: "c", state: a2a.TaskState_TASK_STATE_FAILED},
		outcome: outcomeError, reason: "TASK_NOT_FOUND"}
	// What the server span ends with (no store call went through Store).
	endKV := append(end.attributes(nil), keyStoreCalls.Int64(0), keyStoreDuration.Float64(0))

	cases := []struct {
		name   string
		env    []string // process environment: the SDK reads the span limits there
		parent trace.SpanContext
		// ours is what Parley and an agent do to the server span; sdk
		// does the same to the SDK's span.
		ours func(s *serverSpan)
		sdk  func(s trace.Span)
	}{{
		name: "Parley alone", parent: remote,
		ours: func(s *serverSpan) {
			s.storeEvent("store.Append", keyStoreDuration.Float64(0.5))
			s.storeEvent("store.GetTask", keyStoreDuration.Float64(1), keyStoreError.String(failed.Error()))
			s.finish(end, codes.Error, "the agent failed")
		},
		sdk: func(s trace.Span) {
			s.AddEvent("store.Append", trace.WithAttributes(keyStoreDuration.Float64(0.5)))
			s.AddEvent("store.GetTask", trace.WithAttributes(keyStoreDuration.Float64(1), keyStoreError.String(failed.Error())))
			s.SetAttributes(endKV...)
			s.SetStatus(codes.Error, "the agent failed")
			s.End()
		},
	}, {
		name: "limits",
		env: []string{"OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT", "2", "OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT", "4",
			"OTEL_SPAN_EVENT_COUNT_LIMIT", "2", "OTEL_EVENT_ATTRIBUTE_COUNT_LIMIT", "1"},
		ours: func(s *serverSpan) {
			for _, name := range []string{"one", "two", "three"} {
				s.storeEvent(name, keyStoreDuration.Float64(2), keyStoreError.String("e"))
			}
			s.finish(end, codes.Unset, "")
		},
		sdk: func(s trace.Span) {
			for _, name := range []string{"one", "two", "three"} {
				s.AddEvent(name, trace.WithAttributes(keyStoreDuration.Float64(2), keyStoreError.String("e")))
			}
			s.SetAttributes(endKV...)
			s.End()
		},
	}, {
		name: "an agent writes to it", parent: remote,
		ours: func(s *serverSpan) {
			s.storeEvent("store.CreateTask", keyStoreDuration.Float64(0.25))
			s.SetAttributes(attribute.String("agent.model", "m"), attribute.String("agent.model", "n"))
			s.RecordError(failed)
			s.AddLink(trace.Link{SpanContext: remote})
			s.storeEvent("store.Append", keyStoreDuration.Float64(0.75))
			s.finish(end, codes.Unset, "")
		},
		sdk: func(s trace.Span) {
			s.AddEvent("store.CreateTask", trace.WithAttributes(keyStoreDuration.Float64(0.25)))
			s.SetAttributes(attribute.String("agent.model", "m"), attribute.String("agent.model", "n"))
			s.RecordError(failed)
			s.AddLink(trace.Link{SpanContext: remote})
			s.AddEvent("store.Append", trace.WithAttributes(keyStoreDuration.Float64(0.75)))
			s.SetAttributes(endKV...)
			s.End()
		},
	}, {
		name: "an agent ends it early",
		ours: func(s *serverSpan) {
			s.SetName("renamed")
			s.End()
			s.storeEvent("store.Append", keyStoreDuration.Float64(0.75))
			s.SetAttributes(attribute.Bool("late", true))
			s.finish(end, codes.Error, "ignored")
		},
		sdk: func(s trace.Span) {
			s.SetName("renamed")
			s.End()
		},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for i := 0; i < len(c.env); i += 2 {
				t.Setenv(c.env[i], c.env[i+1])
			}
			tel, capture := tracingOnly(t, env("OTEL_TRACES_SAMPLER", "parentbased_always_on"))
			ctx := context.Background()
			if c.parent.IsValid() {
				ctx = trace.ContextWithRemoteSpanContext(ctx, c.parent)
			}
			octx, ours := tel.startServerSpan(ctx, "SendMessage")
			if ours == nil || trace.SpanFromContext(octx) != trace.Span(ours) || !ours.IsRecording() {
				t.Fatalf("no recording server span in the context: %v", ours)
			}
			c.ours(ours)
			if ours.IsRecording() {
				t.Error("the span still records once ended")
			}
			_, sdk := tel.tracer.Start(ctx, "SendMessage", trace.WithSpanKind(trace.SpanKindServer))
			c.sdk(sdk)
			spans := exported(t, tel, capture)
			if len(spans) != 2 {
				t.Fatalf("%d spans exported, want 2", len(spans))
			}
			got, want := spans[0], spans[1]
			sc := ours.SpanContext()
			if tid, sid := sc.TraceID(), sc.SpanID(); string(got.TraceId) != string(tid[:]) || string(got.SpanId) != string(sid[:]) {
				t.Errorf("exported ids %x/%x, want the span's %s/%s", got.TraceId, got.SpanId, tid, sid)
			}
			if c.parent.IsValid() && sc.TraceID() != c.parent.TraceID() {
				t.Errorf("trace id %s, want the parent's %s", sc.TraceID(), c.parent.TraceID())
			}
			if got.StartTimeUnixNano == 0 || got.EndTimeUnixNano < got.StartTimeUnixNano {
				t.Errorf("times %d to %d", got.StartTimeUnixNano, got.EndTimeUnixNano)
			}
			if !proto.Equal(timeless(got), timeless(want)) {
				t.Errorf("the server span differs from the SDK's:\n%s", diff(timeless(want), timeless(got)))
			}
		})
	}
}

// A server span the sampler drops is not recorded, and its context still
// carries the trace on, not sampled, as the SDK's would.
func TestServerSpanDropped(t *testing.T) {
	tel, capture := tracingOnly(t, env("OTEL_TRACES_SAMPLER", "traceidratio", "OTEL_TRACES_SAMPLER_ARG", "0"))
	parent := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, Remote: true})
	ctx, span := tel.startServerSpan(trace.ContextWithRemoteSpanContext(context.Background(), parent), "GetTask")
	if span != nil {
		t.Fatal("a span was recorded")
	}
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() || sc.IsSampled() || sc.TraceID() != parent.TraceID() || sc.SpanID() == parent.SpanID() {
		t.Errorf("context carries %+v, want a new span of trace %s, not sampled", sc, parent.TraceID())
	}
	if spans := exported(t, tel, capture); len(spans) != 0 {
		t.Errorf("%d spans exported", len(spans))
	}
}

// Spans ended after Shutdown are not exported, nor queued.
func TestServerSpanAfterShutdown(t *testing.T) {
	tel, _ := tracingOnly(t, env())
	_, span := tel.startServerSpan(context.Background(), "GetTask")
	if err := tel.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	span.finish(&result{}, codes.Unset, "")
	tel.batch.mu.Lock()
	defer tel.batch.mu.Unlock()
	if len(tel.batch.queue) != 0 {
		t.Errorf("%d spans queued after shutdown", len(tel.batch.queue))
	}
}

// samplerFromEnv reads what the SDK reads, and refuses what it cannot
// honour.
func TestSamplerFromEnv(t *testing.T) {
	for _, c := range []struct{ sampler, arg, want string }{
		{"", "", "ParentBased{root:AlwaysOnSampler,"},
		{"always_on", "", "AlwaysOnSampler"},
		{"ALWAYS_OFF", "", "AlwaysOffSampler"},
		{"traceidratio", "0.25", "TraceIDRatioBased{0.25}"},
		{"traceidratio", "", "TraceIDRatioBased{1}"},
		{"parentbased_traceidratio", "0.5", "ParentBased{root:TraceIDRatioBased{0.5},"},
		{"parentbased_always_off", "", "ParentBased{root:AlwaysOffSampler,"},
	} {
		s, err := samplerFromEnv(env("OTEL_TRACES_SAMPLER", c.sampler, "OTEL_TRACES_SAMPLER_ARG", c.arg))
		if err != nil || len(s.Description()) < len(c.want) || s.Description()[:len(c.want)] != c.want {
			t.Errorf("%s %s: %v %v, want %s", c.sampler, c.arg, s, err, c.want)
		}
	}
	for _, c := range [][2]string{{"jaeger_remote", ""}, {"traceidratio", "1.5"}, {"parentbased_traceidratio", "half"}, {"traceidratio", "-1"}} {
		if _, err := samplerFromEnv(env("OTEL_TRACES_SAMPLER", c[0], "OTEL_TRACES_SAMPLER_ARG", c[1])); err == nil {
			t.Errorf("%s %s: no error", c[0], c[1])
		}
	}
}

// The ids are random and valid.
func TestNewIDs(t *testing.T) {
	seen := map[trace.SpanID]bool{}
	for range 1000 {
		tid, sid := idSource{}.NewIDs(context.Background())
		if !tid.IsValid() || !sid.IsValid() || seen[sid] {
			t.Fatalf("ids %s %s (seen: %v)", tid, sid, seen[sid])
		}
		seen[sid] = true
	}
}

// Writes from other goroutines racing with the end of the span (an
// execution that outlives its request) are safe: the span is exported
// once, by whichever of Parley and the SDK ends up holding it.
func TestServerSpanConcurrentWrites(t *testing.T) {
	tel, capture := tracingOnly(t, env())
	for round := range 20 {
		_, s := tel.startServerSpan(context.Background(), "SendMessage")
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Go(func() {
				for i := range 20 {
					s.storeEvent("store.Append", keyStoreDuration.Float64(1))
					s.calls.Add(1)
					if g == 0 && i == 10 && round%2 == 0 {
						s.SetAttributes(attribute.Int("agent.step", i))
					}
					s.IsRecording()
				}
			})
		}
		s.finish(&result{binding: "JSONRPC", outcome: outcomeOK}, codes.Unset, "")
		wg.Wait()
	}
	if spans := exported(t, tel, capture); len(spans) != 20 {
		t.Errorf("%d spans exported, want 20", len(spans))
	}
}
