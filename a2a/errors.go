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

// codeInfo is one row of the mapping table of spec §5.4.
type codeInfo struct {
	code    Code
	name    string // spec name, e.g. TaskNotFoundError
	reason  string // ErrorInfo.reason; empty for non-A2A errors
	message string // default message
	http    int    // HTTP status
	status  string // google.rpc.Code name
	grpc    int    // google.rpc.Code number
}

// codeTable is ordered and searched linearly: a mapping is deterministic and
// never depends on map iteration order.
var codeTable = [...]codeInfo{
	{CodeTaskNotFound, "TaskNotFoundError", "TASK_NOT_FOUND", "task not found", 404, "NOT_FOUND", 5},
	{CodeTaskNotCancelable, "TaskNotCancelableError", "TASK_NOT_CANCELABLE", "task cannot be canceled", 400, "FAILED_PRECONDITION", 9},
	{CodePushNotificationNotSupported, "PushNotificationNotSupportedError", "PUSH_NOTIFICATION_NOT_SUPPORTED", "push notifications are not supported", 400, "FAILED_PRECONDITION", 9},
	{CodeUnsupportedOperation, "UnsupportedOperationError", "UNSUPPORTED_OPERATION", "operation not supported", 400, "FAILED_PRECONDITION", 9},
	{CodeContentTypeNotSupported, "ContentTypeNotSupportedError", "CONTENT_TYPE_NOT_SUPPORTED", "content type not supported", 400, "INVALID_ARGUMENT", 3},
	{CodeInvalidAgentResponse, "InvalidAgentResponseError", "INVALID_AGENT_RESPONSE", "invalid agent response", 500, "INTERNAL", 13},
	{CodeExtendedAgentCardNotConfigured, "ExtendedAgentCardNotConfiguredError", "EXTENDED_AGENT_CARD_NOT_CONFIGURED", "extended agent card not configured", 400, "FAILED_PRECONDITION", 9},
	{CodeExtensionSupportRequired, "ExtensionSupportRequiredError", "EXTENSION_SUPPORT_REQUIRED", "a required extension was not activated", 400, "FAILED_PRECONDITION", 9},
	{CodeVersionNotSupported, "VersionNotSupportedError", "VERSION_NOT_SUPPORTED", "protocol version not supported", 400, "FAILED_PRECONDITION", 9},
	{CodeParseError, "JSONParseError", "", "invalid JSON payload", 400, "INVALID_ARGUMENT", 3},
	{CodeInvalidRequest, "InvalidRequestError", "", "request payload validation error", 400, "INVALID_ARGUMENT", 3},
	{CodeMethodNotFound, "MethodNotFoundError", "", "method not found", 404, "UNIMPLEMENTED", 12},
	{CodeInvalidParams, "InvalidParamsError", "", "invalid parameters", 400, "INVALID_ARGUMENT", 3},
	{CodeInternal, "InternalError", "", "internal error", 500, "INTERNAL", 13},
	{CodeUnauthenticated, "UnauthenticatedError", "", "authentication required", 401, "UNAUTHENTICATED", 16},
	{CodeRequestTooLarge, "RequestTooLargeError", "", "request too large", 413, "RESOURCE_EXHAUSTED", 8},
	{CodeRateLimited, "RateLimitedError", "", "too many requests", 429, "RESOURCE_EXHAUSTED", 8},
}

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

// Name is the spec's name for the error, e.g. "TaskNotFoundError".
func (c Code) Name() string { return lookup(c).name }

// Reason is the google.rpc.ErrorInfo reason of an A2A error (the name in
// UPPER_SNAKE_CASE without "Error", spec §10.6, §11.6), or "" for other errors.
func (c Code) Reason() string { return lookup(c).reason }

// HTTPStatus is the HTTP status of the error on the HTTP+JSON binding.
func (c Code) HTTPStatus() int { return lookup(c).http }

// GRPCStatus returns the google.rpc.Code number and name of the error.
func (c Code) GRPCStatus() (int, string) {
	i := lookup(c)
	return i.grpc, i.status
}

// JSONRPC is the code sent in a JSON-RPC error object.
func (c Code) JSONRPC() int {
	switch c {
	case CodeRequestTooLarge:
		return int(CodeInvalidRequest)
	case CodeRateLimited:
		return int(CodeInternal)
	}
	return int(lookup(c).code)
}

// IsA2A reports whether the code is one of the nine A2A-specific errors.
func (c Code) IsA2A() bool { return c <= CodeTaskNotFound && c >= CodeVersionNotSupported }

// CodeForReason maps an ErrorInfo reason back to its code, for clients.
func CodeForReason(reason string) (Code, bool) {
	for _, i := range codeTable {
		if i.reason != "" && i.reason == reason {
			return i.code, true
		}
	}
	for c, r := range parleyReasons {
		if r == reason {
			return c, true
		}
	}
	return 0, false
}

// parleyReasons are the ErrorInfo reasons, in DomainParley, of codes
// Parley adds to the spec's. On gRPC a rate limit and a request over the
// size limit are both RESOURCE_EXHAUSTED; the second, often refused by the
// gRPC library before Parley sees the request, has no ErrorInfo, so a bare
// RESOURCE_EXHAUSTED means RequestTooLarge and the reason marks a rate
// limit.
var parleyReasons = map[Code]string{
	CodeRateLimited: "RATE_LIMITED",
}

// CodeForJSONRPC maps a JSON-RPC error code to a Code, for clients.
func CodeForJSONRPC(n int) (Code, bool) {
	for _, i := range codeTable {
		if int(i.code) == n {
			return i.code, true
		}
	}
	return 0, false
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
// carries the error on the wire: the A2A reason in DomainA2A for A2A
// errors, RATE_LIMITED in DomainParley for a rate limit (see
// parleyReasons), the gRPC status name in DomainParley for others with
// metadata.
// ok is false when the error has no ErrorInfo.
func (e *Error) Info() (reason, domain string, ok bool) {
	if r, ok := parleyReasons[e.Code]; ok {
		return r, DomainParley, true
	}
	switch {
	case e.Code.IsA2A():
		return e.Code.Reason(), DomainA2A, true
	case len(e.Metadata) > 0:
		_, name := e.Code.GRPCStatus()
		return name, DomainParley, true
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
