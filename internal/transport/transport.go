// Package transport is what every client transport shares, whatever its
// binding: the Transport interface (an a2a.Invoker that can be closed),
// the Config a Factory builds one from, and Error, the failure to reach a
// server or to understand its answer. Package client picks and drives
// transports; the binding packages (jsonrpc, rest, grpcbind) implement
// them.
package transport

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"syscall"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/streamctx"
)

// Transport speaks one protocol binding to one agent interface. It carries
// the operations of the method table and nothing else: the client adds
// tenants, retries, interface fallback and stream-end checks on top, so a
// Transport only translates between a2a messages and its wire format.
//
// A Transport must be safe for concurrent use. Its errors follow one rule:
// an error the server sent is an *a2a.Error; a failure to reach the server
// or to read its answer is an *Error; a canceled context is reported as
// the context's error.
type Transport interface {
	a2a.Invoker
	// Close releases what the Transport holds (idle connections). Calls
	// after Close may fail.
	Close() error
}

// Config is what a Factory needs to build a Transport. The client fills
// it from its options; a factory must not modify it.
type Config struct {
	// HTTPClient performs HTTP requests (never nil when the client builds
	// the config). The requests carry Header, credentials included, so a
	// transport follows no redirect with it unless its CheckRedirect is
	// set (see NoRedirects).
	HTTPClient *http.Client
	// Header holds the headers to send on every request: A2A-Version,
	// A2A-Extensions, Authorization and the caller's extra headers. A
	// binding that is not HTTP (gRPC) sends them as metadata.
	Header http.Header
	// Inject, when set, adds headers for the call's context to each
	// request, after Header: package telemetry sends the W3C trace
	// context (traceparent) this way, as gRPC metadata on that binding.
	Inject func(ctx context.Context, h http.Header)
	// Token, when set, gives the bearer token of each request, asked for
	// anew every time (a retry, a resumed stream), so that a credential
	// that expires during a long session is replaced by its successor:
	// it is sent as "Authorization: Bearer <token>" in place of any
	// Authorization in Header (RFC 6750 §2.1; A2A §7.1).
	Token func(ctx context.Context) (string, error)
}

// Headers are the headers a Transport sends with every request: Fixed
// (from Config.Header, as the binding may send them) and, for each call,
// what Inject adds for the call's context, and the bearer token Token
// gives. Every Transport sets a request's headers with Apply, so none of
// them drops Inject or sends a stale token.
type Headers struct {
	Fixed  http.Header
	Inject func(ctx context.Context, h http.Header)
	Token  func(ctx context.Context) (string, error)
}

// Headers returns the config's Headers, Fixed a copy of Header.
func (c Config) Headers() Headers {
	return Headers{Fixed: c.Header.Clone(), Inject: c.Inject, Token: c.Token}
}

// Apply sets the headers of one request in h: Fixed's, the bearer token
// Token gives, the A2A-Version the call's context asks for
// (streamctx.WithVersion), then Inject's for ctx. h does not share value
// slices with Fixed, so that adding to it leaves Fixed alone. It fails
// only when Token does: the request must then not be sent (a
// *TokenError).
func (hs Headers) Apply(ctx context.Context, h http.Header) error {
	for k, v := range hs.Fixed {
		h[k] = slices.Clip(v)
	}
	if hs.Token != nil {
		tok, err := hs.Token(ctx)
		if err != nil {
			return &TokenError{Err: err}
		}
		h.Set("Authorization", "Bearer "+tok)
	}
	if v := streamctx.Version(ctx); v != "" {
		h.Set("A2A-Version", v)
	}
	if hs.Inject != nil {
		hs.Inject(ctx, h)
	}
	return nil
}

// TokenError is the failure of Config.Token to give a bearer token: the
// call was not sent. It is neither an error of the server nor a failure
// to reach it, so the client neither retries it nor moves to another
// interface.
type TokenError struct{ Err error }

func (e *TokenError) Error() string { return "a2a client: no bearer token: " + e.Err.Error() }

// Unwrap returns the token source's error.
func (e *TokenError) Unwrap() error { return e.Err }

// Factory builds Transports for one protocol binding.
type Factory struct {
	// Binding is the AgentInterface.protocolBinding this factory speaks,
	// e.g. a2a.BindingJSONRPC. It is compared without regard to case.
	Binding string
	// Version is the protocol version (Major.Minor) of the interfaces
	// this factory speaks: "" for v1.x, "0.3" for A2A v0.3.
	Version string
	// New returns a Transport for the interface. It should not contact the
	// server: connection failures are reported by the calls, so that the
	// client can fall back to the next interface.
	New func(iface *a2a.AgentInterface, cfg Config) (Transport, error)
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

// Error is a failure to reach the server or to understand its
// answer, as opposed to an error the server sent (an *a2a.Error). It wraps
// the cause: errors.As finds a *net.OpError, an x509 error and so on
// through it.
type Error struct {
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
	// RetryAfter is the wait the response asked for before a retry (its
	// Retry-After header, in seconds, or a gRPC status's
	// google.rpc.RetryInfo); 0 when it asked for none.
	RetryAfter time.Duration
	// Err is the cause.
	Err error
}

// Error implements the error interface.
func (e *Error) Error() string {
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
	if cause := e.cause(); cause != nil {
		b.WriteString(": ")
		b.WriteString(cause.Error())
	}
	return b.String()
}

// cause is the error Error prints after the call's own description: Err,
// without net/http's *url.Error layer when that only repeats the method
// and the URL already named.
func (e *Error) cause() error {
	if ue, ok := e.Err.(*url.Error); ok && ue.Err != nil && strings.TrimSuffix(ue.URL, "/") == strings.TrimSuffix(e.URL, "/") {
		return ue.Err
	}
	return e.Err
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Temporary reports whether repeating the request may succeed: a failed
// connection, no response, a 502, 503 or 504, or the gRPC status
// UNAVAILABLE. Whether it is also safe to repeat depends on the operation
// (see Options.Retries).
func (e *Error) Temporary() bool {
	switch e.Phase {
	case PhaseConnect, PhaseRequest:
		return true
	case PhaseResponse:
		return e.StatusCode == http.StatusBadGateway || e.StatusCode == http.StatusServiceUnavailable ||
			e.StatusCode == http.StatusGatewayTimeout || e.GRPCStatus == "UNAVAILABLE"
	}
	return false
}

// IsConnect reports whether err says the request never left: the dial, the
// DNS lookup or the TLS handshake failed.
func IsConnect(err error) bool {
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

// RequestFailure turns an error from sending a request into the error a
// Transport reports: the context's error when ctx is done, otherwise an
// *Error in the connect or request phase.
func RequestFailure(ctx context.Context, op, url string, err error) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	var re *RedirectError
	if errors.As(err, &re) {
		// A response came: a redirect, refused (see RefuseRedirect).
		return &Error{Op: op, URL: url, Phase: PhaseResponse, StatusCode: re.StatusCode, Err: re}
	}
	ph := PhaseRequest
	if IsConnect(err) {
		ph = PhaseConnect
	}
	return &Error{Op: op, URL: url, Phase: ph, Err: err}
}

// ReadFailure turns an error reading a response into the error a
// Transport reports.
func ReadFailure(ctx context.Context, op, url string, ph Phase, err error) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		err = fmt.Errorf("connection closed: %w", err)
	}
	return &Error{Op: op, URL: url, Phase: ph, Err: err}
}
