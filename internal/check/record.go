package check

import "fmt"

// rec is a result being filled in. A check starts one, may set Sent and
// Received, and ends it with one verdict (pass, fail, warn, na, skip):
// the result is recorded at that moment, and later changes to the rec are
// not seen in the report.
type rec struct {
	Result
	done func(*Result)
	sent bool
}

// finish records the result with its verdict; only the first call counts.
func (r *rec) finish(v Verdict, format string, args ...any) {
	if r.sent {
		return
	}
	r.sent = true
	r.Verdict = v
	r.Finding = fmt.Sprintf(format, args...)
	r.done(&r.Result)
}

func (r *rec) pass(format string, args ...any) { r.finish(Pass, format, args...) }
func (r *rec) fail(format string, args ...any) { r.finish(Fail, format, args...) }
func (r *rec) warn(format string, args ...any) { r.finish(Warn, format, args...) }
func (r *rec) na(format string, args ...any)   { r.finish(NA, format, args...) }
func (r *rec) skip(format string, args ...any) { r.finish(Skip, format, args...) }

// same notes that the server made Parley's choice for a B row.
func (r *rec) same() *rec { r.Parley = "same"; return r }

// differs notes how Parley's choice differs from the server's.
func (r *rec) differs(format string, args ...any) *rec {
	r.Parley = "differs: " + fmt.Sprintf(format, args...)
	return r
}

// saw records the exchange of a result as what was sent and received.
func (r *rec) saw(res *result) *rec {
	if res == nil || res.ex == nil {
		return r
	}
	r.Sent = describeRequest(res.ex)
	r.Received = describeResponse(res)
	return r
}

// sawBoth records two exchanges, as "first | second".
func (r *rec) sawBoth(a, b *result) {
	r.Sent = describeRequest(a.ex) + " | " + describeRequest(b.ex)
	r.Received = describeResponse(a) + " | " + describeResponse(b)
}

// needs ends the check as skipped, for the reason why, unless it has what
// it needs (have); it returns have.
func (r *rec) needs(have bool, why string) bool {
	if !have {
		r.skip("%s", why)
	}
	return have
}

// gradable records the exchange of res and reports whether res can be
// graded: a transport failure ends the check as skipped (see incomplete).
func (r *rec) gradable(res *result) bool {
	r.saw(res)
	return !r.incomplete(res)
}

// succeeded is gradable for a call that should succeed: when it failed,
// the check ends failed ("what failed: ..."); it reports whether res is a
// success to grade further.
func (r *rec) succeeded(res *result, what string) bool {
	if !r.gradable(res) {
		return false
	}
	if !res.ok() {
		r.fail("%s failed: %s", what, res.outcome())
		return false
	}
	return true
}

// incomplete ends the check as skipped when res is a transport failure;
// it returns true when it did.
func (r *rec) incomplete(res *result) bool {
	if res.failed() {
		r.saw(res)
		r.skip("could not complete the request (%v): not graded", res.ex.Err)
		return true
	}
	return false
}
