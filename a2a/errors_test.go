package a2a

import (
	"errors"
	"fmt"
	"maps"
	"testing"
	"time"
)

func TestErrorIsMatchesByCode(t *testing.T) {
	err := fmt.Errorf("wrapped: %w", NewError(CodeTaskNotFound, "task %q not found", "t1"))
	if !errors.Is(err, ErrTaskNotFound) {
		t.Fatal("errors.Is(wrapped TaskNotFound, ErrTaskNotFound) = false")
	}
	if errors.Is(err, ErrTaskNotCancelable) {
		t.Fatal("errors.Is matched a different code")
	}
}

func TestCodesSurviveTheWire(t *testing.T) {
	// A client rebuilds an error from what a binding sent: the JSON-RPC code,
	// or the ErrorInfo reason. Either way errors.Is must still match.
	for _, info := range codeTable {
		c := info.code
		if c == CodeRequestTooLarge || c == CodeRateLimited || c == CodeUnavailable {
			continue // reported as InvalidRequest / InternalError on JSON-RPC (with HTTP 413 / 429 / 503)
		}
		got, ok := CodeForJSONRPC(c.JSONRPC())
		if !ok || got != c {
			t.Errorf("CodeForJSONRPC(%d) = %v, %v; want %v", c.JSONRPC(), got, ok, c)
		}
		if c.IsA2A() {
			got, ok := CodeForReason(c.Reason())
			if !ok || got != c {
				t.Errorf("CodeForReason(%q) = %v; want %v", c.Reason(), got, c)
			}
			if !errors.Is(&Error{Code: got, Message: "from the wire"}, &Error{Code: c}) {
				t.Errorf("round trip of %s lost errors.Is", c.Name())
			}
		}
	}
}

func TestErrorMappingTable(t *testing.T) {
	// spec §5.4.
	cases := []struct {
		code   Code
		rpc    int
		http   int
		grpc   string
		reason string
	}{
		{CodeTaskNotFound, -32001, 404, "NOT_FOUND", "TASK_NOT_FOUND"},
		{CodeTaskNotCancelable, -32002, 400, "FAILED_PRECONDITION", "TASK_NOT_CANCELABLE"},
		{CodePushNotificationNotSupported, -32003, 400, "FAILED_PRECONDITION", "PUSH_NOTIFICATION_NOT_SUPPORTED"},
		{CodeUnsupportedOperation, -32004, 400, "FAILED_PRECONDITION", "UNSUPPORTED_OPERATION"},
		{CodeContentTypeNotSupported, -32005, 400, "INVALID_ARGUMENT", "CONTENT_TYPE_NOT_SUPPORTED"},
		{CodeInvalidAgentResponse, -32006, 500, "INTERNAL", "INVALID_AGENT_RESPONSE"},
		{CodeExtendedAgentCardNotConfigured, -32007, 400, "FAILED_PRECONDITION", "EXTENDED_AGENT_CARD_NOT_CONFIGURED"},
		{CodeExtensionSupportRequired, -32008, 400, "FAILED_PRECONDITION", "EXTENSION_SUPPORT_REQUIRED"},
		{CodeVersionNotSupported, -32009, 400, "FAILED_PRECONDITION", "VERSION_NOT_SUPPORTED"},
		{CodeTaskGenerationMismatch, -32010, 409, "ABORTED", "TASK_GENERATION_MISMATCH"}, // spec dev-1.1 §5.4
		{CodeParseError, -32700, 400, "INVALID_ARGUMENT", ""},
		{CodeInvalidRequest, -32600, 400, "INVALID_ARGUMENT", ""},
		{CodeMethodNotFound, -32601, 404, "UNIMPLEMENTED", ""},
		{CodeInvalidParams, -32602, 400, "INVALID_ARGUMENT", ""},
		{CodeInternal, -32603, 500, "INTERNAL", ""},
		{CodeUnauthenticated, -32000, 401, "UNAUTHENTICATED", ""},
		{CodeRequestTooLarge, -32600, 413, "RESOURCE_EXHAUSTED", ""},
		{CodeRateLimited, -32603, 429, "RESOURCE_EXHAUSTED", ""},
		{CodeUnavailable, -32603, 503, "UNAVAILABLE", ""},
	}
	for _, c := range cases {
		_, grpc := c.code.GRPCStatus()
		if c.code.JSONRPC() != c.rpc || c.code.HTTPStatus() != c.http || grpc != c.grpc || c.code.Reason() != c.reason {
			t.Errorf("%s maps to %d/%d/%s/%q, want %d/%d/%s/%q", c.code.Name(),
				c.code.JSONRPC(), c.code.HTTPStatus(), grpc, c.code.Reason(), c.rpc, c.http, c.grpc, c.reason)
		}
	}
}

func TestInternalCauseIsNotSent(t *testing.T) {
	cause := errors.New("disk I/O error at /var/secret")
	e := AsError(fmt.Errorf("saving: %w", cause))
	if e.Code != CodeInternal || e.WireMessage() != "internal error" {
		t.Fatalf("AsError = %v / %q", e.Code, e.WireMessage())
	}
	if !errors.Is(e, cause) {
		t.Fatal("the cause must stay reachable for logs")
	}
}

func TestInvalidParamsListsViolations(t *testing.T) {
	e := InvalidParams(FieldViolation{Field: "pageSize", Description: "must be between 1 and 100"})
	if e.Code != CodeInvalidParams || len(e.Violations) != 1 || e.WireMessage() != "invalid parameters: pageSize: must be between 1 and 100" {
		t.Fatalf("InvalidParams = %+v", e)
	}
}

func TestUnknownCodeFallsBackToInternal(t *testing.T) {
	c := Code(12345)
	code, status := c.GRPCStatus()
	if c.Name() != "InternalError" || c.HTTPStatus() != 500 || c.JSONRPC() != int(CodeInternal) || code != 13 || status != "INTERNAL" || c.Reason() != "" {
		t.Errorf("Code(12345) maps to %s/%d/%d/%d %s/%q, want the InternalError row", c.Name(), c.HTTPStatus(), c.JSONRPC(), code, status, c.Reason())
	}
	if got := (&Error{Code: c}).WireMessage(); got != "internal error" {
		t.Errorf("WireMessage() of an unknown code = %q, want %q", got, "internal error")
	}
}

// TestUnavailableFromChain: an error chain holding an UnavailableError
// sentinel (a store's transient failure) becomes an UnavailableError with
// the sentinel's message, the chain as its cause and a retryAfter, through
// Internal and AsError alike; any other cause stays an internal error.
func TestUnavailableFromChain(t *testing.T) {
	sentinel := &Error{Code: CodeUnavailable, Message: "the store is away; retry later"}
	driver := errors.New("disk I/O error at /var/secret")
	chain := fmt.Errorf("saving: %w", errors.Join(driver, sentinel))
	for name, e := range map[string]*Error{"Internal": Internal(chain), "AsError": AsError(chain)} {
		if e.Code != CodeUnavailable || e.WireMessage() != sentinel.Message {
			t.Errorf("%s = %s %q, want UnavailableError %q", name, e.Code.Name(), e.WireMessage(), sentinel.Message)
		}
		if !errors.Is(e, driver) {
			t.Errorf("%s lost the driver's error (for logs)", name)
		}
		if d, ok := e.RetryAfter(); !ok || d != DefaultRetryAfter || e.Metadata[MetaRetryAfter] != "1" {
			t.Errorf("%s: RetryAfter = %v %v, metadata %v; want %v", name, d, ok, e.Metadata, DefaultRetryAfter)
		}
	}
	if e := AsError(sentinel); e != sentinel {
		t.Errorf("AsError(the sentinel itself) = %v, want it unchanged", e)
	}
	if e := Internal(driver); e.Code != CodeInternal || e.WireMessage() != "internal error" {
		t.Errorf("Internal(plain) = %s %q", e.Code.Name(), e.WireMessage())
	}
}

// TestRetryAfter: Unavailable rounds its wait up to whole seconds and
// defaults it; RetryAfter reads the metadata, or the default for an
// UnavailableError that names none, and nothing for other errors.
func TestRetryAfter(t *testing.T) {
	for _, c := range []struct {
		e    *Error
		want time.Duration
		ok   bool
	}{
		{Unavailable("x", 0, nil), time.Second, true},
		{Unavailable("x", 1500*time.Millisecond, nil), 2 * time.Second, true},
		{Unavailable("x", 7*time.Second, nil), 7 * time.Second, true},
		{&Error{Code: CodeUnavailable}, DefaultRetryAfter, true},
		{(&Error{Code: CodeRateLimited}).WithMeta(MetaRetryAfter, "3"), 3 * time.Second, true},
		{(&Error{Code: CodeUnavailable}).WithMeta(MetaRetryAfter, "junk"), DefaultRetryAfter, true},
		{&Error{Code: CodeInternal}, 0, false},
		{&Error{Code: CodeRateLimited}, 0, false},
	} {
		if got, ok := c.e.RetryAfter(); got != c.want || ok != c.ok {
			t.Errorf("%v.RetryAfter() = %v %v, want %v %v", c.e, got, ok, c.want, c.ok)
		}
	}
}

// The sentinels are constants: this block does not compile if one of them
// becomes a variable again.
const (
	_ = ErrTaskNotFound
	_ = ErrTaskNotCancelable
	_ = ErrPushNotificationNotSupported
	_ = ErrUnsupportedOperation
	_ = ErrContentTypeNotSupported
	_ = ErrInvalidAgentResponse
	_ = ErrExtendedAgentCardNotConfigured
	_ = ErrExtensionSupportRequired
	_ = ErrVersionNotSupported
	_ = ErrTaskGenerationMismatch
	_ = ErrParse
	_ = ErrInvalidRequest
	_ = ErrMethodNotFound
	_ = ErrInvalidParams
	_ = ErrInternal
	_ = ErrUnauthenticated
	_ = ErrRequestTooLarge
	_ = ErrRateLimited
	_ = ErrUnavailable
)

// sentinels lists every sentinel by its code.
var sentinels = map[Code]error{
	CodeTaskNotFound:                   ErrTaskNotFound,
	CodeTaskNotCancelable:              ErrTaskNotCancelable,
	CodePushNotificationNotSupported:   ErrPushNotificationNotSupported,
	CodeUnsupportedOperation:           ErrUnsupportedOperation,
	CodeContentTypeNotSupported:        ErrContentTypeNotSupported,
	CodeInvalidAgentResponse:           ErrInvalidAgentResponse,
	CodeExtendedAgentCardNotConfigured: ErrExtendedAgentCardNotConfigured,
	CodeExtensionSupportRequired:       ErrExtensionSupportRequired,
	CodeVersionNotSupported:            ErrVersionNotSupported,
	CodeTaskGenerationMismatch:         ErrTaskGenerationMismatch,
	CodeParseError:                     ErrParse,
	CodeInvalidRequest:                 ErrInvalidRequest,
	CodeMethodNotFound:                 ErrMethodNotFound,
	CodeInvalidParams:                  ErrInvalidParams,
	CodeInternal:                       ErrInternal,
	CodeUnauthenticated:                ErrUnauthenticated,
	CodePermissionDenied:               ErrPermissionDenied,
	CodeRequestTooLarge:                ErrRequestTooLarge,
	CodeRateLimited:                    ErrRateLimited,
	CodeUnavailable:                    ErrUnavailable,
}

// TestSentinelsMatchEveryCode: for every code of the table, errors.Is
// matches its sentinel against an *Error of the code (bare, wrapped, with a
// message and a cause) and no other code's sentinel; a sentinel matches an
// *Error target of its code and itself; errors.As finds an *Error of its
// code in a chain holding the sentinel; AsError reads a returned sentinel
// as its code; and a sentinel's text is that of an *Error without message.
func TestSentinelsMatchEveryCode(t *testing.T) {
	if len(sentinels) != len(codeTable) {
		t.Fatalf("%d sentinels for %d codes", len(sentinels), len(codeTable))
	}
	for _, row := range codeTable {
		c := row.code
		s, ok := sentinels[c]
		if !ok {
			t.Errorf("%s has no sentinel", c.Name())
			continue
		}
		for name, err := range map[string]error{
			"bare":         &Error{Code: c},
			"with message": NewError(c, "about %s", "t1"),
			"wrapped":      fmt.Errorf("calling: %w", NewError(c, "x")),
			"joined":       errors.Join(errors.New("other"), &Error{Code: c}),
		} {
			if !errors.Is(err, s) {
				t.Errorf("errors.Is(%s %s, its sentinel) = false", name, c.Name())
			}
			for other, os := range sentinels {
				if other != c && errors.Is(err, os) {
					t.Errorf("errors.Is(%s %s, sentinel of %s) = true", name, c.Name(), other.Name())
				}
			}
		}
		if !errors.Is(s, &Error{Code: c}) || !errors.Is(fmt.Errorf("w: %w", s), s) {
			t.Errorf("%s: the sentinel does not match its own code", c.Name())
		}
		var e *Error
		if !errors.As(fmt.Errorf("w: %w", s), &e) || e.Code != c {
			t.Errorf("%s: errors.As(wrapped sentinel, *Error) = %v", c.Name(), e)
		}
		if got := AsError(s); got.Code != c || got.Message != "" {
			t.Errorf("AsError(sentinel of %s) = %s %q", c.Name(), got.Code.Name(), got.Message)
		}
		if want := (&Error{Code: c}).Error(); s.Error() != want {
			t.Errorf("sentinel of %s says %q, want %q", c.Name(), s.Error(), want)
		}
	}
}

// TestSentinelCannotBeChanged: what errors.As hands out for a sentinel is
// a new *Error each time, so changing it changes no sentinel.
func TestSentinelCannotBeChanged(t *testing.T) {
	var e *Error
	if !errors.As(ErrTaskNotFound, &e) {
		t.Fatal("errors.As(ErrTaskNotFound, *Error) = false")
	}
	e.Code, e.Message = CodeInternal, "changed"
	if !errors.Is(&Error{Code: CodeTaskNotFound}, ErrTaskNotFound) || errors.Is(&Error{Code: CodeInternal}, ErrTaskNotFound) {
		t.Fatal("changing the *Error errors.As found changed the sentinel")
	}
	var again *Error
	if errors.As(ErrTaskNotFound, &again); again.Code != CodeTaskNotFound || again.Message != "" {
		t.Fatalf("errors.As(ErrTaskNotFound) after the change = %v", again)
	}
}

// TestGenerationMismatch: the 1.1 preview's TaskGenerationMismatchError
// carries the task and both generations in its metadata, as decimal
// strings (spec dev-1.1 §11.6), and MismatchedGenerations reads them back
// through a wrapped chain.
func TestGenerationMismatch(t *testing.T) {
	e := GenerationMismatch("t-1", 3, 5)
	if reason, domain, ok := e.Info(); !ok || reason != "TASK_GENERATION_MISMATCH" || domain != DomainA2A {
		t.Errorf("Info = %q %q %v", reason, domain, ok)
	}
	want := map[string]string{"taskId": "t-1", "expectedGeneration": "3", "currentGeneration": "5"}
	if !maps.Equal(e.Metadata, want) {
		t.Errorf("metadata %v, want %v", e.Metadata, want)
	}
	wrapped := fmt.Errorf("send: %w", e)
	if !errors.Is(wrapped, ErrTaskGenerationMismatch) {
		t.Error("errors.Is(ErrTaskGenerationMismatch) is false")
	}
	if exp, cur, ok := MismatchedGenerations(wrapped); !ok || exp != 3 || cur != 5 {
		t.Errorf("MismatchedGenerations = %d %d %v, want 3 5 true", exp, cur, ok)
	}
	if _, _, ok := MismatchedGenerations(NewError(CodeTaskNotFound, "x")); ok {
		t.Error("MismatchedGenerations of TaskNotFound is ok")
	}
	if exp, cur, ok := MismatchedGenerations(&Error{Code: CodeTaskGenerationMismatch}); !ok || exp != -1 || cur != -1 {
		t.Errorf("without metadata: %d %d %v, want -1 -1 true", exp, cur, ok)
	}
}
