package telemetry_test

import (
	"context"
	"fmt"
	"net/http"

	"parley.dev/parley/a2a"
	"parley.dev/parley/a2ahttp"
	"parley.dev/parley/server"
	"parley.dev/parley/taskstore/memstore"
	"parley.dev/parley/telemetry"
)

// Wiring a server: with the OTEL_* environment unset (as here, where
// Getenv answers nothing) every hook is off and costs nothing; with
// OTEL_EXPORTER_OTLP_ENDPOINT set the same code exports traces and
// metrics, and Prometheus serves the metrics for scraping.
func Example() {
	ctx := context.Background()
	tel, err := telemetry.New(ctx, &telemetry.Options{Prometheus: true, Getenv: func(string) string { return "" }})
	if err != nil {
		panic(err)
	}
	defer tel.Shutdown(ctx)

	card := &a2a.AgentCard{Name: "Greeter", Description: "Greets.", Version: "1.0.0",
		SupportedInterfaces: []*a2a.AgentInterface{{Url: "http://127.0.0.1:8080", ProtocolBinding: a2a.BindingHTTPJSON, ProtocolVersion: a2a.ProtocolVersion}},
		Capabilities:        &a2a.AgentCapabilities{},
		DefaultInputModes:   []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills: []*a2a.AgentSkill{{Id: "greet", Name: "Greet", Description: "Greets.", Tags: []string{"greet"}}},
	}
	agent := server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		return em.Reply(a2a.AgentMessage("hello to you too"))
	})
	store := tel.Store(memstore.New())
	srv, err := server.New(&server.Options{Card: card, Agent: agent, Store: store, ExecutionContext: tel.ExecutionContext})
	if err != nil {
		panic(err)
	}
	defer srv.Close(ctx)
	h, err := a2ahttp.New(srv, &a2ahttp.Options{Card: card, BindingMiddleware: tel.ServerMiddleware})
	if err != nil {
		panic(err)
	}
	var handler http.Handler = tel.Handler(h) // takes traceparent from requests
	_ = handler                               // serve it: http.Serve(ln, handler)

	fmt.Println("tracing:", tel.Tracing(), "metrics:", tel.Metrics(), "scrape endpoint:", tel.PrometheusHandler() != nil)
	// Output: tracing: false metrics: true scrape endpoint: true
}
