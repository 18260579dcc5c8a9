package telemetry_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"parley.dev/parley/telemetry"
)

func TestLogHandlerAddsTraceIDs(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(telemetry.LogHandler(slog.NewTextHandler(&buf, nil))).With("component", "test")
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36},
		SpanID:  trace.SpanID{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7}, TraceFlags: trace.FlagsSampled,
	})
	log.InfoContext(trace.ContextWithSpanContext(context.Background(), sc), "with span")
	log.Info("without span")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("log: %q", buf.String())
	}
	if !strings.Contains(lines[0], "trace_id=4bf92f3577b34da6a3ce929d0e0e4736") || !strings.Contains(lines[0], "span_id=00f067aa0ba902b7") ||
		!strings.Contains(lines[0], "component=test") {
		t.Errorf("with a span: %q", lines[0])
	}
	if strings.Contains(lines[1], "trace_id") {
		t.Errorf("without a span: %q", lines[1])
	}
}
