package client

import (
	"parley.dev/parley/internal/grpcbind"
	"parley.dev/parley/internal/jsonrpc"
	"parley.dev/parley/internal/rest"
	"parley.dev/parley/internal/transport"
	"parley.dev/parley/internal/v03/v03grpc"
	"parley.dev/parley/internal/v03/v03http"
)

// The transport types: what a binding's client half implements, and what
// its failures look like.
type (
	// Transport speaks one binding to one interface.
	Transport = transport.Transport
	// TransportConfig is what a factory builds a Transport from.
	TransportConfig = transport.Config
	// TransportFactory builds Transports for one binding; list one in
	// Options.Transports to add or restrict bindings.
	TransportFactory = transport.Factory
	// TransportError is a failure to reach the server or to understand
	// its answer, as opposed to an error the server sent (*a2a.Error).
	TransportError = transport.Error
	// Phase says how far a call got before a transport failure.
	Phase = transport.Phase
	// RedirectError is the TransportError cause of an HTTP redirect this
	// client does not follow: its From, To and StatusCode.
	RedirectError = transport.RedirectError
)

// The phases of a call, from the first to the last.
const (
	PhaseConnect  = transport.PhaseConnect
	PhaseRequest  = transport.PhaseRequest
	PhaseResponse = transport.PhaseResponse
	PhaseStream   = transport.PhaseStream
)

// JSONRPC is the factory of the JSON-RPC 2.0 transport.
func JSONRPC() TransportFactory { return jsonrpc.Factory() }

// REST is the factory of the HTTP+JSON (REST) transport.
func REST() TransportFactory { return rest.Factory() }

// GRPC is the factory of the gRPC transport. It dials an "https://" URL
// over TLS, an "http://" one over cleartext HTTP/2, and a bare "host:port"
// (the form a card gives) over TLS when the HTTP client's transport has a
// TLS configuration, over cleartext HTTP/2 otherwise.
func GRPC() TransportFactory { return grpcbind.Factory() }

// DefaultTransports returns the factories of every v1.0 binding this
// package speaks: JSON-RPC, HTTP+JSON and gRPC.
func DefaultTransports() []TransportFactory {
	return []TransportFactory{JSONRPC(), REST(), GRPC()}
}

// V03Transports returns the factories of the A2A v0.3 bindings this package
// speaks: JSON-RPC, HTTP+JSON and gRPC. A Client made without
// Options.Transports uses them beside DefaultTransports, only for an agent
// that offers no v1.0 interface it can use (v1.0 interfaces always come
// first); list them in Options.Transports to keep them there.
func V03Transports() []TransportFactory {
	return []TransportFactory{v03http.JSONRPCFactory(), v03http.RESTFactory(), v03grpc.Factory()}
}

// AllTransports is DefaultTransports followed by V03Transports: what a
// Client uses when Options.Transports is empty.
func AllTransports() []TransportFactory {
	return append(DefaultTransports(), V03Transports()...)
}
