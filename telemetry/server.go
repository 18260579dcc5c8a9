package telemetry

import (
	"context"
	"iter"
	"log/slog"
	"net/http"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
)

// ServerMiddleware returns the middleware of one binding, for
// a2ahttp.Options.BindingMiddleware: a server span per operation and the
// request metrics. It returns nil (no middleware) when nothing is
// recorded.
//
// The span is named by the method (SendMessage), its parent is the trace
// context Handler took from the request, and it lasts until the call
// returns or, for a stream, until the stream ends. Its attributes, all
// set when it ends: a2a.binding, a2a.task.id, a2a.context.id (from the
// request or the first answer naming them), a2a.task.state (the last
// state the call saw), a2a.outcome (ok, error or canceled),
// a2a.error.reason, for streams a2a.stream.events, and the store tally
// (parley.store.calls, parley.store.duration_ms; see Store).
func (t *Telemetry) ServerMiddleware(binding string) a2a.Middleware {
	if !t.Enabled() {
		return nil
	}
	return func(next a2a.Invoker) a2a.Invoker {
		return t.observed(next, binding, true)
	}
}

// observed is an Invoker that traces and measures the calls it passes to
// next: the server middleware of one binding, or a client transport.
type observed struct {
	t        *Telemetry
	next     a2a.Invoker
	binding  string
	server   bool
	startOpt trace.SpanStartOption                    // the span kind
	hist     metric.Float64Histogram                  // the request duration
	ok       map[*a2a.Method]metric.MeasurementOption // the metric attributes of successful calls
}

// observed returns next observed, for a server or a client.
func (t *Telemetry) observed(next a2a.Invoker, binding string, server bool) *observed {
	o := &observed{t: t, next: next, binding: binding, server: server, startOpt: trace.WithSpanKind(trace.SpanKindClient)}
	if server {
		o.startOpt = trace.WithSpanKind(trace.SpanKindServer)
	}
	if t.metering {
		o.hist = t.ins.clientDuration
		if server {
			o.hist = t.ins.serverDuration
		}
		o.ok = make(map[*a2a.Method]metric.MeasurementOption, len(a2a.Methods))
		for i := range a2a.Methods {
			m := &a2a.Methods[i]
			o.ok[m] = metric.WithAttributeSet(attribute.NewSet(keyMethod.String(m.Name), keyBinding.String(binding), keyOutcome.String(outcomeOK)))
		}
	}
	return o
}

// call is one traced call: its span and, on a server, the tally of its
// store calls.
type call struct {
	span  trace.Span
	tally *storeTally
}

// start starts the span of a call, when tracing.
func (s *observed) start(ctx context.Context, m *a2a.Method, req proto.Message) (context.Context, call) {
	if !s.t.tracing {
		return ctx, call{}
	}
	var c call
	ctx, c.span = s.t.tracer.Start(ctx, m.Name, s.startOpt)
	if s.server && c.span.IsRecording() {
		s.t.noteTaskWrite(ctx, m, req)
		ctx, c.tally = withTally(ctx)
	}
	return ctx, c
}

// Call implements a2a.Invoker.
func (s *observed) Call(ctx context.Context, m *a2a.Method, req proto.Message) (proto.Message, error) {
	begin := time.Now()
	ctx, sc := s.start(ctx, m, req)
	resp, err := s.next.Call(ctx, m, req)
	var c summary
	c.request(req)
	if err == nil {
		c.response(resp)
	}
	s.finish(ctx, sc, m, begin, &c, false, err)
	return resp, err
}

// Stream implements a2a.Invoker: the span and the open-stream count last
// as long as the consumer ranges over the stream.
func (s *observed) Stream(ctx context.Context, m *a2a.Method, req proto.Message) iter.Seq2[a2a.StreamEvent, error] {
	return func(yield func(a2a.StreamEvent, error) bool) {
		begin := time.Now()
		ctx, sc := s.start(ctx, m, req)
		var open metric.MeasurementOption
		if s.t.metering && s.server {
			open = metric.WithAttributes(keyMethod.String(m.Name), keyBinding.String(s.binding))
			s.t.ins.streamsOpen.Add(ctx, 1, open)
			defer s.t.ins.streamsOpen.Add(context.Background(), -1, open)
		}
		var c summary
		c.request(req)
		var last error
		for ev, err := range s.next.Stream(ctx, m, req) {
			if err != nil {
				last = err
			} else {
				c.event(ev)
			}
			if !yield(ev, err) {
				if last == nil && ctx.Err() != nil {
					last = ctx.Err() // the caller went away
				}
				break
			}
		}
		s.finish(ctx, sc, m, begin, &c, true, last)
	}
}

// finish ends a call's span, records its duration and, at debug level,
// logs it (with the trace ids, through LogHandler).
func (s *observed) finish(ctx context.Context, sc call, m *a2a.Method, begin time.Time, c *summary, stream bool, err error) {
	outcome, reason := classify(ctx, err)
	if sc.span != nil {
		endSpan(sc.span, s.binding, c, sc.tally, stream, outcome, reason, err, s.server)
	}
	d := time.Since(begin)
	if s.t.metering {
		opt := s.ok[m]
		if outcome != outcomeOK {
			opt = metric.WithAttributes(keyMethod.String(m.Name), keyBinding.String(s.binding), keyOutcome.String(outcome), keyReason.String(reason))
		}
		s.hist.Record(ctx, d.Seconds(), opt)
	}
	if s.server && s.t.log.Enabled(ctx, slog.LevelDebug) {
		s.t.log.LogAttrs(ctx, slog.LevelDebug, "operation", slog.String("method", m.Name), slog.String("binding", s.binding),
			slog.String("outcome", outcome), slog.String("reason", reason), slog.String("task", c.taskID), slog.Duration("duration", d))
	}
}

// Handler returns next with the W3C trace context (traceparent,
// tracestate, baggage) of each request taken into its context, where the
// server spans find their parent; gRPC metadata are HTTP/2 headers, so
// this covers every binding. Requests without a traceparent pass through
// untouched. With tracing off it returns next itself.
func (t *Telemetry) Handler(next http.Handler) http.Handler {
	if !t.Tracing() {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Traceparent") != "" {
			r = r.WithContext(t.prop.Extract(r.Context(), propagation.HeaderCarrier(r.Header)))
		}
		next.ServeHTTP(w, r)
	})
}
