package cli

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"parley.dev/parley/a2ahttp"
	"parley.dev/parley/internal/health"
	"parley.dev/parley/push"
	"parley.dev/parley/server"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/telemetry"
)

// observability is what `parley serve` adds for operators: telemetry from
// the OTEL_* environment, the health probes, and the --metrics-addr
// listener (docs/observability.md).
type observability struct {
	tel      *telemetry.Telemetry
	health   *health.Checker
	metrics  *http.Server // nil without --metrics-addr
	stopPush func()
	log      *slog.Logger
}

// startObservability configures telemetry from the environment (the
// Prometheus exporter with --metrics-addr, served by serveMetrics). It
// returns the logger to use from now on: with tracing on, its records
// carry trace_id and span_id.
func startObservability(ctx context.Context, metricsAddr string, log *slog.Logger) (*observability, *slog.Logger, error) {
	tel, err := telemetry.New(ctx, &telemetry.Options{
		Prometheus: metricsAddr != "", ServiceVersion: readBuildInfo().version, Logger: log,
	})
	if err != nil {
		return nil, nil, usageError{err}
	}
	if tel.Tracing() {
		log = slog.New(telemetry.LogHandler(log.Handler()))
		tel.SetGlobal()
	}
	o := &observability{tel: tel, health: &health.Checker{Logger: log}, stopPush: func() {}, log: log}
	if metricsAddr == "" && tel.PrometheusHandler() != nil {
		log.Warn("OTEL_METRICS_EXPORTER names prometheus, but nothing serves the scrape endpoint: give --metrics-addr HOST:PORT")
	}
	if tel.Tracing() {
		log.Info("tracing on: spans are exported over OTLP (OTEL_* environment)")
	}
	return o, log, nil
}

// serveMetrics listens on --metrics-addr (when given) for Prometheus
// scrapes and the probes, bounded by the connection flags of guard, as
// the other listeners are; close stops it.
func (o *observability) serveMetrics(metricsAddr string, guard *guardFlags) error {
	if metricsAddr == "" {
		return nil
	}
	ln, err := listen("--metrics-addr", metricsAddr)
	if err != nil {
		return err
	}
	ln = guard.listener(ln, true, o.log)
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", o.tel.PrometheusHandler())
	mux.Handle(health.LivePath, o.health)
	mux.Handle(health.ReadyPath, o.health)
	o.metrics = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(o.log.Handler(), slog.LevelWarn)}
	go func() {
		if err := o.metrics.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			o.log.Error("metrics listener stopped", "err", err)
		}
	}()
	o.log.Info("serving metrics and health probes", "addr", ln.Addr().String(), "metrics", "/metrics")
	return nil
}

// store makes the task store the readiness check (the store itself: its
// probes are not traffic to observe) and returns it observed.
func (o *observability) store(st taskstore.Store) taskstore.Store {
	o.health.Ready = health.StoreReady(st)
	return o.tel.Store(st)
}

// pushOptions adds the push observer to the sender's options.
func (o *observability) pushOptions(opts *push.Options) { opts.Observer = o.tel.PushObserver() }

// observePush reports the sender's counters as metrics.
func (o *observability) observePush(p server.Pusher, st taskstore.Outbox) {
	s, ok := p.(*push.Sender)
	if !ok {
		return
	}
	stop, err := o.tel.ObservePush(s, st)
	if err != nil {
		o.log.Warn("push metrics are off", "err", err)
		return
	}
	o.stopPush = stop
}

// wrap puts the trace context extraction in front of a listener's
// handler, and the probes too in front of the main one's
// (a2ahttp.ServeConfig.HTTPMiddleware).
func (o *observability) wrap(next http.Handler, grpcOnly bool) http.Handler {
	if grpcOnly {
		return o.tel.Handler(next)
	}
	return o.health.Wrap(o.tel.Handler(next))
}

// close stops the metrics listener and flushes what telemetry holds,
// within a few seconds.
func (o *observability) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	o.stopPush()
	if o.metrics != nil {
		o.metrics.Shutdown(ctx)
	}
	if err := o.tel.Shutdown(ctx); err != nil {
		o.log.Warn("telemetry: could not flush everything", "err", err)
	}
}

// coreHooks sets the core's telemetry hooks.
func (o *observability) coreHooks(sopts *server.Options) {
	if o == nil || !o.tel.Enabled() {
		return
	}
	sopts.ExecutionContext = o.tel.ExecutionContext
}

// handlerHooks sets the handler's telemetry hooks.
func (o *observability) handlerHooks(hopts *a2ahttp.Options) {
	if o == nil || !o.tel.Enabled() {
		return
	}
	hopts.BindingMiddleware = o.tel.ServerMiddleware
}
