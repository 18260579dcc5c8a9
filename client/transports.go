package client

import (
	"parley.dev/parley/grpcbind"
	"parley.dev/parley/jsonrpc"
	"parley.dev/parley/rest"
	"parley.dev/parley/transport"
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

// DefaultTransports returns the factories of every binding this package
// speaks: JSON-RPC, HTTP+JSON and gRPC at v1.0, and JSON-RPC and HTTP+JSON
// at v0.3 (used only for an agent that offers no v1.0 interface the
// client can use: v1.0 interfaces always come first).
func DefaultTransports() []TransportFactory {
	return []TransportFactory{JSONRPC(), REST(), GRPC(), v03http.JSONRPCFactory(), v03http.RESTFactory()}
}
