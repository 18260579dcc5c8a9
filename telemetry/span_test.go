package telemetry

import (
	"context"
	"log/slog"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
	"go.opentelemetry.io/otel/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/memstore"
)

// captureClient is an OTLP client that keeps what it would send, as the
// receiver would decode it.
type captureClient struct {
	mu  sync.Mutex
	got []*coltracepb.ExportTraceServiceRequest
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
	return nil
}

// tracingOnly is a Telemetry that traces (as New makes it, configured by
// getenv), its spans exported to a captureClient.
func tracingOnly(t *testing.T, getenv func(string) string) (*Telemetry, *captureClient) {
	t.Helper()
	capture := &captureClient{}
	tel := &Telemetry{log: slog.New(slog.DiscardHandler)}
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

// A server span the sampler drops is not recorded, and the operation's
// context still carries the trace on, not sampled, as the SDK's spans do.
func TestServerSpanDropped(t *testing.T) {
	tel, capture := tracingOnly(t, env("OTEL_TRACES_SAMPLER", "traceidratio", "OTEL_TRACES_SAMPLER_ARG", "0"))
	parent := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, Remote: true})
	var sc trace.SpanContext
	var recording bool
	core := a2a.InvokerFuncs{CallFunc: func(ctx context.Context, _ *a2a.Method, _ proto.Message) (proto.Message, error) {
		sc, recording = trace.SpanContextFromContext(ctx), trace.SpanFromContext(ctx).IsRecording()
		return &a2a.Task{Id: "t1"}, nil
	}}
	ctx := trace.ContextWithRemoteSpanContext(context.Background(), parent)
	if _, err := tel.ServerMiddleware(a2a.BindingJSONRPC)(core).Call(ctx, a2a.MethodByName(a2a.MethodGetTask), &a2a.GetTaskRequest{Id: "t1"}); err != nil {
		t.Fatal(err)
	}
	if recording || !sc.IsValid() || sc.IsSampled() || sc.TraceID() != parent.TraceID() || sc.SpanID() == parent.SpanID() {
		t.Errorf("context carries %+v (recording %v), want a new span of trace %s, not sampled", sc, recording, parent.TraceID())
	}
	if spans := exported(t, tel, capture); len(spans) != 0 {
		t.Errorf("%d spans exported", len(spans))
	}
}

// Store calls racing with the end of the operation's span (an execution
// that outlives its request), and an agent writing to the span meanwhile,
// are safe: each span is exported once, with the tally it ended with.
func TestServerSpanConcurrentWrites(t *testing.T) {
	tel, capture := tracingOnly(t, env())
	st := tel.Store(memstore.New())
	m := a2a.MethodByName(a2a.MethodSendMessage)
	var wg sync.WaitGroup
	for round := range 20 {
		core := a2a.InvokerFuncs{CallFunc: func(ctx context.Context, _ *a2a.Method, _ proto.Message) (proto.Message, error) {
			st.GetTask(ctx, taskstore.Scope{}, "t1") // before the end: tallied
			for g := range 4 {
				wg.Go(func() {
					for i := range 20 {
						st.GetTask(ctx, taskstore.Scope{}, "t1")
						if g == 0 && i == 10 && round%2 == 0 {
							trace.SpanFromContext(ctx).SetAttributes(attribute.Int("agent.step", i))
						}
						trace.SpanFromContext(ctx).IsRecording()
					}
				})
			}
			return &a2a.SendMessageResponse{}, nil
		}}
		if _, err := tel.ServerMiddleware(a2a.BindingJSONRPC)(core).Call(context.Background(), m, &a2a.SendMessageRequest{}); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	spans := exported(t, tel, capture)
	if len(spans) != 20 {
		t.Fatalf("%d spans exported, want 20", len(spans))
	}
	for _, s := range spans {
		var calls int64 = -1
		for _, kv := range s.GetAttributes() {
			if kv.GetKey() == "parley.store.calls" {
				calls = kv.GetValue().GetIntValue()
			}
		}
		if calls < 1 || calls > 81 {
			t.Errorf("span %s: parley.store.calls = %d, want from 1 to 81", s.GetName(), calls)
		}
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

// The operations that queue push notifications outside an execution
// (CancelTask, CreateTaskPushNotificationConfig) leave their trace for the
// task's webhooks; no other operation does, whatever task it names.
func TestTaskWritesLeaveTheirTrace(t *testing.T) {
	tel, _ := tracingOnly(t, env())
	core := a2a.InvokerFuncs{CallFunc: func(context.Context, *a2a.Method, proto.Message) (proto.Message, error) {
		return &a2a.Task{}, nil
	}}
	observed := tel.ServerMiddleware(a2a.BindingJSONRPC)(core)
	for m := range a2a.Methods() {
		if m.Streaming {
			continue
		}
		task := "task-of-" + m.Name
		req := m.NewRequest()
		// Every member that names a task names this one.
		for _, field := range []string{"id", "task_id"} {
			if fd := req.ProtoReflect().Descriptor().Fields().ByName(protoreflect.Name(field)); fd != nil && fd.Kind() == protoreflect.StringKind {
				req.ProtoReflect().Set(fd, protoreflect.ValueOfString(task))
			}
		}
		if msg, ok := req.(*a2a.SendMessageRequest); ok {
			msg.Message = &a2a.Message{TaskId: task}
		}
		if _, err := observed.Call(context.Background(), m, req); err != nil {
			t.Fatal(err)
		}
		_, remembered := tel.tasks.get(task)
		want := m.Name == a2a.MethodCancelTask || m.Name == a2a.MethodCreateTaskPushNotificationConfig
		if remembered != want {
			t.Errorf("%s: the task's trace remembered %v, want %v", m.Name, remembered, want)
		}
	}
}
