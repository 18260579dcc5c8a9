package check

import (
	"fmt"
	"net/http"
	"strings"

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
	e := res.err
	got := describeError(e)
	if binding == a2a.BindingGRPC {
		_, status := want.GRPCStatus()
		switch {
		case e.Shape != "grpc":
			return Fail, fmt.Sprintf("%s, but not as a gRPC status (grpc-status, §10.6)", got)
		case e.Status != status:
			return Fail, fmt.Sprintf("%s, but §5.4 maps %s to gRPC %s", got, want.Name(), status)
		case !e.DetailsOK:
			return Fail, fmt.Sprintf("%s, but grpc-status-details-bin is not a google.rpc.Status matching grpc-status (§10.6)", got)
		}
		if want.IsA2A() {
			switch {
			case !e.HasInfo:
				return Fail, fmt.Sprintf("%s, but the status details have no google.rpc.ErrorInfo (MUST for A2A errors on gRPC, §10.6)", got)
			case e.Reason != want.Reason() || e.Domain != a2a.DomainA2A:
				return Fail, fmt.Sprintf("%s, but ErrorInfo reason %q domain %q; want %q and %q (§10.6)", got, e.Reason, e.Domain, want.Reason(), a2a.DomainA2A)
			}
		}
		return Pass, got
	}
	if binding == a2a.BindingHTTPJSON {
		if want.IsA2A() && e.HTTPStatus != want.HTTPStatus() {
			return Fail, fmt.Sprintf("%s, but §5.4 maps %s to HTTP %d", got, want.Name(), want.HTTPStatus())
		}
		if want.IsA2A() {
			switch {
			case e.Shape != "google.rpc.Status":
				return Fail, fmt.Sprintf("%s, but the body is not {\"error\":{code,status,message,details}} (google.rpc.Status, §11.6)", got)
			case !e.HasInfo:
				return Fail, fmt.Sprintf("%s, but details has no google.rpc.ErrorInfo (MUST for A2A errors on HTTP+JSON, §11.6)", got)
			case e.Reason != want.Reason() || e.Domain != a2a.DomainA2A:
				return Fail, fmt.Sprintf("%s, but ErrorInfo reason %q domain %q; want %q and %q (§11.6)", got, e.Reason, e.Domain, want.Reason(), a2a.DomainA2A)
			}
		}
		return Pass, got
	}
	if !e.DetailsOK {
		return Fail, fmt.Sprintf("%s, but error.data is not an array of objects each with @type (§3.3.2, §9.5)", got)
	}
	if e.HTTPStatus != http.StatusOK && e.Code != a2a.CodeUnauthenticated {
		got += fmt.Sprintf(" in HTTP %d", e.HTTPStatus)
	}
	if want.IsA2A() {
		switch {
		case !e.HasInfo:
			return Warn, fmt.Sprintf("%s, without a google.rpc.ErrorInfo in error.data (well-known detail types SHOULD be used, §3.3.2)", got)
		case e.Reason != want.Reason() || e.Domain != a2a.DomainA2A:
			return Warn, fmt.Sprintf("%s, but ErrorInfo reason %q domain %q; want %q and %q", got, e.Reason, e.Domain, want.Reason(), a2a.DomainA2A)
		}
	}
	return Pass, got
}

// expect grades r as gradeError says and records it.
func (r *rec) expect(binding string, res *result, want a2a.Code) bool {
	r.saw(res)
	if r.incomplete(res) {
		return false
	}
	v, msg := gradeError(binding, res, want)
	r.finish(v, "%s", msg)
	return v == Pass || v == Warn
}

// describeError names an error with its wire details.
func describeError(e *wireError) string {
	if e == nil {
		return "no error"
	}
	var parts []string
	if e.Shape == "grpc" {
		parts = append(parts, "gRPC")
		if e.HTTPStatus != 0 {
			parts = append(parts, fmt.Sprintf("HTTP %d", e.HTTPStatus))
		}
	} else if e.JSONRPCCode != 0 {
		parts = append(parts, fmt.Sprintf("code %d", e.JSONRPCCode))
	} else if e.HTTPStatus != 0 {
		parts = append(parts, fmt.Sprintf("HTTP %d", e.HTTPStatus))
	}
	if e.Status != "" {
		parts = append(parts, e.Status)
	}
	if e.Reason != "" {
		parts = append(parts, "reason "+e.Reason)
	}
	name := "an unidentified error"
	if e.Known {
		name = e.Code.Name()
	}
	s := name
	if len(parts) > 0 {
		s += " (" + strings.Join(parts, ", ") + ")"
	}
	if e.Message != "" {
		s += ": " + abridge(e.Message, 100)
	}
	return s
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
