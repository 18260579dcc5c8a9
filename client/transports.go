package client

import (
	"parley.dev/parley/grpcbind"
	"parley.dev/parley/jsonrpc"
	"parley.dev/parley/rest"
	"parley.dev/parley/transport"
	"parley.dev/parley/v03/v03grpc"
	"parley.dev/parley/v03/v03http"
)

// The transport types, under the names this package has always used. A
// binding's transport lives in the binding's package, beside its server
// half (jsonrpc.Transport, rest.Transport, grpcbind.Transport).
type (
	// Transport speaks one binding to one interface (transport.Transport).
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
)

// The phases of a call (see transport.Phase).
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

// GRPC is the factory of the gRPC transport (see grpcbind.NewTransport for
// how it dials).
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
