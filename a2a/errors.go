package a2a

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Code identifies an error kind. It is a closed set: the nine A2A errors
// (spec §3.3.2), the standard JSON-RPC errors the spec references (§9.5), and
// two transport-level kinds Parley needs (authentication, oversized
// requests). Its numeric value is the JSON-RPC error code, except for
// CodeRequestTooLarge (see there).
type Code int

// The error codes. The A2A codes are fixed by spec §5.4; the JSON-RPC codes
// by §9.5.
const (
	CodeTaskNotFound                   Code = -32001
	CodeTaskNotCancelable              Code = -32002
	CodePushNotificationNotSupported   Code = -32003
	CodeUnsupportedOperation           Code = -32004
	CodeContentTypeNotSupported        Code = -32005
	CodeInvalidAgentResponse           Code = -32006
	CodeExtendedAgentCardNotConfigured Code = -32007
	CodeExtensionSupportRequired       Code = -32008
	CodeVersionNotSupported            Code = -32009

	CodeParseError     Code = -32700
	CodeInvalidRequest Code = -32600
	CodeMethodNotFound Code = -32601
	CodeInvalidParams  Code = -32602
	CodeInternal       Code = -32603

	// CodeUnauthenticated is a caller without valid credentials. The spec
	// assigns it no JSON-RPC code (spec §3.3.2, "JSON-RPC custom error");
	// Parley uses -32000, the first server-defined code outside the band
	// -32001..-32099 that §7.1 reserves for A2A.
	CodeUnauthenticated Code = -32000
	// CodeRequestTooLarge is a request body over the server's limit. On
	// JSON-RPC it is reported as an invalid request (-32600).
	CodeRequestTooLarge Code = -32600 - 1000
	// CodeRateLimited is a caller over its request rate or its open
	// streams (per principal). The spec files rate limiting under system
	// errors (§3.3.2: JSON-RPC -32603, HTTP 5xx or a Retry-After): Parley
	// answers HTTP 429 Too Many Requests on both HTTP bindings (JSON-RPC's
	// body carries -32603) and RESOURCE_EXHAUSTED on gRPC.
	CodeRateLimited Code = -32603 - 1000
)

// The error table: each error with its JSON-RPC code (spec §9.5), HTTP
// status (§11.6), gRPC code (§10.6) and google.rpc.ErrorInfo reason, the
// mapping of spec §5.4. It is the only copy: every binding's server encodes
// an error by its row and every client decodes one with CodeFromWire, which
// reads the same rows backwards, so the two cannot disagree.
//
// A2A v0.3 uses the same columns: it numbers -32001…-32007 as v1.0 does
// (ExtendedAgentCardNotConfigured was v0.3's
// AuthenticatedExtendedCardNotConfigured); v1.0's -32008 and -32009 keep
// their numbers on v0.3, which had no such errors; and its HTTP+JSON and
// gRPC bindings use the v1.0 statuses (package v03).
//
// Several rows share a JSON-RPC code, an HTTP status or a gRPC code. For
// each value the table marks the row it means alone (the def column): the
// only row with it, or the default among those sharing it. The A2A errors
// and rate limits carry their reason (Error.Info), which decides. The
// other errors carry one only with metadata (the spec defines none, and
// the gRPC library or an HTTP server in front answers some of them), so
// without it, where their value is shared, they read as its default: JSONParseError and InvalidRequestError
// as InvalidParamsError on HTTP+JSON and gRPC, RequestTooLargeError as
// InvalidRequestError on JSON-RPC. MethodNotFoundError shares HTTP 404
// with TaskNotFoundError; the HTTP+JSON body's status name (UNIMPLEMENTED,
// the gRPC column) tells it apart.
type codeInfo struct {
	code    Code
	name    string // spec name, e.g. TaskNotFoundError
	reason  string // ErrorInfo reason: the spec's for A2A errors, Parley's for the others
	message string // default message
	rpc     int    // JSON-RPC code
	http    int    // HTTP status
	grpc    int    // google.rpc.Code number
	def     wire   // the values of this row it is the default of
}

// wire is a set of the kinds of value a row has on the wire.
type wire uint8

const (
	onRPC wire = 1 << iota
	onHTTP
	onGRPC
	onAll = onRPC | onHTTP | onGRPC
)

// The google.rpc.Code numbers the table uses.
const (
	grpcInvalidArgument    = 3
	grpcNotFound           = 5
	grpcResourceExhausted  = 8
	grpcFailedPrecondition = 9
	grpcUnimplemented      = 12
	grpcInternal           = 13
	grpcUnauthenticated    = 16
)

// codeTable is ordered and searched linearly: a mapping is deterministic and
// never depends on map iteration order. The reasons of the errors that are
// not A2A errors follow the spec's rule for A2A ones (the name in
// UPPER_SNAKE_CASE without "Error", §10.6) and travel in DomainParley.
var codeTable = [...]codeInfo{
	{CodeTaskNotFound, "TaskNotFoundError", "TASK_NOT_FOUND", "task not found", -32001, 404, grpcNotFound, onAll},
	{CodeTaskNotCancelable, "TaskNotCancelableError", "TASK_NOT_CANCELABLE", "task cannot be canceled", -32002, 400, grpcFailedPrecondition, onRPC},
	{CodePushNotificationNotSupported, "PushNotificationNotSupportedError", "PUSH_NOTIFICATION_NOT_SUPPORTED", "push notifications are not supported", -32003, 400, grpcFailedPrecondition, onRPC},
	{CodeUnsupportedOperation, "UnsupportedOperationError", "UNSUPPORTED_OPERATION", "operation not supported", -32004, 400, grpcFailedPrecondition, onRPC | onGRPC},
	{CodeContentTypeNotSupported, "ContentTypeNotSupportedError", "CONTENT_TYPE_NOT_SUPPORTED", "content type not supported", -32005, 400, grpcInvalidArgument, onRPC},
	{CodeInvalidAgentResponse, "InvalidAgentResponseError", "INVALID_AGENT_RESPONSE", "invalid agent response", -32006, 500, grpcInternal, onRPC},
	{CodeExtendedAgentCardNotConfigured, "ExtendedAgentCardNotConfiguredError", "EXTENDED_AGENT_CARD_NOT_CONFIGURED", "extended agent card not configured", -32007, 400, grpcFailedPrecondition, onRPC},
	{CodeExtensionSupportRequired, "ExtensionSupportRequiredError", "EXTENSION_SUPPORT_REQUIRED", "a required extension was not activated", -32008, 400, grpcFailedPrecondition, onRPC},
	{CodeVersionNotSupported, "VersionNotSupportedError", "VERSION_NOT_SUPPORTED", "protocol version not supported", -32009, 400, grpcFailedPrecondition, onRPC},
	{CodeParseError, "JSONParseError", "JSON_PARSE", "invalid JSON payload", -32700, 400, grpcInvalidArgument, onRPC},
	{CodeInvalidRequest, "InvalidRequestError", "INVALID_REQUEST", "request payload validation error", -32600, 400, grpcInvalidArgument, onRPC},
	{CodeMethodNotFound, "MethodNotFoundError", "METHOD_NOT_FOUND", "method not found", -32601, 404, grpcUnimplemented, onRPC | onGRPC},
	{CodeInvalidParams, "InvalidParamsError", "INVALID_PARAMS", "invalid parameters", -32602, 400, grpcInvalidArgument, onAll},
	{CodeInternal, "InternalError", "INTERNAL", "internal error", -32603, 500, grpcInternal, onAll},
	{CodeUnauthenticated, "UnauthenticatedError", "UNAUTHENTICATED", "authentication required", -32000, 401, grpcUnauthenticated, onAll},
	// On gRPC an oversized request is often refused by the gRPC library
	// before Parley sees it, without an ErrorInfo: RESOURCE_EXHAUSTED alone
	// means RequestTooLarge.
	{CodeRequestTooLarge, "RequestTooLargeError", "REQUEST_TOO_LARGE", "request too large", -32600, 413, grpcResourceExhausted, onHTTP | onGRPC},
	{CodeRateLimited, "RateLimitedError", "RATE_LIMITED", "too many requests", -32603, 429, grpcResourceExhausted, onHTTP},
}

// Values peers send that no row has, read as one row's (never sent by
// Parley, so outside the table's round trip): the official Go SDK's
// authentication reason UNAUTHORIZED; HTTP 403, 405, 422 and 501; and the
// gRPC codes PERMISSION_DENIED, OUT_OF_RANGE, UNKNOWN, ALREADY_EXISTS,
// ABORTED and DATA_LOSS. Any other 4xx status is InvalidRequest, any other
// 5xx InternalError, except the transport conditions (transportHTTP,
// transportGRPC), which are no A2A error at all.
var (
	aliasReasons = map[string]Code{"UNAUTHORIZED": CodeUnauthenticated}
	aliasHTTP    = map[int]Code{403: CodeUnauthenticated, 405: CodeMethodNotFound, 422: CodeInvalidParams, 501: CodeUnsupportedOperation}
	aliasGRPC    = map[int]Code{7: CodeUnauthenticated, 11: CodeInvalidParams, 2: CodeInternal, 6: CodeInternal, 10: CodeInternal, 15: CodeInternal}
)

// The statuses that say the server (or a proxy) could not answer rather
// than what was wrong with the call: HTTP 502, 503 and 504, gRPC CANCELLED,
// DEADLINE_EXCEEDED and UNAVAILABLE.
var (
	transportHTTP = []int{502, 503, 504}
	transportGRPC = []int{1, 4, 14}
)

// unknownCodeFallback is the code whose row describes a Code missing from
// codeTable: such a code is named, mapped and described as an internal
// error.
const unknownCodeFallback = CodeInternal

// lookup returns c's row of codeTable, or the row of unknownCodeFallback
// when c has none.
func lookup(c Code) *codeInfo {
	if row, ok := codeRow(c); ok {
		return row
	}
	row, _ := codeRow(unknownCodeFallback)
	return row
}

// codeRow returns c's row of codeTable.
func codeRow(c Code) (*codeInfo, bool) {
	i := slices.IndexFunc(codeTable[:], func(row codeInfo) bool { return row.code == c })
	if i < 0 {
		return nil, false
	}
	return &codeTable[i], true
}

// value is a row's value of one kind.
func (r *codeInfo) value(k wire) int {
	switch k {
	case onRPC:
		return r.rpc
	case onHTTP:
		return r.http
	}
	return r.grpc
}

// rows returns the codes of the rows whose value of kind k is v, the
// row marked as its default first, then in table order.
func rows(k wire, v int) []Code {
	var out []Code
	for i := range codeTable {
		r := &codeTable[i]
		if r.value(k) != v {
			continue
		}
		if r.def&k != 0 {
			out = slices.Insert(out, 0, r.code)
		} else {
			out = append(out, r.code)
		}
	}
	return out
}

// Name is the spec's name for the error, e.g. "TaskNotFoundError".
func (c Code) Name() string { return lookup(c).name }

// Reason is the google.rpc.ErrorInfo reason of an A2A error (the name in
// UPPER_SNAKE_CASE without "Error", spec §10.6, §11.6), or "" for other
// errors (whose reason, in DomainParley, Error.Info gives).
func (c Code) Reason() string {
	if !c.IsA2A() {
		return ""
	}
	return lookup(c).reason
}

// HTTPStatus is the HTTP status of the error on the HTTP+JSON binding.
func (c Code) HTTPStatus() int { return lookup(c).http }

// GRPCStatus returns the google.rpc.Code number and name of the error.
func (c Code) GRPCStatus() (int, string) {
	n := lookup(c).grpc
	return n, GRPCCodeName(n)
}

// JSONRPC is the code sent in a JSON-RPC error object.
func (c Code) JSONRPC() int { return lookup(c).rpc }

// IsA2A reports whether the code is one of the nine A2A-specific errors.
func (c Code) IsA2A() bool { return c <= CodeTaskNotFound && c >= CodeVersionNotSupported }

// CodeForReason maps an ErrorInfo reason, spelled exactly, back to its code,
// for clients: a reason of the table, or UNAUTHORIZED (an authentication
// error of the official Go SDK).
func CodeForReason(reason string) (Code, bool) {
	if reason == "" {
		return 0, false
	}
	for _, i := range codeTable {
		if i.reason == reason {
			return i.code, true
		}
	}
	c, ok := aliasReasons[reason]
	return c, ok
}

// CodeForJSONRPC maps a JSON-RPC error code to a Code, for clients: the
// default row of the code (-32600 is InvalidRequest, -32603 InternalError).
func CodeForJSONRPC(n int) (Code, bool) { return CodeFromWire(Wire{JSONRPC: n}) }

// Wire is what a client read off the wire about an error; a zero field was
// not there.
type Wire struct {
	// Reason is the ErrorInfo reason (any domain), or the reason a
	// binding's error body names otherwise.
	Reason string
	// JSONRPC is the JSON-RPC error code.
	JSONRPC int
	// HTTP is the HTTP status of an error response (not 2xx).
	HTTP int
	// GRPC is the google.rpc.Code number (never 0, OK).
	GRPC int
}

// CodeFromWire is the code of an error as a client read it: the one its
// reason names; otherwise the one row all its values share; otherwise the
// default row of the first value present (JSON-RPC code, then gRPC code,
// then HTTP status); otherwise the alias of a foreign value (see
// aliasHTTP). ok is false when nothing names an error, or when the status
// is a transport condition (HTTP 502, 503, 504, gRPC CANCELLED,
// DEADLINE_EXCEEDED, UNAVAILABLE) rather than an answer.
func CodeFromWire(w Wire) (Code, bool) {
	if c, ok := CodeForReason(w.Reason); ok {
		return c, true
	}
	if slices.Contains(transportGRPC, w.GRPC) || slices.Contains(transportHTTP, w.HTTP) {
		return 0, false
	}
	var cands []Code
	narrow := func(k wire, v int) {
		if v == 0 {
			return
		}
		s := rows(k, v)
		if len(s) == 0 {
			s = alias(k, v)
		}
		if len(s) == 0 {
			return
		}
		if cands == nil {
			cands = s
			return
		}
		both := slices.DeleteFunc(slices.Clone(cands), func(c Code) bool { return !slices.Contains(s, c) })
		if len(both) > 0 {
			cands = both
		}
	}
	narrow(onRPC, w.JSONRPC)
	narrow(onGRPC, w.GRPC)
	narrow(onHTTP, w.HTTP)
	if len(cands) == 0 {
		return 0, false
	}
	return cands[0], true
}

// alias is the row a foreign value of kind k stands for, if any.
func alias(k wire, v int) []Code {
	switch k {
	case onHTTP:
		if c, ok := aliasHTTP[v]; ok {
			return []Code{c}
		}
		switch {
		case v >= 400 && v < 500:
			return []Code{CodeInvalidRequest}
		case v >= 500 && v < 600:
			return []Code{CodeInternal}
		}
	case onGRPC:
		if c, ok := aliasGRPC[v]; ok {
			return []Code{c}
		}
	}
	return nil
}

// grpcCodeNames are the google.rpc.Code names, by number.
var grpcCodeNames = [...]string{"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
	"ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
	"UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"}

// GRPCCodeName is the google.rpc.Code name of a code number, e.g.
// "NOT_FOUND" for 5; "" for a number it does not define.
func GRPCCodeName(n int) string {
	if n >= 0 && n < len(grpcCodeNames) {
		return grpcCodeNames[n]
	}
	return ""
}

// GRPCCodeNumber is the google.rpc.Code number of a code name, as the
// HTTP+JSON binding's error body names it (its "status").
func GRPCCodeNumber(name string) (int, bool) {
	i := slices.Index(grpcCodeNames[:], name)
	return i, i >= 0
}

// DomainA2A is the ErrorInfo domain of every A2A error (spec §10.6, §11.6).
const DomainA2A = "a2a-protocol.org"

// DomainParley is the ErrorInfo domain Parley uses for an error that is not
// an A2A error (a JSON-RPC standard one, such as InternalError) but carries
// metadata a client needs, such as the lastEventId of a stream cut off for
// reading too slowly. The spec defines ErrorInfo for A2A errors only; it is
// silent on metadata of the others, so Parley sends them in its own domain.
const DomainParley = "parley.dev"

// Info returns the reason and domain of the google.rpc.ErrorInfo that
// carries the error on the wire: for an A2A error its reason in DomainA2A
// (spec §10.6, §11.6); for another error its table reason in DomainParley
// when it is a rate limit (whose JSON-RPC code and gRPC code are other
// errors' defaults) or has metadata. ok is false when the error has no
// ErrorInfo: the other errors are known by their code and status alone, as
// when the gRPC library or an HTTP server in front answers them (see
// codeTable for what each then stands for).
func (e *Error) Info() (reason, domain string, ok bool) {
	row := lookup(e.Code)
	switch {
	case e.Code.IsA2A():
		return row.reason, DomainA2A, true
	case e.Code == CodeRateLimited || len(e.Metadata) > 0:
		return row.reason, DomainParley, true
	}
	return "", "", false
}

// Error is an A2A or JSON-RPC error. Its Message, Metadata and Violations
// cross the wire; the wrapped cause does not (it is for logs only).
//
// errors.Is(err, ErrTaskNotFound) matches any *Error with the same Code, so
// it keeps working after the error went over the wire and back.
type Error struct {
	// Code is the error kind; it decides the status on every binding.
	Code Code
	// Message is a human-readable description safe to show to clients.
	Message string
	// Metadata becomes google.rpc.ErrorInfo.metadata.
	Metadata map[string]string
	// Violations become a google.rpc.BadRequest detail.
	Violations []FieldViolation

	cause error
}

// Sentinel errors, one per code, for use with errors.Is.
var (
	ErrTaskNotFound                   = &Error{Code: CodeTaskNotFound}
	ErrTaskNotCancelable              = &Error{Code: CodeTaskNotCancelable}
	ErrPushNotificationNotSupported   = &Error{Code: CodePushNotificationNotSupported}
	ErrUnsupportedOperation           = &Error{Code: CodeUnsupportedOperation}
	ErrContentTypeNotSupported        = &Error{Code: CodeContentTypeNotSupported}
	ErrInvalidAgentResponse           = &Error{Code: CodeInvalidAgentResponse}
	ErrExtendedAgentCardNotConfigured = &Error{Code: CodeExtendedAgentCardNotConfigured}
	ErrExtensionSupportRequired       = &Error{Code: CodeExtensionSupportRequired}
	ErrVersionNotSupported            = &Error{Code: CodeVersionNotSupported}
	ErrParse                          = &Error{Code: CodeParseError}
	ErrInvalidRequest                 = &Error{Code: CodeInvalidRequest}
	ErrMethodNotFound                 = &Error{Code: CodeMethodNotFound}
	ErrInvalidParams                  = &Error{Code: CodeInvalidParams}
	ErrInternal                       = &Error{Code: CodeInternal}
	ErrUnauthenticated                = &Error{Code: CodeUnauthenticated}
	ErrRequestTooLarge                = &Error{Code: CodeRequestTooLarge}
	ErrRateLimited                    = &Error{Code: CodeRateLimited}
)

// NewError returns an error with the code and a formatted message.
func NewError(c Code, format string, args ...any) *Error {
	return &Error{Code: c, Message: fmt.Sprintf(format, args...)}
}

// InvalidParams returns an InvalidParamsError listing the violations.
func InvalidParams(v ...FieldViolation) *Error {
	return &Error{Code: CodeInvalidParams, Message: "invalid parameters" + JoinViolations(v), Violations: v}
}

// JoinViolations renders violations as ": field: description; ..." ("" for
// none), for error messages.
func JoinViolations(v []FieldViolation) string {
	var b strings.Builder
	for i, f := range v {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		b.WriteString(f.Field)
		b.WriteString(": ")
		b.WriteString(f.Description)
	}
	return b.String()
}

// Internal wraps an unexpected failure. The cause is kept for logs and never
// sent to a client; the client sees only "internal error".
func Internal(cause error) *Error {
	return &Error{Code: CodeInternal, Message: "internal error", cause: cause}
}

// Error implements the error interface.
func (e *Error) Error() string {
	msg := e.Message
	if msg == "" {
		msg = lookup(e.Code).message
	}
	if e.cause != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code.Name(), msg, e.cause)
	}
	return e.Code.Name() + ": " + msg
}

// WireMessage is the message sent to clients: Message, or the code's
// default when empty.
func (e *Error) WireMessage() string {
	if e.Message != "" {
		return e.Message
	}
	return lookup(e.Code).message
}

// Is reports whether target is an *Error with the same code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// Unwrap returns the internal cause, if any.
func (e *Error) Unwrap() error { return e.cause }

// WithMeta returns a copy of e with one more metadata entry.
func (e *Error) WithMeta(key, value string) *Error {
	c := *e
	c.Metadata = make(map[string]string, len(e.Metadata)+1)
	maps.Copy(c.Metadata, e.Metadata)
	c.Metadata[key] = value
	return &c
}

// AsError converts any error to an *Error. An *Error anywhere in the chain
// is returned as is; anything else becomes an internal error wrapping it.
func AsError(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return Internal(err)
}
