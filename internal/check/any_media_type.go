package check

import (
	"context"

	"parley.dev/parley/a2a"
)

// mediaTypeChecks grades response media types (B8) on a success (ListTasks
// with pageSize 1, kept for grpc.protocol) and on the error of
// errors.unknown-task.get; on HTTP+JSON also a request sent as
// application/json.
func (b *bindingRun) mediaTypeChecks(ctx context.Context) {
	b.listRes = b.t.call(ctx, a2a.MethodListTasks, &a2a.ListTasksRequest{PageSize: new(int32(1))}, callOpts{})
	responses := []struct {
		id, what, op string
		res          *result
	}{
		{"B8.success-type", "a success response", a2a.MethodListTasks, b.listRes},
		{"B8.error-type", "an error response", a2a.MethodGetTask, b.unknownErr},
	}
	for _, x := range responses {
		c := Result{ID: x.id, Row: "B8", Operation: x.op, Title: "media type of " + x.what}
		switch b.t.binding {
		case a2a.BindingGRPC:
			c.Level, c.Section, c.Requires = "MUST", "§9.1, §11.1", "JSON-RPC: application/json; HTTP+JSON: application/a2a+json (the JSON media types do not apply to gRPC)"
			b.check(c).saw(x.res).na("gRPC carries protobuf messages (Content-Type %q): graded by grpc.protocol", x.res.ex.Header.Get("Content-Type"))
			continue
		case a2a.BindingJSONRPC:
			c.Level, c.Section, c.Requires = "MUST", "§9.1", "JSON-RPC: Content-Type application/json for requests and responses"
		default:
			c.Level, c.Section, c.Requires = "SHOULD", "§11.1, §11.6", "HTTP+JSON: Content-Type application/a2a+json SHOULD be used for requests and responses"
		}
		b.responseMediaType(b.check(c).saw(x.res), x.res)
	}
	if b.t.binding == a2a.BindingHTTPJSON {
		b.requestAsJSON(ctx)
	}
}

// responseMediaType grades the media type of a JSON response.
func (b *bindingRun) responseMediaType(r *rec, res *result) {
	if r.incomplete(res) {
		return
	}
	if res == b.listRes && !res.ok() {
		r.skip("ListTasks did not succeed (%s)", res.outcome())
		return
	}
	ct := res.ex.contentType()
	jsonrpc := b.t.binding == a2a.BindingJSONRPC
	switch {
	case jsonrpc && ct == "application/json":
		r.same().pass("%s", ct)
	case jsonrpc:
		r.differs("Parley sends application/json").fail("%q", ct)
	case ct == "application/a2a+json":
		r.same().pass("%s", ct)
	case ct == "application/json" || ct == "application/problem+json":
		r.differs("Parley sends application/a2a+json").warn("%s", ct)
	default:
		r.differs("Parley sends application/a2a+json").fail("%q is not a JSON media type", ct)
	}
}

// requestAsJSON sends an HTTP+JSON request as application/json.
func (b *bindingRun) requestAsJSON(ctx context.Context) {
	r := b.check(Result{ID: "B8.request-json", Row: "B8", Operation: a2a.MethodCancelTask, Title: "an HTTP+JSON request sent as application/json",
		Level: "SPEC SILENT", Section: "§11.1, §9.4",
		Requires: "requests SHOULD use application/a2a+json; the spec does not say whether a server must accept application/json"})
	res := b.t.call(ctx, a2a.MethodCancelTask, &a2a.CancelTaskRequest{Id: unknownID("task")}, callOpts{contentType: "application/json"})
	switch {
	case !r.gradable(res):
	case res.err.is(a2a.CodeTaskNotFound):
		r.same().na("accepted (the request was processed: %s)", describeError(res.err))
	default:
		r.differs("Parley accepts application/json").na("%s", res.outcome())
	}
}
