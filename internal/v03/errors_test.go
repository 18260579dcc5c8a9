package v03_test

import (
	"maps"
	"testing"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/v03"
)

// TestErrorsOfTheTable: every error of the one table (a2a/errors.go)
// becomes a v0.3 error object with its JSON-RPC code and, when it has
// metadata, its reason in data; the object reads back as the same error
// with the same metadata, at the table's HTTP status. The 1.1 preview's
// TaskGenerationMismatchError among them: a v0.3 call never meets it (its
// request has no ifGenerationMatch), but the mapping is the table's all
// the same.
func TestErrorsOfTheTable(t *testing.T) {
	for _, e := range []*a2a.Error{
		a2a.GenerationMismatch("t-1", 3, 5),
		a2a.NewError(a2a.CodeTaskNotFound, "no task").WithMeta("taskId", "t-1"),
		a2a.NewError(a2a.CodeVersionNotSupported, "no").WithMeta("supportedVersions", "1.0,0.3"),
	} {
		o := v03.ErrorFromV1(e)
		if o.Code != e.Code.JSONRPC() {
			t.Errorf("%s: v0.3 code %d, want %d", e.Code.Name(), o.Code, e.Code.JSONRPC())
		}
		back := v03.ErrorToV1Status(o, e.Code.HTTPStatus())
		if back.Code != e.Code || !maps.Equal(back.Metadata, e.Metadata) || back.WireMessage() != e.WireMessage() {
			t.Errorf("%s: read back as %s %v %q", e.Code.Name(), back.Code.Name(), back.Metadata, back.WireMessage())
		}
	}
	if o := v03.ErrorFromV1(a2a.GenerationMismatch("t", 1, 2)); o.Code != -32010 {
		t.Errorf("TaskGenerationMismatchError in v0.3: code %d, want -32010", o.Code)
	}
}
