package telemetry

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"parley.dev/parley/taskstore/memstore"
)

func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func TestReadPlan(t *testing.T) {
	cases := []struct {
		name string
		env  func(string) string
		want plan
		err  string
	}{
		{"nothing set exports nothing", env(), plan{tracesProto: "http/protobuf", metricsProto: "http/protobuf"}, ""},
		{"an endpoint turns both on", env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318"),
			plan{traces: true, metrics: true, tracesProto: "http/protobuf", metricsProto: "http/protobuf"}, ""},
		{"a traces endpoint turns traces on", env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://c:4318/v1/traces"),
			plan{traces: true, tracesProto: "http/protobuf", metricsProto: "http/protobuf"}, ""},
		{"none wins over an endpoint", env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c", "OTEL_TRACES_EXPORTER", "none"),
			plan{metrics: true, tracesProto: "http/protobuf", metricsProto: "http/protobuf"}, ""},
		{"exporters named, grpc", env("OTEL_TRACES_EXPORTER", "otlp", "OTEL_METRICS_EXPORTER", "otlp, prometheus", "OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
			plan{traces: true, metrics: true, prometheusEnv: true, tracesProto: "grpc", metricsProto: "grpc"}, ""},
		{"a signal's protocol wins", env("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "http/protobuf"),
			plan{tracesProto: "grpc", metricsProto: "http/protobuf"}, ""},
		{"disabled", env("OTEL_SDK_DISABLED", "true", "OTEL_TRACES_EXPORTER", "otlp"), plan{}, ""},
		{"unknown exporter", env("OTEL_TRACES_EXPORTER", "zipkin"), plan{}, `OTEL_TRACES_EXPORTER="zipkin"`},
		{"unknown protocol", env("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"), plan{}, `OTEL_EXPORTER_OTLP_PROTOCOL="http/json"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := readPlan(c.env)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v, want one naming %s", err, c.err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("readPlan = %+v, %v; want %+v", got, err, c.want)
			}
		})
	}
}

// With nothing configured every hook is off: no middleware, the store and
// the handlers as given, contexts untouched.
func TestOffCostsNothing(t *testing.T) {
	tel, err := New(context.Background(), &Options{Getenv: env()})
	if err != nil {
		t.Fatal(err)
	}
	if tel.Enabled() || tel.ServerMiddleware("JSONRPC") != nil || tel.PushObserver() != nil || tel.PrometheusHandler() != nil {
		t.Fatal("telemetry is on without configuration")
	}
	st := memstore.New()
	if tel.Store(st) != st {
		t.Error("Store wrapped the store")
	}
	var h http.Handler = http.NewServeMux()
	if tel.Handler(h) != h {
		t.Error("Handler wrapped the handler")
	}
	ctx := context.Background()
	if tel.ExecutionContext(ctx, ctx, nil) != ctx {
		t.Error("ExecutionContext changed the context")
	}
	if fs := tel.ClientTransports(); len(fs) != 3 {
		t.Errorf("ClientTransports() = %d factories, want the 3 defaults", len(fs))
	}
	if err := tel.Shutdown(ctx); err != nil {
		t.Error(err)
	}
}

// taskTraces forgets the task written longest ago past its capacity, and
// a task written again takes the newer trace and counts as written then.
func TestTaskTracesBounded(t *testing.T) {
	m := newTaskTraces(2)
	sc := func(b byte) trace.SpanContext {
		return trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{b}, SpanID: trace.SpanID{b}})
	}
	m.put("a", sc(1))
	m.put("b", sc(2))
	m.put("a", sc(3))
	if got, _ := m.get("a"); got.TraceID()[0] != 3 {
		t.Errorf("a's trace = %v, want the newer one", got.TraceID())
	}
	m.put("c", sc(4)) // evicts b, written longest ago
	if _, ok := m.get("b"); ok {
		t.Error("b is still remembered past the capacity")
	}
	for id, want := range map[string]byte{"a": 3, "c": 4} {
		if got, ok := m.get(id); !ok || got.TraceID()[0] != want {
			t.Errorf("%s: %v %v, want trace %d", id, got.TraceID(), ok, want)
		}
	}
	if _, ok := m.get("d"); ok {
		t.Error("d was never written but is remembered")
	}
	// The trace state goes with the trace, and away with it.
	ts, _ := trace.ParseTraceState("vendor=1")
	m.put("a", sc(5).WithTraceState(ts))
	if got, _ := m.get("a"); got.TraceState().String() != "vendor=1" || got.TraceID()[0] != 5 {
		t.Errorf("a: %v %q, want trace 5 with its trace state", got.TraceID(), got.TraceState())
	}
	m.put("a", sc(6))
	if got, _ := m.get("a"); got.TraceState().Len() != 0 {
		t.Errorf("a's trace state %q outlived its trace", got.TraceState())
	}
	// A large table keeps the recent tasks.
	m = newTaskTraces(taskTraceCap)
	for i := range 4 * taskTraceCap {
		m.put(strconv.Itoa(i), sc(byte(i)))
	}
	kept := 0
	for i := 4*taskTraceCap - taskTraceCap/4; i < 4*taskTraceCap; i++ {
		if _, ok := m.get(strconv.Itoa(i)); ok {
			kept++
		}
	}
	if kept < taskTraceCap/4*9/10 {
		t.Errorf("%d of the last %d tasks remembered, capacity %d", kept, taskTraceCap/4, taskTraceCap)
	}
}
