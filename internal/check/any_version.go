package check

import (
	"context"

	"parley.dev/parley/a2a"
)

// versionSteps grade A2A-Version handling (B7) with GetTask of an unknown
// task, which a server that processes the request answers with
// TaskNotFoundError.
var versionSteps = []step[*bindingRun]{
	{Result{ID: "B7.version-missing", Row: "B7", Operation: a2a.MethodGetTask, Title: "a request without A2A-Version is treated as 0.3",
		Level: "MUST", Section: "§3.6.2, §9.2",
		Requires: "Agents MUST interpret an empty value as version 0.3, MUST process requests with the semantics of the requested version, and MUST return VersionNotSupportedError for a version the interface does not support"},
		(*bindingRun).versionMissing},
	{Result{ID: "B7.version-unsupported", Row: "B7", Operation: a2a.MethodGetTask, Title: "an unsupported version (A2A-Version: 9.9) is VersionNotSupportedError",
		Level: "MUST", Section: "§3.6.2, §5.4",
		Requires: "If the version is not supported by the interface, agents MUST return a VersionNotSupportedError (-32009 / 400 / FAILED_PRECONDITION)"},
		(*bindingRun).versionUnsupported},
	{Result{ID: "B7.version-patch", Row: "B7", Operation: a2a.MethodGetTask, Title: "a patch number is ignored (A2A-Version: 1.0.1 is served as 1.0)",
		Level: "MUST", Section: "§3.6",
		Requires: "Patch version numbers SHOULD NOT be used in requests, and MUST not be considered when clients and servers negotiate protocol versions"},
		(*bindingRun).versionPatch},
	{Result{ID: "B7.version-query", Row: "B7", Operation: a2a.MethodGetTask, Title: "the version as a request parameter (?A2A-Version=1.0, no header)",
		Level: "MAY", Section: "§3.6.1, §9.2, D31",
		Requires: "Clients MAY provide the A2A-Version as a request parameter instead of a header (which §9.2/§11.2 contradict: service parameters MUST be headers)"},
		(*bindingRun).versionQuery},
	{Result{ID: "B7.version-error-details", Row: "B7", Operation: a2a.MethodGetTask, Title: "the version error says which versions are supported",
		Level: "SPEC SILENT", Section: "§9.2, §6.4",
		Requires: "the spec does not say how a server lists its supported versions"},
		(*bindingRun).versionErrorDetails},
}

// getUnknown asks for a task that does not exist.
func (b *bindingRun) getUnknown(ctx context.Context, o callOpts) *result {
	return b.t.call(ctx, a2a.MethodGetTask, &a2a.GetTaskRequest{Id: unknownID("task")}, o)
}

// processed reports whether the server processed a GetTask of an unknown
// task (rather than refusing the request).
func processed(res *result) bool { return res.err.is(a2a.CodeTaskNotFound) }

// versionMissing: a missing header means 0.3 (§3.6.2). A JSON-RPC method
// name of v1.0 (GetTask; v0.3 said tasks/get) processed as such proves 1.0
// semantics; on HTTP+JSON and gRPC nothing observable tells them apart.
func (b *bindingRun) versionMissing(ctx context.Context, r *rec) {
	res := b.getUnknown(ctx, callOpts{version: new("")})
	r.saw(res)
	b.probes["GetTask without A2A-Version"] = outcomeKey(res)
	if r.incomplete(res) {
		return
	}
	jsonrpc := b.t.binding == a2a.BindingJSONRPC
	switch {
	case res.err.is(a2a.CodeVersionNotSupported):
		r.same().pass("refused with %s", describeError(res.err))
	case jsonrpc && res.err.is(a2a.CodeMethodNotFound):
		r.differs("Parley refuses with VersionNotSupportedError").pass("answered as a 0.3 server would (no method GetTask in 0.3): %s", describeError(res.err))
	case jsonrpc && (processed(res) || res.ok()):
		r.differs("Parley refuses with VersionNotSupportedError").fail("processed with v1.0 semantics (the v1.0 method GetTask answered with %s), although an empty version means 0.3", res.outcome())
	default:
		r.differs("Parley refuses with VersionNotSupportedError").na("answered %s: nothing observable tells whether 0.3 semantics were applied", res.outcome())
	}
}

func (b *bindingRun) versionUnsupported(ctx context.Context, r *rec) {
	res := b.getUnknown(ctx, callOpts{version: new("9.9")})
	r.expectSame(b.t.binding, res, a2a.CodeVersionNotSupported)
	b.probes["GetTask with A2A-Version 9.9"] = outcomeKey(res)
}

func (b *bindingRun) versionPatch(ctx context.Context, r *rec) {
	res := b.getUnknown(ctx, callOpts{version: new("1.0.1")})
	r.saw(res)
	b.probes["GetTask with A2A-Version 1.0.1"] = outcomeKey(res)
	if r.incomplete(res) {
		return
	}
	switch {
	case processed(res):
		r.same().pass("served as 1.0 (%s)", describeError(res.err))
	case res.err.is(a2a.CodeVersionNotSupported):
		r.differs("Parley compares Major.Minor only").fail("refused: the server considered the patch number (%s)", describeError(res.err))
	default:
		r.fail("got %s; want the request processed as 1.0 (TaskNotFoundError)", res.outcome())
	}
}

func (b *bindingRun) versionQuery(ctx context.Context, r *rec) {
	if b.t.binding == a2a.BindingGRPC {
		r.na("gRPC has no request parameters: service parameters travel only as metadata (§10.2)")
		return
	}
	res := b.getUnknown(ctx, callOpts{version: new(""), query: "A2A-Version=1.0"})
	switch {
	case !r.gradable(res):
	case processed(res):
		r.same().na("read: processed as 1.0")
	default:
		r.differs("Parley reads the query parameter").na("not read: %s", res.outcome())
	}
}

func (b *bindingRun) versionErrorDetails(ctx context.Context, r *rec) {
	res := b.getUnknown(ctx, callOpts{version: new("9.9")})
	r.saw(res)
	switch {
	case res.failed() || !res.err.is(a2a.CodeVersionNotSupported):
		r.skip("no VersionNotSupportedError to look at")
	case res.err.Metadata["supportedVersions"] != "":
		r.same().na("ErrorInfo.metadata.supportedVersions = %q", res.err.Metadata["supportedVersions"])
	default:
		r.differs("Parley lists them in ErrorInfo.metadata.supportedVersions").na("not in ErrorInfo metadata (message: %q)", abridge(res.err.Message, 120))
	}
}
