package a2a

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Code identifies an error kind. It is a closed set: the ten A2A errors
// (spec §3.3.2; the tenth, TaskGenerationMismatchError, is the A2A 1.1
// preview's, see CodeTaskGenerationMismatch), the standard JSON-RPC errors the spec references (§9.5), and
// the kinds Parley needs beside them (authentication, authorization, oversized requests,
// rate limits, a service unavailable for a while). Its numeric value is the
// JSON-RPC error code, except for CodeRequestTooLarge, CodeRateLimited and
// CodeUnavailable (see there).
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
	// CodeTaskGenerationMismatch is the A2A 1.1 preview's
	// TaskGenerationMismatchError (spec dev-1.1 §3.2.2, §3.3.2, §5.4): a
	// send whose configuration.ifGenerationMatch is not the generation of
	// the task it continues. Only a call served in 1.1 can meet it (the
	// field is cleared from 1.0 and 0.3 calls), so no v1.0 or v0.3 client
	// is sent it. Its ErrorInfo metadata (MetaTaskID, MetaExpectedGeneration,
	// MetaCurrentGeneration) says which generation the task has now
	// (GenerationMismatch reads it).
	CodeTaskGenerationMismatch Code = -32010

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
	// CodePermissionDenied is a caller whose credential lacks the right
	// an operation needs (Right; spec §3.3.2: an authorization error, HTTP
	// 403, gRPC PERMISSION_DENIED, no JSON-RPC code). Parley uses -31403,
	// the official Go SDK's (a2a-go v2 ErrUnauthorized), outside the band
	// -32768..-32000 JSON-RPC 2.0 reserves, so the two read each other's
	// (in HTTP 200 on JSON-RPC, as the Go SDK sends and reads it).
	CodePermissionDenied Code = -31403
	// CodeRequestTooLarge is a request body over the server's limit. On
	// JSON-RPC it is reported as an invalid request (-32600).
	CodeRequestTooLarge Code = -32600 - 1000
	// CodeRateLimited is a caller over its request rate or its open
	// streams (per principal). The spec files rate limiting under system
	// errors (§3.3.2: JSON-RPC -32603, HTTP 5xx or a Retry-After): Parley
	// answers HTTP 429 Too Many Requests on both HTTP bindings (JSON-RPC's
	// body carries -32603) and RESOURCE_EXHAUSTED on gRPC.
	CodeRateLimited Code = -32603 - 1000
	// CodeUnavailable is a server that cannot do the call now but may
	// soon: its task store failed in a way that passes (a full disk, an
	// I/O error, a lost database connection, a lost lease), it is shutting
	// down, or it has no memory to spare for the request. The spec files
	// such failures under system errors (§3.3.2: JSON-RPC -32603, HTTP 5xx
	// or a Retry-After): Parley answers HTTP 503 Service Unavailable with
	// Retry-After on both HTTP bindings (JSON-RPC's body carries -32603 and
	// the reason UNAVAILABLE in its ErrorInfo, which tells it from
	// InternalError) and UNAVAILABLE with a google.rpc.RetryInfo on gRPC.
	// A client may repeat the call after the wait (Error.RetryAfter).
	CodeUnavailable Code = -32603 - 2000
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
// gRPC bindings use the v1.0 statuses (package v03). The 1.1 preview's
// -32010 (HTTP 409, gRPC ABORTED) is in the table like the others, so
// every binding, v0.3's included, would map it the same way; a v0.3 or
// v1.0 call never meets it, since its ifGenerationMatch is cleared before
// the core reads it (internal/version.ClearRequest).
//
// Several rows share a JSON-RPC code, an HTTP status or a gRPC code. For
// each value the table marks the row it means alone (the def column): the
// only row with it, or the default among those sharing it. The A2A errors
// rate limits and UnavailableError carry their reason (Error.Info), which
// decides. The other errors carry one only with metadata (the spec defines none, and
// the gRPC library or an HTTP server in front answers some of them), so
// without it, where their value is shared, they read as its default: JSONParseError and InvalidRequestError
// as InvalidParamsError on HTTP+JSON and gRPC, RequestTooLargeError as
// InvalidRequestError on JSON-RPC. MethodNotFoundError shares HTTP 404
// with TaskNotFoundError: Parley sends it with its reason, and from
// servers that send none, the body's status name UNIMPLEMENTED (the gRPC
// column) tells it apart.
//
// HTTP 503 and gRPC UNAVAILABLE are UnavailableError's, but alone they
// mean no row: a proxy, a load balancer or the gRPC library sends them
// too, for a server it could not reach, so they are transport conditions
// (transportHTTP, transportGRPC) unless the reason UNAVAILABLE comes with
// them; UnavailableError is the default of none of its values.
//
// HTTP statuses of JSON-RPC: JSON-RPC over HTTP answers errors in HTTP 200,
// except UnauthenticatedError (401, with its challenge), RateLimitedError
// (429) and UnavailableError (503): their HTTP column is the status of
// the JSON-RPC response too, so that HTTP clients, proxies and load
// balancers see them (package internal/httpx, JSONRPCStatus).
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
	grpcAborted            = 10
	grpcUnimplemented      = 12
	grpcPermissionDenied   = 7
	grpcInternal           = 13
	grpcUnavailable        = 14
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
	{CodeTaskGenerationMismatch, "TaskGenerationMismatchError", "TASK_GENERATION_MISMATCH", "task generation mismatch", -32010, 409, grpcAborted, onAll},
	{CodeParseError, "JSONParseError", "JSON_PARSE", "invalid JSON payload", -32700, 400, grpcInvalidArgument, onRPC},
	{CodeInvalidRequest, "InvalidRequestError", "INVALID_REQUEST", "request payload validation error", -32600, 400, grpcInvalidArgument, onRPC},
	{CodeMethodNotFound, "MethodNotFoundError", "METHOD_NOT_FOUND", "method not found", -32601, 404, grpcUnimplemented, onRPC | onGRPC},
	{CodeInvalidParams, "InvalidParamsError", "INVALID_PARAMS", "invalid parameters", -32602, 400, grpcInvalidArgument, onAll},
	{CodeInternal, "InternalError", "INTERNAL", "internal error", -32603, 500, grpcInternal, onAll},
	{CodeUnauthenticated, "UnauthenticatedError", "UNAUTHENTICATED", "authentication required", -32000, 401, grpcUnauthenticated, onAll},
	{CodePermissionDenied, "PermissionDeniedError", "PERMISSION_DENIED", "permission denied", -31403, 403, grpcPermissionDenied, onAll},
	// On gRPC an oversized request is often refused by the gRPC library
	// before Parley sees it, without an ErrorInfo: RESOURCE_EXHAUSTED alone
	// means RequestTooLarge.
	{CodeRequestTooLarge, "RequestTooLargeError", "REQUEST_TOO_LARGE", "request too large", -32600, 413, grpcResourceExhausted, onHTTP | onGRPC},
	{CodeRateLimited, "RateLimitedError", "RATE_LIMITED", "too many requests", -32603, 429, grpcResourceExhausted, onHTTP},
	// 503 and UNAVAILABLE alone are transport conditions (see above).
	{CodeUnavailable, "UnavailableError", "UNAVAILABLE", "service unavailable; retry later", -32603, 503, grpcUnavailable, 0},
}

// Values peers send that no row has, read as one row's (never sent by
// Parley, so outside the table's round trip): the official Go SDK's
// reason UNAUTHORIZED (its permission denied) and its JSON-RPC code
// -31401 (UNAUTHENTICATED); HTTP 405, 422 and 501; and the gRPC codes
// OUT_OF_RANGE, UNKNOWN, ALREADY_EXISTS and DATA_LOSS. (ABORTED and HTTP 409 are TaskGenerationMismatchError's.) Any other 4xx status is InvalidRequest, any other
// 5xx InternalError, except the transport conditions (transportHTTP,
// transportGRPC), which are no A2A error at all.
var (
	aliasReasons = map[string]Code{"UNAUTHORIZED": CodePermissionDenied}
	aliasRPC     = map[int]Code{-31401: CodeUnauthenticated}
	aliasHTTP    = map[int]Code{405: CodeMethodNotFound, 422: CodeInvalidParams, 501: CodeUnsupportedOperation}
	aliasGRPC    = map[int]Code{11: CodeInvalidParams, 2: CodeInternal, 6: CodeInternal, 15: CodeInternal}
)

// The statuses that say the server (or a proxy) could not answer rather
// than what was wrong with the call: HTTP 502, 503 and 504, gRPC CANCELLED,
// DEADLINE_EXCEEDED and UNAVAILABLE. With the reason UNAVAILABLE, 503 and
// UNAVAILABLE are UnavailableError (the reason is read first).
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

// IsA2A reports whether the code is one of the ten A2A-specific errors
// (-32001…-32010; the tenth is the 1.1 preview's).
func (c Code) IsA2A() bool { return c <= CodeTaskNotFound && c >= CodeTaskGenerationMismatch }

// CodeForReason maps an ErrorInfo reason, spelled exactly, back to its code,
// for clients: a reason of the table, or UNAUTHORIZED (the permission
// denied of the official Go SDK).
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
// DEADLINE_EXCEEDED, UNAVAILABLE) rather than an answer: HTTP 503 or gRPC
// UNAVAILABLE is UnavailableError only with its reason.
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
	case onRPC:
		if c, ok := aliasRPC[v]; ok {
			return []Code{c}
		}
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
// metadata a client needs, such as the lastEventId of a stream that ended
// early. The spec defines ErrorInfo for A2A errors only; it is
// silent on metadata of the others, so Parley sends them in its own domain.
const DomainParley = "parley.dev"

// Info returns the reason and domain of the google.rpc.ErrorInfo that
// carries the error on the wire: for an A2A error its reason in DomainA2A
// (spec §10.6, §11.6); for another error its table reason in DomainParley
// when it is a rate limit or UnavailableError (whose JSON-RPC codes are
// InternalError's), MethodNotFoundError (whose HTTP 404 is
// TaskNotFoundError's) or has metadata. ok is false when the error has no
// ErrorInfo: the other errors are known by their code and status alone, as
// when the gRPC library or an HTTP server in front answers them (see
// codeTable for what each then stands for).
func (e *Error) Info() (reason, domain string, ok bool) {
	row := lookup(e.Code)
	switch {
	case e.Code.IsA2A():
		return row.reason, DomainA2A, true
	case e.Code == CodeRateLimited || e.Code == CodeUnavailable || e.Code == CodeMethodNotFound || len(e.Metadata) > 0:
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

// Sentinel errors, one per code, for use with errors.Is:
// errors.Is(err, ErrTaskNotFound) holds when err's chain holds an *Error of
// code CodeTaskNotFound, whatever its message, so it keeps working after
// the error went over the wire and back (a client rebuilds the *Error from
// the code and ErrorInfo reason of spec §5.4).
//
// The sentinels are constants, of a type of their own that only matches
// and names a code: no importer can reassign one or change the code,
// message or metadata it carries, as it could with a shared *Error
// variable (every user of errors.Is would see the change). They are for
// matching, not for returning: an error Parley sends or returns is an
// *Error (NewError, InvalidParams, Internal, Unavailable, or an Error
// literal) with its message, metadata and violations (spec §3.3.2). A
// sentinel returned anyway, bare or wrapped, still works: errors.As finds
// an *Error of its code in it (a new one each time, with the code's
// default message), and AsError, which every binding calls, answers it
// with its code.
const (
	ErrTaskNotFound                   = sentinel(CodeTaskNotFound)
	ErrTaskNotCancelable              = sentinel(CodeTaskNotCancelable)
	ErrPushNotificationNotSupported   = sentinel(CodePushNotificationNotSupported)
	ErrUnsupportedOperation           = sentinel(CodeUnsupportedOperation)
	ErrContentTypeNotSupported        = sentinel(CodeContentTypeNotSupported)
	ErrInvalidAgentResponse           = sentinel(CodeInvalidAgentResponse)
	ErrExtendedAgentCardNotConfigured = sentinel(CodeExtendedAgentCardNotConfigured)
	ErrExtensionSupportRequired       = sentinel(CodeExtensionSupportRequired)
	ErrVersionNotSupported            = sentinel(CodeVersionNotSupported)
	ErrTaskGenerationMismatch         = sentinel(CodeTaskGenerationMismatch)
	ErrParse                          = sentinel(CodeParseError)
	ErrInvalidRequest                 = sentinel(CodeInvalidRequest)
	ErrMethodNotFound                 = sentinel(CodeMethodNotFound)
	ErrInvalidParams                  = sentinel(CodeInvalidParams)
	ErrInternal                       = sentinel(CodeInternal)
	ErrUnauthenticated                = sentinel(CodeUnauthenticated)
	ErrPermissionDenied               = sentinel(CodePermissionDenied)
	ErrRequestTooLarge                = sentinel(CodeRequestTooLarge)
	ErrRateLimited                    = sentinel(CodeRateLimited)
	ErrUnavailable                    = sentinel(CodeUnavailable)
)

// sentinel is the type of the Err constants: a Code that is an error. It
// is a type of its own, not Code, so that a Code stays a plain number when
// printed.
type sentinel Code

// Error is the text of an *Error of the code with no message.
func (s sentinel) Error() string { return (&Error{Code: Code(s)}).Error() }

// Is reports whether target is an *Error of the sentinel's code.
func (s sentinel) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == Code(s)
}

// As sets a target of type **Error to a new *Error of the sentinel's code,
// so that errors.As finds an *Error in a chain holding a sentinel.
func (s sentinel) As(target any) bool {
	p, ok := target.(**Error)
	if ok {
		*p = &Error{Code: Code(s)}
	}
	return ok
}

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
//
// A cause that says the failure passes (errors.Is(cause, ErrUnavailable):
// package taskstore marks a store's transient failures so, with
// taskstore.ErrUnavailable) becomes an UnavailableError instead (see
// AsError), so that every path of the server that reports a store failure
// answers 503 / UNAVAILABLE for it.
func Internal(cause error) *Error {
	if errors.Is(cause, ErrUnavailable) {
		return unavailableFrom(cause)
	}
	return &Error{Code: CodeInternal, Message: "internal error", cause: cause}
}

// MetaRetryAfter is the Error metadata key of the whole seconds a client
// should wait before repeating a call refused with UnavailableError or
// RateLimitedError. It travels in the ErrorInfo on every binding, beside
// the binding's own form: Retry-After on HTTP, google.rpc.RetryInfo on
// gRPC.
const MetaRetryAfter = "retryAfter"

// DefaultRetryAfter is the wait an UnavailableError asks for when it names
// none.
const DefaultRetryAfter = time.Second

// Unavailable returns an UnavailableError with the message, asking the
// client to wait retryAfter (rounded up to whole seconds; 0 means
// DefaultRetryAfter) before it tries again. The cause, if any, is kept for
// logs and never sent.
func Unavailable(message string, retryAfter time.Duration, cause error) *Error {
	if retryAfter <= 0 {
		retryAfter = DefaultRetryAfter
	}
	secs := int64((retryAfter + time.Second - 1) / time.Second)
	return &Error{Code: CodeUnavailable, Message: message,
		Metadata: map[string]string{MetaRetryAfter: strconv.FormatInt(secs, 10)}, cause: cause}
}

// RetryAfter returns how long the error asks a client to wait before it
// repeats the call: the metadata retryAfter (whole seconds), or
// DefaultRetryAfter for an UnavailableError that names none. ok is false
// when the error asks for no wait.
func (e *Error) RetryAfter() (time.Duration, bool) {
	if s, ok := e.Metadata[MetaRetryAfter]; ok {
		if n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 32); err == nil && n >= 0 {
			return time.Duration(n) * time.Second, true
		}
	}
	if e.Code == CodeUnavailable {
		return DefaultRetryAfter, true
	}
	return 0, false
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

// Is reports whether target is an *Error with the same code, or the
// sentinel of e's code (ErrTaskNotFound for CodeTaskNotFound, ...).
func (e *Error) Is(target error) bool {
	switch t := target.(type) {
	case *Error:
		return t.Code == e.Code
	case sentinel:
		return Code(t) == e.Code
	}
	return false
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
// is returned as is, except an UnavailableError without a cause found
// inside a longer chain (a sentinel such as taskstore.ErrUnavailable
// marking a driver's error): that one is copied with the whole chain as
// its cause, for logs, and with the retryAfter metadata its wire form
// carries. A sentinel (ErrTaskNotFound, ...) stands for an *Error of its
// code: alone it becomes a new one without a message; inside a chain it
// is the *Error errors.As finds for it. Anything else becomes an internal
// error wrapping it.
func AsError(err error) *Error {
	if err == nil {
		return nil
	}
	if s, ok := err.(sentinel); ok {
		return &Error{Code: Code(s)}
	}
	var e *Error
	if errors.As(err, &e) {
		if e.Code == CodeUnavailable && e.cause == nil && error(e) != err {
			return unavailableFrom(err)
		}
		return e
	}
	return Internal(err)
}

// unavailableFrom is the UnavailableError of a chain that matches
// ErrUnavailable: the message and metadata of the UnavailableError in it
// (the row's message when there is none), with the chain as its cause.
func unavailableFrom(err error) *Error {
	msg, meta := lookup(CodeUnavailable).message, map[string]string(nil)
	var e *Error
	if errors.As(err, &e) && e.Code == CodeUnavailable {
		msg, meta = e.WireMessage(), e.Metadata
	}
	u := Unavailable(msg, 0, err)
	maps.Copy(u.Metadata, meta)
	return u
}
