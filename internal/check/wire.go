package check

import (
	"encoding/json"
	"errors"
	"mime"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
)

// The checker's own wire layer (wire*.go, grpc*.go). It does not use
// package client: a grader must see exactly what a server sends (status,
// headers, error body shapes, SSE framing) and must not be fooled by a
// client's tolerance, retries or fallback. It shares the binding
// packages' encoders where those build the same request a client sends
// (rest.EncodeRequest, sse.Reader).

// target is one interface of the agent card: a binding at a URL.
type target struct {
	binding string // a2a.BindingJSONRPC, a2a.BindingHTTPJSON or a2a.BindingGRPC
	url     string // as the card gives it (gRPC: the base URL grpcBase made of it)
	tenant  string
	iface   *a2a.AgentInterface // the card's entry, as the card gives it
	hc      *http.Client
	header  http.Header // sent on every request (extra headers)
	token   string      // default bearer token ("" = anonymous)
	rpcID   atomic.Int64

	anonOnce sync.Once
	anonHC   *http.Client // hc without a TLS client certificate (client)
}

// callOpts vary one request.
type callOpts struct {
	token       *string // bearer token for this call (nil: the default; "": anonymous)
	version     *string // A2A-Version value (nil: "1.0"; "": no header)
	verb        string  // REST verb override
	query       string  // extra raw query appended to the URL
	contentType string  // request Content-Type override
	rawBody     []byte  // JSON-RPC: send this body instead of an envelope
	// params, when set, are the request's JSON as a test wrote it, members
	// the request message does not know included (ACTS): JSON-RPC sends
	// them as the envelope's params, HTTP+JSON as the body of an operation
	// whose body is the whole request. gRPC sends the message.
	params []byte
	// noExtensions sends no A2A-Extensions header, not even the required
	// extensions every other call activates (activateRequired).
	noExtensions bool
}

// exchange is one HTTP request and what came back.
type exchange struct {
	Method    string
	URL       string
	ReqHeader http.Header
	ReqBody   []byte

	Status  int
	Header  http.Header
	Body    []byte   // unary responses
	Events  []*event // streams
	Closed  bool     // the server ended the stream (EOF; gRPC: the status arrived)
	Err     error    // transport failure (no usable response)
	Elapsed time.Duration

	// gRPC calls.
	IsGRPC    bool
	Streaming bool
	Proto     int         // HTTP major version of the response
	Trailer   http.Header // HTTP trailers
	GRPC      *grpcStatus // the status the call ended with, nil if none arrived
}

// contentType is the response media type without parameters.
func (x *exchange) contentType() string {
	if x == nil || x.Header == nil {
		return ""
	}
	mt, _, _ := mime.ParseMediaType(x.Header.Get("Content-Type"))
	return mt
}

// result is the outcome of one call.
type result struct {
	ex     *exchange
	raw    json.RawMessage // the success result (unary; gRPC: the message rendered as JSON)
	bin    []byte          // gRPC: the success message as received
	err    *wireError      // a protocol error
	idOK   bool            // JSON-RPC: the response id echoes the request id
	rpcID  string          // JSON-RPC: the request id
	broken string          // the response is neither a result nor an error (why)
}

// failed reports a transport failure or an unreadable response: the check
// could not be completed, which is not the server's protocol answer.
func (r *result) failed() bool { return r.ex.Err != nil }

// ok reports a success response.
func (r *result) ok() bool { return r.ex.Err == nil && r.err == nil && r.broken == "" }

// decode unmarshals the success result into m.
func (r *result) decode(m proto.Message) error {
	if r.bin != nil {
		return proto.Unmarshal(r.bin, m)
	}
	if r.raw == nil {
		return errors.New("no result")
	}
	return a2a.Unmarshal(r.raw, m)
}

// outcome describes the outcome for a report.
func (r *result) outcome() string {
	switch {
	case r.ex.Err != nil:
		return "transport failure"
	case r.err != nil:
		return r.err.name()
	case r.broken != "":
		return "unreadable response"
	}
	return "success"
}

// why says what a call that did not succeed got: the error as received,
// or why the response could not be read.
func (r *result) why() string {
	switch {
	case r.ex.Err != nil:
		return "transport failure: " + r.ex.Err.Error()
	case r.err != nil:
		return describeError(r.err)
	case r.broken != "":
		return "an unreadable response: " + r.broken
	}
	return "success"
}

// firstEventError treats an error sent as the first event of a stream as
// the call's error, as a server may refuse a stream that way.
func (r *result) firstEventError() {
	if r.err == nil && len(r.ex.Events) > 0 && r.ex.Events[0].Err != nil {
		r.err = r.ex.Events[0].Err
	}
}
