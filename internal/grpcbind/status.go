package grpcbind

import (
	"errors"
	"strings"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/protobuf/types/known/durationpb"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/httpx"
)

// This file is the one copy of this binding's error mapping (spec §10.6,
// §5.4): an *a2a.Error as a gRPC status with details, and back.

// Status converts an A2A error to its gRPC form (spec §10.6): the code of
// §5.4 (a2a.Code.GRPCStatus), the error's wire message, a
// google.rpc.ErrorInfo for the A2A errors (reason, domain a2a-protocol.org,
// metadata), a google.rpc.BadRequest listing field violations and, for an
// error that asks the client to wait before a retry (UNAVAILABLE, a rate
// limit: a2a.Error.RetryAfter), a google.rpc.RetryInfo with the wait. (The
// binding also answers an authentication error with the response metadata
// www-authenticate: Bearer realm="a2a", as the HTTP bindings do.)
func Status(e *a2a.Error) *connect.Error {
	code, _ := e.Code.GRPCStatus()
	ce := connect.NewError(connect.Code(code), errors.New(e.WireMessage()))
	if reason, domain, ok := e.Info(); ok {
		info := &errdetails.ErrorInfo{Reason: reason, Domain: domain, Metadata: e.Metadata}
		if d, err := connect.NewErrorDetail(info); err == nil {
			ce.AddDetail(d)
		}
	}
	if len(e.Violations) > 0 {
		br := &errdetails.BadRequest{FieldViolations: make([]*errdetails.BadRequest_FieldViolation, len(e.Violations))}
		for i, v := range e.Violations {
			br.FieldViolations[i] = &errdetails.BadRequest_FieldViolation{Field: v.Field, Description: v.Description}
		}
		if d, err := connect.NewErrorDetail(br); err == nil {
			ce.AddDetail(d)
		}
	}
	if wait, ok := e.RetryAfter(); ok {
		if d, err := connect.NewErrorDetail(&errdetails.RetryInfo{RetryDelay: durationpb.New(wait)}); err == nil {
			ce.AddDetail(d)
		}
	}
	return ce
}

// RetryDelay is the wait a status's google.rpc.RetryInfo asks for, if it
// has one (for a client that reads a status which is no A2A error, such as
// UNAVAILABLE without an ErrorInfo).
func RetryDelay(ce *connect.Error) (time.Duration, bool) {
	for _, d := range ce.Details() {
		if v, err := d.Value(); err == nil {
			if ri, ok := v.(*errdetails.RetryInfo); ok && ri.GetRetryDelay() != nil {
				return max(ri.GetRetryDelay().AsDuration(), 0), true
			}
		}
	}
	return 0, false
}

// statusError converts a status the server sent into an *a2a.Error: the
// code its ErrorInfo reason names, else its gRPC code's by the error table
// (a2a.CodeFromWire); nil for the statuses that are transport conditions
// (UNAVAILABLE, DEADLINE_EXCEEDED, CANCELED) and codes gRPC does not define.
func statusError(ce *connect.Error) *a2a.Error {
	e := &a2a.Error{Message: ce.Message()}
	reason, domain := "", ""
	for _, d := range ce.Details() {
		v, err := d.Value()
		if err != nil {
			continue
		}
		switch m := v.(type) {
		case *errdetails.ErrorInfo:
			// An A2A ErrorInfo wins over one of another domain.
			if reason != "" && domain == a2a.DomainA2A && m.GetDomain() != a2a.DomainA2A {
				continue
			}
			reason, domain = m.GetReason(), m.GetDomain()
			for k, v := range m.GetMetadata() {
				if e.Metadata == nil {
					e.Metadata = map[string]string{}
				}
				e.Metadata[k] = v
			}
		case *errdetails.BadRequest:
			for _, v := range m.GetFieldViolations() {
				e.Violations = append(e.Violations, a2a.FieldViolation{Field: v.GetField(), Description: v.GetDescription()})
			}
		}
	}
	if c, ok := httpx.CodeForReason(reason); ok {
		e.Code = c
		return e
	}
	c, ok := a2a.CodeFromWire(a2a.Wire{GRPC: int(ce.Code())})
	if !ok {
		return nil
	}
	e.Code = c
	if c == a2a.CodeInternal && ce.Code() != connect.CodeInternal {
		e.Metadata = withMeta(e.Metadata, "grpcStatus", grpcCodeName(ce.Code()))
	}
	return e
}

func withMeta(m map[string]string, k, v string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[k] = v
	return m
}

// grpcCodeName is the google.rpc.Code name of c, e.g. "NOT_FOUND".
func grpcCodeName(c connect.Code) string {
	if n := a2a.GRPCCodeName(int(c)); n != "" {
		return n
	}
	return strings.ToUpper(c.String())
}
