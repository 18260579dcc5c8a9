package telemetry

import (
	"context"
	"errors"
	"net/http"
	"net/url"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"parley.dev/parley/push"
	"parley.dev/parley/taskstore"
)

// PushObserver returns the observer of push.Options.Observer: a client
// span "push.webhook" for every POST, a child of the operation or
// execution that last wrote to the task (so a webhook joins the caller's
// trace, see taskTraces), and the W3C traceparent on the request. Its
// attributes: the task, the configuration, the event's sequence number,
// the webhook's host (never its path, query or credentials) and
// parley.push.outcome (delivered, retry or dropped). Nil when not
// tracing.
func (t *Telemetry) PushObserver() push.Observer {
	if !t.Tracing() {
		return nil
	}
	return pushObserver{t}
}

// pushObserver traces webhook POSTs.
type pushObserver struct{ t *Telemetry }

// Attempt implements push.Observer.
func (o pushObserver) Attempt(ctx context.Context, n *taskstore.Notification) (context.Context, func(push.AttemptResult)) {
	if sc, ok := o.t.tasks.get(n.Target.TaskID); ok {
		ctx = trace.ContextWithSpanContext(ctx, sc)
	}
	ctx, span := o.t.tracer.Start(ctx, "push.webhook", trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
		keyTaskID.String(n.Target.TaskID), keyPushConfig.String(n.Target.ConfigID), keySeq.Int64(int64(n.Seq))))
	if u, err := url.Parse(n.Config.GetUrl()); err == nil {
		span.SetAttributes(keyServerAddress.String(u.Hostname()), keyURLScheme.String(u.Scheme))
	}
	return ctx, func(r push.AttemptResult) {
		out := "dropped"
		switch {
		case r.Delivered:
			out = "delivered"
		case r.Retry:
			out = "retry"
		}
		span.SetAttributes(keyPushOutcome.String(out))
		if !r.Delivered {
			span.SetStatus(codes.Error, r.Reason)
		}
		span.End()
	}
}

// Header implements push.Observer: only the trace context is sent to a
// webhook, never baggage, which may hold what a caller meant for Parley
// alone.
func (o pushObserver) Header(ctx context.Context, h http.Header) {
	propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(h))
}

// ObservePush reports the sender's counters and the outbox depth as
// metrics, read when they are collected: parley.push.deliveries,
// parley.push.failures, parley.push.retries, parley.push.dropped,
// parley.push.suspensions and, when the store can count its outbox
// (memstore and sqlitestore can), parley.push.outbox.depth. The returned
// function stops reporting them.
func (t *Telemetry) ObservePush(s *push.Sender, st taskstore.Outbox) (stop func(), err error) {
	if !t.Metrics() || s == nil {
		return func() {}, nil
	}
	m := t.ins.meter
	counter := func(name, desc string) metric.Int64ObservableCounter {
		return must(m.Int64ObservableCounter(name, metric.WithUnit("{notification}"), metric.WithDescription(desc)))
	}
	delivered := counter("parley.push.deliveries", "Push notifications a webhook acknowledged with 2xx.")
	failures := counter("parley.push.failures", "Failed webhook POSTs (network errors, timeouts, non-2xx answers, refused addresses).")
	retries := counter("parley.push.retries", "Failed webhook POSTs followed by a backoff and another attempt.")
	dropped := counter("parley.push.dropped", "Push notifications abandoned after an answer that is not retried.")
	suspended := must(m.Int64ObservableCounter("parley.push.suspensions", metric.WithUnit("{config}"),
		metric.WithDescription("Push configurations suspended after too many consecutive failures.")))
	depth := must(m.Int64ObservableGauge("parley.push.outbox.depth", metric.WithUnit("{notification}"),
		metric.WithDescription("Push notifications queued in the store's outbox, not yet delivered.")))
	d, _ := st.(outboxDepther)
	reg, err := m.RegisterCallback(func(ctx context.Context, obs metric.Observer) error {
		stats := s.Stats()
		obs.ObserveInt64(delivered, int64(stats.Delivered))
		obs.ObserveInt64(failures, int64(stats.Failures))
		obs.ObserveInt64(retries, int64(stats.Retries))
		obs.ObserveInt64(dropped, int64(stats.Dropped))
		obs.ObserveInt64(suspended, int64(stats.Suspended))
		if d != nil {
			n, err := d.OutboxDepth(ctx)
			if errors.Is(err, errors.ErrUnsupported) {
				return nil
			}
			if err != nil {
				return err
			}
			obs.ObserveInt64(depth, n)
		}
		return nil
	}, delivered, failures, retries, dropped, suspended, depth)
	if err != nil {
		return nil, err
	}
	return func() { reg.Unregister() }, nil
}
