package telemetry

import (
	"context"
	"log/slog"

	"go.opentelemetry.io/otel/trace"
)

// LogHandler returns h with trace_id and span_id added to every record
// logged with a context that carries a span (slog's …Context methods, or
// Logger.LogAttrs): the operation line Parley logs at debug level, agent
// failures, and whatever an agent logs with its context. Records without
// one pass as they are.
func LogHandler(h slog.Handler) slog.Handler { return logHandler{h} }

// logHandler adds trace ids to records.
type logHandler struct{ slog.Handler }

// Handle implements slog.Handler.
func (l logHandler) Handle(ctx context.Context, r slog.Record) error {
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		r.AddAttrs(slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
	}
	return l.Handler.Handle(ctx, r)
}

// WithAttrs implements slog.Handler.
func (l logHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return logHandler{l.Handler.WithAttrs(attrs)}
}

// WithGroup implements slog.Handler.
func (l logHandler) WithGroup(name string) slog.Handler {
	return logHandler{l.Handler.WithGroup(name)}
}
