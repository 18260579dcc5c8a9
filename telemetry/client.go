package telemetry

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/propagation"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
	"parley.dev/parley/internal/transport"
)

// ClientTransports returns the transport factories (default: every
// binding, client.DefaultTransports) observed, for client.Options.Transports:
// every request the client sends, each retry included, gets a client span
// named by the method, with the attributes of the server spans
// (a2a.binding is the interface the client chose), and carries the W3C
// trace context of that span — traceparent and tracestate headers on
// JSON-RPC and HTTP+JSON, the same as gRPC metadata — so the server's
// span joins the caller's trace. Durations go to
// parley.client.request.duration. With nothing recorded the factories
// are returned as they are.
func (t *Telemetry) ClientTransports(fs ...client.TransportFactory) []client.TransportFactory {
	if len(fs) == 0 {
		fs = client.DefaultTransports()
	}
	if !t.Enabled() {
		return fs
	}
	out := make([]client.TransportFactory, len(fs))
	for i, f := range fs {
		out[i] = transport.Factory{Binding: f.Binding, New: func(iface *a2a.AgentInterface, cfg transport.Config) (transport.Transport, error) {
			if t.tracing {
				cfg.Inject = t.inject(cfg.Inject)
			}
			tr, err := f.New(iface, cfg)
			if err != nil {
				return nil, err
			}
			return clientTransport{t.observed(tr, iface.GetProtocolBinding(), false), tr}, nil
		}}
	}
	return out
}

// inject returns the Inject hook of a transport: the trace context of
// the call's span, after what the configuration already injects.
func (t *Telemetry) inject(before func(context.Context, http.Header)) func(context.Context, http.Header) {
	return func(ctx context.Context, h http.Header) {
		if before != nil {
			before(ctx, h)
		}
		t.prop.Inject(ctx, propagation.HeaderCarrier(h))
	}
}

// clientTransport is an observed transport: calls go through the
// observed invoker, Close to the transport.
type clientTransport struct {
	*observed
	tr transport.Transport
}

// Close implements transport.Transport.
func (c clientTransport) Close() error { return c.tr.Close() }
