package acts

import (
	"context"
	"net/http"
	"time"

	"parley.dev/parley/a2a"
)

// Driver performs the requests of one binding on the wire. Requests and
// results are in the JSON model of A2A (ProtoJSON names), whatever the
// binding: the driver encodes and unwraps the transport (ACTS §4.2).
type Driver interface {
	// Binding is jsonrpc, grpc or rest.
	Binding() string
	// Card fetches the public agent card.
	Card(ctx context.Context) *Outcome
	// Call performs a unary operation (a2a.Method name) with a request
	// in the JSON model; the outcome's Body is the A2A response object.
	Call(ctx context.Context, method string, req map[string]any, o CallOptions) *Outcome
	// Stream performs a streaming operation and reads its events as ctl
	// says.
	Stream(ctx context.Context, method string, req map[string]any, o CallOptions, ctl StreamControl) *Outcome
	// Raw sends a raw request (ACTS §4.4) to the interface's URL plus
	// its path; the outcome's Body is the body, decoded when it is JSON.
	// An answer in Server-Sent Events is read as ctl says (a default
	// when nil) into Events, each event's data as it is.
	Raw(ctx context.Context, r RawRequest, body []byte, ctl *StreamControl) *Outcome
	// Parse decodes a canonical wire payload of the operation through
	// Parley's client decoders for the binding (ACTS §10) and returns
	// the A2A object read, in the JSON model.
	Parse(method string, payload []byte) (any, error)
}

// CallOptions vary one call.
type CallOptions struct {
	// Version is the A2A-Version sent (the document's spec_version).
	Version string
}

// StreamControl says how long to read a stream: until the server ends
// it, Stop says so, Max passes, or a second after Settle said it should
// end.
type StreamControl struct {
	Settle func([]Event) bool
	Stop   func([]Event) bool
	Max    time.Duration
}

// Outcome is what a request got.
type Outcome struct {
	Status int
	Header http.Header
	// Body is the success result: the A2A object (abstract operations)
	// or the response body (raw steps; JSON decoded, else a string).
	Body any
	// Err is a protocol error, identified through a2a's error table.
	Err *WireError
	// Events are a stream's events; Closed reports the server ended it.
	Events []Event
	Closed bool
	// Failure is a transport failure or an unreadable response: no
	// protocol answer to grade.
	Failure string
}

// WireError is a protocol error as received.
type WireError struct {
	// Code is the error as a2a.CodeFromWire identified it (Known).
	Code  a2a.Code
	Known bool
	// Wire names the value the binding carried: "-32001", "NOT_FOUND",
	// "HTTP 404".
	Wire    string
	Message string
	Details any
}

// Name is the specification's name of the error, or its wire value when
// the table does not know it.
func (e *WireError) Name() string {
	if e.Known {
		return e.Code.Name()
	}
	return e.Wire
}

// Event is one event of a stream: a StreamResponse in the JSON model, or
// an error the stream carried.
type Event struct {
	Body    map[string]any
	Err     *WireError
	Failure string
}
