// Package telemetry gives a Parley server and client OpenTelemetry traces
// and metrics, configured by the standard OTEL_* environment variables,
// and a Prometheus scrape endpoint. With nothing configured it exports
// nothing and New returns a Telemetry whose hooks are all off: a server
// wired through it costs what one wired without it does.
//
// What it traces: one server span per operation (named by the method,
// lasting as long as its stream), whose parent is the W3C trace context
// of the request (traceparent and tracestate headers, gRPC metadata
// alike), carried in the agent's context so that an agent's own spans
// nest under the request; the task store calls made for the operation,
// tallied on its span (count and time), each slow or failed one also an
// event with its duration; a client span for every push webhook POST,
// which carries traceparent; and, on the client side, a client span per
// call that carries traceparent on every binding.
//
// What it measures: the durations of requests (server and client, by
// binding) and of store calls, open streams, active executions, events
// appended, and push deliveries, failures, retries, suspensions, drops and
// outbox depth, all named parley.*. It reads the SDK's variables
// (OTEL_SDK_DISABLED, OTEL_TRACES_EXPORTER, OTEL_METRICS_EXPORTER,
// OTEL_EXPORTER_OTLP_*, OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG).
//
// Wiring a server (parley serve does this):
//
//	tel, err := telemetry.New(ctx, &telemetry.Options{Prometheus: true})
//	store = tel.Store(store)                                 // store timing on spans, latency
//	srv, _ := server.New(&server.Options{Store: store, ExecutionContext: tel.ExecutionContext, …})
//	h, _ := a2ahttp.New(srv, &a2ahttp.Options{BindingMiddleware: tel.ServerMiddleware, …})
//	http.Serve(ln, tel.Handler(h))                            // trace context from requests
//	defer tel.Shutdown(ctx)                                   // flushes what is left
package telemetry

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/exemplar"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// ScopeName is the instrumentation scope of every span and metric Parley
// makes.
const ScopeName = "parley.dev/parley"

// Options configure New. The zero value of every field means its default.
type Options struct {
	// ServiceName is the service.name resource attribute when neither
	// OTEL_SERVICE_NAME nor OTEL_RESOURCE_ATTRIBUTES sets one (default
	// "parley").
	ServiceName string
	// ServiceVersion is the service.version resource attribute.
	ServiceVersion string
	// Prometheus makes the metrics available to scrape (PrometheusHandler),
	// whatever the environment says.
	Prometheus bool
	// Getenv reads the environment (default os.Getenv); the OTLP
	// exporters read their own variables (endpoints, headers, timeouts,
	// certificates) from the process environment, and so do the SDK's
	// batch span processor (OTEL_BSP_*) and span limits (OTEL_SPAN_*,
	// OTEL_EVENT_*, OTEL_ATTRIBUTE_*).
	Getenv func(string) string
	// Logger receives the exporters' errors (default slog.Default()).
	Logger *slog.Logger
}

// Telemetry holds the tracer and meter providers configured from the
// environment and makes the hooks that feed them. A nil *Telemetry is
// valid and off. Create it with New and stop it with Shutdown.
type Telemetry struct {
	tracing  bool // spans are recorded and exported
	metering bool // metrics are recorded (OTLP, Prometheus or both)
	tracer   trace.Tracer
	tp       trace.TracerProvider // nil when not tracing
	prop     propagation.TextMapPropagator
	ins      *instruments
	prom     http.Handler
	tasks    *taskTraces // the latest trace context of each task, for webhooks
	stops    []func(context.Context) error
	flushes  []func(context.Context) error
	log      *slog.Logger
}

// New configures telemetry from the environment (see the package
// documentation). It fails on a variable it cannot honour (an unknown
// exporter or protocol) rather than exporting nothing in silence.
func New(ctx context.Context, o *Options) (*Telemetry, error) {
	opts := Options{}
	if o != nil {
		opts = *o
	}
	if opts.Getenv == nil {
		opts.Getenv = osGetenv
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	p, err := readPlan(opts.Getenv)
	if err != nil {
		return nil, err
	}
	t := &Telemetry{prop: propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}), log: opts.Logger}
	if !p.traces && !p.metrics && !opts.Prometheus && !p.prometheusEnv {
		return t, nil
	}
	res, err := newResource(ctx, opts)
	if err != nil {
		return nil, err
	}
	if p.traces {
		client := otlptracehttp.NewClient()
		if p.tracesProto == "grpc" {
			client = otlptracegrpc.NewClient()
		}
		if err := t.startTracing(ctx, client, res, opts.Getenv); err != nil {
			return nil, err
		}
	}
	var readers []sdkmetric.Option
	if p.metrics {
		var exp sdkmetric.Exporter
		if p.metricsProto == "grpc" {
			exp, err = otlpmetricgrpc.New(ctx)
		} else {
			exp, err = otlpmetrichttp.New(ctx)
		}
		if err != nil {
			t.Shutdown(ctx)
			return nil, err
		}
		readers = append(readers, sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)))
	}
	if opts.Prometheus || p.prometheusEnv {
		reg := prometheus.NewRegistry()
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
		exp, err := otelprom.New(otelprom.WithRegisterer(reg))
		if err != nil {
			t.Shutdown(ctx)
			return nil, err
		}
		readers = append(readers, sdkmetric.WithReader(exp))
		t.prom = promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	}
	if len(readers) > 0 {
		readers = append(readers, sdkmetric.WithResource(res))
		if opts.Getenv("OTEL_METRICS_EXEMPLAR_FILTER") == "" {
			// Exemplars are off unless asked for: the Prometheus text
			// format does not show them, and picking them costs on every
			// measurement.
			readers = append(readers, sdkmetric.WithExemplarFilter(exemplar.AlwaysOffFilter))
		}
		mp := sdkmetric.NewMeterProvider(readers...)
		t.stops = append(t.stops, mp.Shutdown)
		t.flushes = append(t.flushes, mp.ForceFlush)
		t.ins = newInstruments(mp.Meter(ScopeName))
		t.metering = true
	}
	return t, nil
}

// newResource describes the process: service.name (default "parley")
// and service.version, then what OTEL_SERVICE_NAME and
// OTEL_RESOURCE_ATTRIBUTES say, which wins.
func newResource(ctx context.Context, opts Options) (*resource.Resource, error) {
	name := opts.ServiceName
	if name == "" {
		name = "parley"
	}
	attrs := []resource.Option{resource.WithAttributes(semconv.ServiceName(name))}
	if opts.ServiceVersion != "" {
		attrs = append(attrs, resource.WithAttributes(semconv.ServiceVersion(opts.ServiceVersion)))
	}
	attrs = append(attrs, resource.WithTelemetrySDK(), resource.WithFromEnv())
	return resource.New(ctx, attrs...)
}

// startTracing makes the tracer provider: the SDK's batch span processor
// (configured by OTEL_BSP_*) in front of the SDK's OTLP exporter over
// client (otlptrace.New), and the sampler OTEL_TRACES_SAMPLER names
// (default: parent-based, always on); the SDK reads the span limits
// (OTEL_SPAN_*, OTEL_EVENT_*) itself.
func (t *Telemetry) startTracing(ctx context.Context, client otlptrace.Client, res *resource.Resource, getenv func(string) string) error {
	sampler, err := samplerFromEnv(getenv)
	if err != nil {
		return err
	}
	exp, err := otlptrace.New(ctx, client)
	if err != nil {
		return err
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res), sdktrace.WithSampler(sampler))
	t.tracer, t.tp = tp.Tracer(ScopeName), tp
	t.stops = append(t.stops, tp.Shutdown)
	t.flushes = append(t.flushes, tp.ForceFlush)
	t.tracing = true
	t.tasks = newTaskTraces(taskTraceCap)
	return nil
}

// TracerProvider is the provider Parley's spans come from, for an agent's
// own spans; a no-op provider when not tracing.
func (t *Telemetry) TracerProvider() trace.TracerProvider {
	if !t.Tracing() {
		return noop.NewTracerProvider()
	}
	return t.tp
}

// SetGlobal makes the tracer provider and the W3C propagators the
// process's global ones (otel.SetTracerProvider,
// otel.SetTextMapPropagator), so that libraries that trace with the
// global provider (an agent's HTTP client, its database driver) export
// to the same place, nested under Parley's spans. It does nothing when
// not tracing.
func (t *Telemetry) SetGlobal() {
	if t.Tracing() {
		otel.SetTracerProvider(t.tp)
		otel.SetTextMapPropagator(t.prop)
	}
}

// Tracing reports whether spans are recorded and exported.
func (t *Telemetry) Tracing() bool { return t != nil && t.tracing }

// Metrics reports whether metrics are recorded.
func (t *Telemetry) Metrics() bool { return t != nil && t.metering }

// Enabled reports whether anything is recorded.
func (t *Telemetry) Enabled() bool { return t.Tracing() || t.Metrics() }

// PrometheusHandler serves the metrics in the Prometheus text format; nil
// unless Options.Prometheus (or OTEL_METRICS_EXPORTER=prometheus) asked for
// it.
func (t *Telemetry) PrometheusHandler() http.Handler {
	if t == nil {
		return nil
	}
	return t.prom
}

// Flush exports what the providers hold now (tests, and before a process
// ends abruptly).
func (t *Telemetry) Flush(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return callAll(ctx, t.flushes)
}

// Shutdown flushes and stops the providers; the hooks record nothing
// afterwards.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return callAll(ctx, t.stops)
}

// callAll calls each of fs and joins their errors.
func callAll(ctx context.Context, fs []func(context.Context) error) error {
	var errs []error
	for _, f := range fs {
		errs = append(errs, f(ctx))
	}
	return errors.Join(errs...)
}

// must is a helper for instruments that cannot fail in practice: the
// SDK only reports invalid names, which are constants here.
func must[T any](v T, err error) T {
	if err != nil {
		panic("telemetry: " + err.Error())
	}
	return v
}
