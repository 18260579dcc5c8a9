package telemetry_test

import (
	"context"
	"testing"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
)

// OTEL_EXPORTER_OTLP_PROTOCOL=grpc exports over OTLP/gRPC (the receiver
// decodes the TraceService's Export calls), and OTEL_SERVICE_NAME names
// the service.
func TestExportOverOTLPGRPC(t *testing.T) {
	rcv := startReceiver(t)
	st := newStack(t, map[string]string{
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "",
		"OTEL_EXPORTER_OTLP_ENDPOINT":        rcv.URL, // http:// means without TLS
		"OTEL_EXPORTER_OTLP_PROTOCOL":        "grpc",
		"OTEL_SERVICE_NAME":                  "agent-under-test",
	}, nil)
	c := st.client(t, []client.TransportFactory{client.JSONRPC()}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("hello")}); err != nil {
		t.Fatal(err)
	}
	spans := rcv.wait(t, "SendMessage over gRPC", func(spans []*span) bool {
		return len(find(spans, func(s *span) bool { return s.Name == a2a.MethodSendMessage })) > 0
	})
	if s := find(spans, func(s *span) bool { return s.Name == a2a.MethodSendMessage })[0]; s.Service != "agent-under-test" {
		t.Errorf("service.name = %q, want OTEL_SERVICE_NAME's", s.Service)
	}
	st.rcv.mu.Lock()
	got := len(st.rcv.spans)
	st.rcv.mu.Unlock()
	if got != 0 {
		t.Errorf("%d spans went to the HTTP endpoint that was unset", got)
	}
}
