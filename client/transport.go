package client

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"

	"parley.dev/parley/a2a"
)

// Transport speaks one protocol binding to one agent interface. It carries
// the eleven operations and nothing else: the Client adds tenants, retries,
// interface fallback and stream-end checks on top, so a Transport only
// translates between a2a messages and its wire format.
//
// A Transport must be safe for concurrent use. Its errors follow one rule:
// an error the server sent is an *a2a.Error; a failure to reach the server
// or to read its answer is a *TransportError; a canceled context is
// reported as the context's error.
type Transport interface {
	a2a.Service
	// Close releases what the Transport holds (idle connections). Calls
	// after Close may fail.
	Close() error
}

// TransportConfig is what a TransportFactory needs to build a Transport.
// The Client fills it from its Options; a factory must not modify it.
type TransportConfig struct {
	// HTTPClient performs HTTP requests (never nil when the Client builds
	// the config).
	HTTPClient *http.Client
	// Header holds the headers to send on every request: A2A-Version,
	// A2A-Extensions, Authorization and the caller's extra headers. A
	// binding that is not HTTP (gRPC) sends them as metadata.
	Header http.Header
}

// TransportFactory builds Transports for one protocol binding. A new
// binding (gRPC) is added to a Client by listing its factory in
// Options.Transports.
type TransportFactory struct {
	// Binding is the AgentInterface.protocolBinding this factory speaks,
	// e.g. a2a.BindingJSONRPC. It is compared without regard to case.
	Binding string
	// New returns a Transport for the interface. It should not contact the
	// server: connection failures are reported by the calls, so that the
	// Client can fall back to the next interface.
	New func(iface *a2a.AgentInterface, cfg TransportConfig) (Transport, error)
}

// JSONRPC is the factory of the JSON-RPC 2.0 transport.
func JSONRPC() TransportFactory {
	return TransportFactory{Binding: a2a.BindingJSONRPC, New: func(iface *a2a.AgentInterface, cfg TransportConfig) (Transport, error) {
		return NewJSONRPCTransport(iface.GetUrl(), cfg)
	}}
}

// REST is the factory of the HTTP+JSON (REST) transport.
//
// GRPC, in grpc.go, is the factory of the gRPC transport.
func REST() TransportFactory {
	return TransportFactory{Binding: a2a.BindingHTTPJSON, New: func(iface *a2a.AgentInterface, cfg TransportConfig) (Transport, error) {
		return NewRESTTransport(iface.GetUrl(), cfg)
	}}
}

// Phase says how far a call got before a transport failure.
type Phase int

// The phases of a call, in order.
const (
	// PhaseConnect: no connection to the server could be made (connection
	// refused, DNS failure, TLS handshake failure). The request was not
	// sent, so the call can be repeated anywhere.
	PhaseConnect Phase = iota + 1
	// PhaseRequest: the request may have been sent, but no response
	// arrived (the connection was reset or closed first).
	PhaseRequest
	// PhaseResponse: a response arrived that is not an answer of the
	// protocol: an HTTP status without an A2A error body (a proxy's 502,
	// 503 or 504, say), or a body that cannot be decoded.
	PhaseResponse
	// PhaseStream: a stream broke after it started.
	PhaseStream
)

// String implements fmt.Stringer.
func (p Phase) String() string {
	switch p {
	case PhaseConnect:
		return "connect"
	case PhaseRequest:
		return "request"
	case PhaseResponse:
		return "response"
	case PhaseStream:
		return "stream"
	}
	return fmt.Sprintf("Phase(%d)", int(p))
}

// TransportError is a failure to reach the server or to understand its
// answer, as opposed to an error the server sent (an *a2a.Error). It wraps
// the cause: errors.As finds a *net.OpError, an x509 error and so on
// through it.
type TransportError struct {
	// Op is the operation, e.g. "SendMessage", or "Resolve".
	Op string
	// URL is the URL the request went to.
	URL string
	// Phase says how far the call got.
	Phase Phase
	// StatusCode is the HTTP status of a response that carried no protocol
	// answer; 0 when no response arrived.
	StatusCode int
	// GRPCStatus is, on the gRPC binding, the status name the server ended
	// the call with when that status is a transport condition rather than
	// an A2A error: "UNAVAILABLE", "DEADLINE_EXCEEDED" or "CANCELLED".
	GRPCStatus string
	// Err is the cause.
	Err error
}

// Error implements the error interface.
func (e *TransportError) Error() string {
	var b strings.Builder
	b.WriteString("a2a client: ")
	b.WriteString(e.Op)
	if e.URL != "" {
		b.WriteString(" ")
		b.WriteString(e.URL)
	}
	switch e.Phase {
	case PhaseConnect:
		b.WriteString(": cannot connect")
	case PhaseRequest:
		b.WriteString(": no response")
	case PhaseStream:
		b.WriteString(": stream broken")
	}
	if e.StatusCode != 0 {
		fmt.Fprintf(&b, ": HTTP %d", e.StatusCode)
	}
	if e.GRPCStatus != "" {
		b.WriteString(": gRPC status " + e.GRPCStatus)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the cause.
func (e *TransportError) Unwrap() error { return e.Err }

// Temporary reports whether repeating the request may succeed: a failed
// connection, no response, a 502, 503 or 504, or the gRPC status
// UNAVAILABLE. Whether it is also safe to repeat depends on the operation
// (see Options.Retries).
func (e *TransportError) Temporary() bool {
	switch e.Phase {
	case PhaseConnect, PhaseRequest:
		return true
	case PhaseResponse:
		return e.StatusCode == http.StatusBadGateway || e.StatusCode == http.StatusServiceUnavailable ||
			e.StatusCode == http.StatusGatewayTimeout || e.GRPCStatus == "UNAVAILABLE"
	}
	return false
}

// isConnect reports whether err says the request never left: the dial, the
// DNS lookup or the TLS handshake failed.
func isConnect(err error) bool {
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return true
	}
	var op *net.OpError
	if errors.As(err, &op) && (op.Op == "dial" || op.Op == "proxyconnect") {
		return true
	}
	var (
		rh   tls.RecordHeaderError
		cv   *tls.CertificateVerificationError
		ua   x509.UnknownAuthorityError
		hn   x509.HostnameError
		ci   x509.CertificateInvalidError
		alrt tls.AlertError
	)
	if errors.As(err, &rh) || errors.As(err, &cv) || errors.As(err, &ua) || errors.As(err, &hn) ||
		errors.As(err, &ci) || errors.As(err, &alrt) {
		return true
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		return true
	}
	// The TLS handshake's own errors are not typed; net/http reports them
	// prefixed with "tls: " inside a *url.Error.
	return strings.Contains(err.Error(), "tls: ") && strings.Contains(err.Error(), "handshake")
}

// requestFailure turns an error from http.Client.Do into the error a
// Transport reports: the context's error when ctx is done, otherwise a
// *TransportError in the connect or request phase.
func requestFailure(ctx context.Context, op, url string, err error) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	ph := PhaseRequest
	if isConnect(err) {
		ph = PhaseConnect
	}
	return &TransportError{Op: op, URL: url, Phase: ph, Err: err}
}

// readFailure turns an error reading a response body into the error a
// Transport reports.
func readFailure(ctx context.Context, op, url string, ph Phase, err error) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		err = fmt.Errorf("connection closed: %w", err)
	}
	return &TransportError{Op: op, URL: url, Phase: ph, Err: err}
}
