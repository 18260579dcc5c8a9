package check

import (
	"fmt"
	"net/http"

	"parley.dev/parley/a2a"
)

// gradeError grades a response that must be the error want: the right
// error, mapped as §5.4 says for the binding, with the details the
// binding's error format requires.
func gradeError(binding string, res *result, want a2a.Code) (Verdict, string) {
	switch {
	case res.ok():
		return Fail, fmt.Sprintf("the call succeeded; want %s", want.Name())
	case res.broken != "":
		return Fail, fmt.Sprintf("%s; want %s", res.broken, want.Name())
	case !res.err.is(want):
		return Fail, fmt.Sprintf("got %s; want %s", describeError(res.err), want.Name())
	}
	switch binding {
	case a2a.BindingGRPC:
		return gradeGRPCError(res.err, want)
	case a2a.BindingHTTPJSON:
		return gradeRESTError(res.err, want)
	}
	return gradeJSONRPCError(res.err, want)
}

// gradeGRPCError grades the form of an error identified as want on gRPC:
// the status of §5.4 and, for A2A errors, an ErrorInfo in the status
// details (§10.6).
func gradeGRPCError(e *wireError, want a2a.Code) (Verdict, string) {
	got := describeError(e)
	_, status := want.GRPCStatus()
	switch {
	case e.Shape != "grpc":
		return Fail, fmt.Sprintf("%s, but not as a gRPC status (grpc-status, §10.6)", got)
	case e.Status != status:
		return Fail, fmt.Sprintf("%s, but §5.4 maps %s to gRPC %s", got, want.Name(), status)
	case !e.DetailsOK:
		return Fail, fmt.Sprintf("%s, but grpc-status-details-bin is not a google.rpc.Status matching grpc-status (§10.6)", got)
	case !want.IsA2A():
		return Pass, got
	}
	return gradeErrorInfo(e, want, got, Fail,
		", but the status details have no google.rpc.ErrorInfo (MUST for A2A errors on gRPC, §10.6)", " (§10.6)")
}

// gradeRESTError grades the form of an error identified as want on
// HTTP+JSON: for A2A errors, the HTTP status of §5.4 and a google.rpc.Status
// body with an ErrorInfo (§11.6).
func gradeRESTError(e *wireError, want a2a.Code) (Verdict, string) {
	got := describeError(e)
	switch {
	case !want.IsA2A():
		return Pass, got
	case e.HTTPStatus != want.HTTPStatus():
		return Fail, fmt.Sprintf("%s, but §5.4 maps %s to HTTP %d", got, want.Name(), want.HTTPStatus())
	case e.Shape != "google.rpc.Status":
		return Fail, fmt.Sprintf("%s, but the body is not {\"error\":{code,status,message,details}} (google.rpc.Status, §11.6)", got)
	}
	return gradeErrorInfo(e, want, got, Fail,
		", but details has no google.rpc.ErrorInfo (MUST for A2A errors on HTTP+JSON, §11.6)", " (§11.6)")
}

// gradeJSONRPCError grades the form of an error identified as want on
// JSON-RPC: error.data, when present, is a list of typed details
// (§3.3.2, §9.5); for A2A errors an ErrorInfo SHOULD be among them.
func gradeJSONRPCError(e *wireError, want a2a.Code) (Verdict, string) {
	got := describeError(e)
	if !e.DetailsOK {
		return Fail, fmt.Sprintf("%s, but error.data is not an array of objects each with @type (§3.3.2, §9.5)", got)
	}
	if e.HTTPStatus != http.StatusOK && e.Code != a2a.CodeUnauthenticated {
		got += fmt.Sprintf(" in HTTP %d", e.HTTPStatus)
	}
	if !want.IsA2A() {
		return Pass, got
	}
	return gradeErrorInfo(e, want, got, Warn,
		", without a google.rpc.ErrorInfo in error.data (well-known detail types SHOULD be used, §3.3.2)", "")
}

// gradeErrorInfo grades the google.rpc.ErrorInfo of an A2A error already
// described as got: missing (finding got+missing) or naming another reason
// or domain (the finding ends with suffix), the error gets verdict v.
func gradeErrorInfo(e *wireError, want a2a.Code, got string, v Verdict, missing, suffix string) (Verdict, string) {
	switch {
	case !e.HasInfo:
		return v, got + missing
	case e.Reason != want.Reason() || e.Domain != a2a.DomainA2A:
		return v, fmt.Sprintf("%s, but ErrorInfo reason %q domain %q; want %q and %q%s", got, e.Reason, e.Domain, want.Reason(), a2a.DomainA2A, suffix)
	}
	return Pass, got
}

// expect grades r as gradeError says and records it.
func (r *rec) expect(binding string, res *result, want a2a.Code) bool {
	return r.expectThen(binding, res, want, nil)
}

// expectSame is expect for a B row where the wanted error is also
// Parley's choice: a pass is noted "same".
func (r *rec) expectSame(binding string, res *result, want a2a.Code) bool {
	return r.expectThen(binding, res, want, func(v *Verdict, _ *string) {
		if *v == Pass || *v == Warn {
			r.same()
		}
	})
}

// expectThen is expect with a last look at (and a chance to change) the
// verdict and finding before the result is recorded: a result cannot
// change once recorded.
func (r *rec) expectThen(binding string, res *result, want a2a.Code, adjust func(v *Verdict, finding *string)) bool {
	r.saw(res)
	if r.incomplete(res) {
		return false
	}
	v, msg := gradeError(binding, res, want)
	if adjust != nil {
		adjust(&v, &msg)
	}
	r.finish(v, "%s", msg)
	return v == Pass || v == Warn
}

// outcomeKey is a short description of a result for the cross-binding
// comparison.
func outcomeKey(res *result) string {
	switch {
	case res == nil:
		return ""
	case res.failed():
		return ""
	case res.err != nil:
		if res.err.Known {
			return res.err.Code.Name()
		}
		return "unidentified error"
	case res.broken != "":
		return "unreadable response"
	}
	return "success"
}
