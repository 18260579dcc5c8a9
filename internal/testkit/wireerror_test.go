package testkit_test

import (
	"slices"
	"strconv"
	"testing"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/testkit"
)

// TestWireError: both error forms decode to their code, ErrorInfo and
// field violations; a REST error without a reason is known by its HTTP
// status; a member of the wrong JSON type is an error.
func TestWireError(t *testing.T) {
	t.Parallel()
	details := `[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"` + a2a.CodeTaskNotFound.Reason() + `","domain":"a2a-protocol.org","metadata":{"taskId":"t1"}},` +
		`{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":"id","description":"x"}]}]`
	check := func(what string, w *testkit.WireError, err error, code a2a.Code) {
		t.Helper()
		if err != nil || w.Code != code || w.Message != "m" || !w.ErrorInfo || w.Reason != code.Reason() ||
			w.Domain != a2a.DomainA2A || w.Metadata["taskId"] != "t1" || !slices.Equal(w.Fields, []string{"id"}) {
			t.Errorf("%s = %v, %v; want %s with its details", what, w, err, code.Name())
		}
	}
	w, err := testkit.RPCWireError([]byte(`{"code":` + strconv.Itoa(a2a.CodeTaskNotFound.JSONRPC()) + `,"message":"m","data":` + details + `}`))
	check("RPCWireError", w, err, a2a.CodeTaskNotFound)
	w, err = testkit.StatusWireError(404, []byte(`{"code":404,"status":"NOT_FOUND","message":"m","details":`+details+`}`))
	check("StatusWireError", w, err, a2a.CodeTaskNotFound)

	for status, code := range map[int]a2a.Code{400: a2a.CodeInvalidParams, 401: a2a.CodeUnauthenticated, 405: a2a.CodeMethodNotFound, 413: a2a.CodeRequestTooLarge, 500: a2a.CodeInternal} {
		if w, err := testkit.StatusWireError(status, []byte(`{"message":"m"}`)); err != nil || w.Code != code || w.ErrorInfo {
			t.Errorf("StatusWireError(%d, no details) = %v, %v; want %s", status, w, err, code.Name())
		}
	}
	for _, bad := range []string{`{"message":"m"}`, `{"code":"1","message":"m"}`, `{"code":-32001,"message":1}`,
		`{"code":-32001,"data":{}}`, `{"code":-32001,"data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","metadata":{"n":1}}]}`} {
		if w, err := testkit.RPCWireError([]byte(bad)); err == nil {
			t.Errorf("RPCWireError(%s) = %v; want an error", bad, w)
		}
	}
}
