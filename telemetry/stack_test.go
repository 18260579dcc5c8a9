package telemetry_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"testing"

	"parley.dev/parley/a2a"
	"parley.dev/parley/a2ahttp"
	"parley.dev/parley/client"
	"parley.dev/parley/internal/testkit"
	"parley.dev/parley/server"
	"parley.dev/parley/telemetry"
)

// stack is a Parley server on a loopback port wired to telemetry as
// `parley serve` wires it, exporting spans over OTLP/HTTP to a receiver in
// the test, with the Prometheus reader on.
type stack struct {
	tel *telemetry.Telemetry
	srv *testkit.Server
	rcv *receiver
}

// newStack starts the receiver, telemetry and the server; env adds OTEL_*
// variables, mutate adjusts the core's options after telemetry's hooks
// are set.
func newStack(t testing.TB, env map[string]string, mutate func(tel *telemetry.Telemetry, o *server.Options)) *stack {
	t.Helper()
	rcv := startReceiver(t)
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", rcv.URL+"/v1/traces")
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "20") // milliseconds: spans reach the receiver quickly
	for k, v := range env {
		t.Setenv(k, v)
	}
	tel, err := telemetry.New(context.Background(), &telemetry.Options{Prometheus: true, Logger: testkit.DiscardLogger})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tel.Shutdown(context.Background()) })
	if (!tel.Tracing() && env["OTEL_TRACES_EXPORTER"] != "none") || !tel.Metrics() {
		t.Fatalf("tracing %v, metrics %v: want both on", tel.Tracing(), tel.Metrics())
	}
	srv := testkit.StartServer(t, &testkit.Options{
		Quiet: true,
		Mutate: func(_ *a2a.AgentCard, o *server.Options) {
			o.Store = tel.Store(o.Store)
			o.ExecutionContext = tel.ExecutionContext
			if mutate != nil {
				mutate(tel, o)
			}
		},
		HTTP: func(o *a2ahttp.Options) { o.BindingMiddleware = tel.ServerMiddleware },
		Wrap: tel.Handler,
	})
	return &stack{tel: tel, srv: srv, rcv: rcv}
}

// bindings are the three bindings and their client transports.
var bindings = []struct {
	name    string
	factory func() client.TransportFactory
}{
	{a2a.BindingJSONRPC, client.JSONRPC},
	{a2a.BindingHTTPJSON, client.REST},
	{a2a.BindingGRPC, client.GRPC},
}

// client returns a client of the stack's server restricted to one
// binding's transports, sending header with every call.
func (s *stack) client(t testing.TB, transports []client.TransportFactory, header http.Header) *client.Client {
	t.Helper()
	c, err := client.New(s.srv.Card, &client.Options{Transports: transports, Header: header, Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// traceparent returns a fresh W3C traceparent (sampled) and its trace and
// parent span ids.
func traceparent() (header, traceID, parentID string) {
	b := make([]byte, 24)
	rand.Read(b)
	traceID, parentID = hex.EncodeToString(b[:16]), hex.EncodeToString(b[16:])
	return "00-" + traceID + "-" + parentID + "-01", traceID, parentID
}
