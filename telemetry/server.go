package telemetry

import (
	"context"
	"iter"
	"log/slog"
	"net/http"
	"time"

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
// set when it ends: a2a.binding, a2a.protocol.version (the version the
// core served the call in; absent when it refused the version), a2a.task.id, a2a.context.id (from the
// request or the first answer naming them), a2a.task.state (the last
// state the call saw), a2a.outcome (ok, error or canceled),
// a2a.error.reason, for streams a2a.stream.events, and the tally of the
// store calls made for the operation and its execution,
// parley.store.calls and parley.store.duration_ms; slow or failed store
// calls are also events on it (see Store).
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
	startOpt []trace.SpanStartOption // the span kind
	calls    *callDurations          // the request durations and open streams' attributes (when metering)
}

// observed returns next observed, for a server or a client.
func (t *Telemetry) observed(next a2a.Invoker, binding string, server bool) *observed {
	o := &observed{t: t, next: next, binding: binding, server: server, startOpt: []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient)}}
	if server {
		o.startOpt = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindServer)}
	}
	if t.metering {
		o.calls = t.ins.callsOf(server, binding)
	}
	return o
}

// start starts the span of a call through the tracer, when tracing; the
// span is nil otherwise, and when the sampler drops it (ctx then carries
// the SDK's span that does not record, with the span context the trace
// goes on with). A server's span is an opSpan, which also tallies the
// store calls made for the operation.
func (s *observed) start(ctx context.Context, m *a2a.Method, req proto.Message) (context.Context, trace.Span) {
	if !s.t.tracing {
		return ctx, nil
	}
	ctx, span := s.t.tracer.Start(ctx, m.Name, s.startOpt...)
	if !span.IsRecording() {
		return ctx, nil
	}
	if !s.server {
		return ctx, span
	}
	op := &opSpan{Span: span}
	ctx = trace.ContextWithSpan(ctx, op)
	s.t.noteTaskWrite(ctx, m, req)
	return ctx, op
}

// Call implements a2a.Invoker.
func (s *observed) Call(ctx context.Context, m *a2a.Method, req proto.Message) (proto.Message, error) {
	begin := now()
	ctx, span := s.start(ctx, m, req)
	resp, err := s.next.Call(ctx, m, req)
	var c summary
	c.request(req)
	if err == nil {
		c.response(resp)
	}
	s.finish(ctx, span, m, begin, &c, false, err)
	return resp, err
}

// Stream implements a2a.Invoker: the span and the open-stream count last
// as long as the consumer ranges over the stream.
func (s *observed) Stream(ctx context.Context, m *a2a.Method, req proto.Message) iter.Seq2[a2a.StreamEvent, error] {
	return func(yield func(a2a.StreamEvent, error) bool) {
		begin := now()
		ctx, span := s.start(ctx, m, req)
		if s.t.metering && s.server {
			open := s.calls.open[m]
			s.t.ins.streamsOpen.Add(ctx, 1, open...)
			defer s.t.ins.streamsOpen.Add(context.Background(), -1, open...)
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
		s.finish(ctx, span, m, begin, &c, true, last)
	}
}

// finish ends a call's span, records its duration and, at debug level,
// logs it (with the trace ids, through LogHandler).
func (s *observed) finish(ctx context.Context, span trace.Span, m *a2a.Method, begin time.Duration, c *summary, stream bool, err error) {
	outcome, reason := classify(ctx, err)
	var version string
	if ci := a2a.CallInfoFrom(ctx); s.server && ci != nil {
		version = ci.Served
	}
	if span != nil {
		endSpan(span, &result{binding: s.binding, version: version, summary: *c, stream: stream, outcome: outcome, reason: reason}, err, s.server)
	}
	d := now() - begin
	if s.t.metering {
		s.calls.hist.Record(ctx, d.Seconds(), s.calls.of(m, s.binding, version, outcome, reason)...)
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
