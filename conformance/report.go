package conformance

import (
	"errors"
	"io"

	"parley.dev/parley/internal/check"
)

// Status grades one check.
type Status string

// The statuses, from worst to best.
const (
	Fail          Status = "FAIL" // a MUST (or REQUIRED) was not met
	Warn          Status = "WARN" // a SHOULD was not met
	Pass          Status = "PASS" // the requirement was met
	NotApplicable Status = "N/A"  // no requirement applies (the specification is silent, or says MAY); Detail says what was seen
	Skip          Status = "SKIP" // the check did not run; Detail says why
)

// Result is the outcome of one check on one interface of the agent.
type Result struct {
	// ID names the requirement checked, e.g. "errors.unknown-task.get";
	// stable across runs. A check that runs on each binding has one
	// result per binding, with the same ID.
	ID string
	// Binding is the protocolBinding of the interface checked; "" for the
	// checks of the agent card and those comparing bindings.
	Binding string
	// Operation is the A2A operation exercised, e.g. "GetTask" (spec §3.1);
	// "" when none is.
	Operation string
	// Title says what is checked.
	Title string
	// Level is the strength of the requirement: "MUST", "SHOULD", "MAY",
	// or "SPEC SILENT" where the specification leaves the behaviour open.
	Level string
	// Section cites the specification, e.g. "§3.1.4, §5.4".
	Section string
	// Requires is what the specification requires, quoted or closely
	// paraphrased.
	Requires string
	// Status grades the agent against the requirement.
	Status Status
	// Detail explains the status: what was wrong, what was seen, or why
	// the check was skipped.
	Detail string
	// Sent and Received are the request and the response, abridged.
	Sent, Received string
}

func newResult(r check.Result) Result {
	return Result{ID: r.ID, Binding: r.Binding, Operation: r.Operation, Title: r.Title, Level: r.Level,
		Section: r.Section, Requires: r.Requires, Status: Status(r.Verdict), Detail: r.Finding,
		Sent: r.Sent, Received: r.Received}
}

// Report is the outcome of a Run, which alone makes one.
type Report struct {
	rep     *check.Report
	results []Result
}

// Agent is the name on the agent card.
func (r *Report) Agent() string { return r.rep.Agent }

// CardURL is where the agent card was fetched (spec §8.2).
func (r *Report) CardURL() string { return r.rep.CardURL }

// ConformanceAgent reports whether the agent speaks a behaviour contract
// (Parley's conformance agent's words, or ACTS's tck-* prefixes: see
// Contract), so that the checks needing a known behaviour ran.
func (r *Report) ConformanceAgent() bool { return r.rep.Conformance }

// Contract is the behaviour contract the agent was driven through
// (ContractConformance or ContractACTS), or "" when it spoke none.
func (r *Report) Contract() string { return r.rep.Contract }

// Results are the checks in the order they completed: the agent card's,
// then each interface's, binding by binding, then those comparing the
// bindings. The slice is the caller's.
func (r *Report) Results() []Result {
	return append([]Result(nil), r.results...)
}

// Count is the number of results with status s.
func (r *Report) Count(s Status) int {
	n := 0
	for _, x := range r.results {
		if x.Status == s {
			n++
		}
	}
	return n
}

// Verdict sums the report up: Fail when a MUST failed, else Warn when a
// SHOULD was not met, else Pass.
func (r *Report) Verdict() Status {
	switch {
	case r.rep.Counts.Fail > 0:
		return Fail
	case r.rep.Counts.Warn > 0:
		return Warn
	}
	return Pass
}

// VerdictLine is the last line of the text report: the verdict ("PASS
// with warnings" for Warn), the count of each status and how long the run
// took.
func (r *Report) VerdictLine() string { return r.rep.VerdictLine() }

// TextMode is how much of the report WriteText writes.
type TextMode int

const (
	// Full writes the agent, its interfaces, and every result with what
	// was sent, what came back and the requirement; then a summary and
	// the verdict line.
	Full TextMode = iota
	// Short writes what needs attention, in at most 60 lines: each FAIL
	// and WARN with its section and one line of why, one line per reason
	// checks were skipped, and the verdict line.
	Short
	// VerdictOnly writes the verdict line alone.
	VerdictOnly
)

// TextOptions configure WriteText.
type TextOptions struct {
	// Mode is how much is written; the zero value writes everything.
	Mode TextMode
	// Color paints the statuses with ANSI colours, for a terminal.
	Color bool
}

// WriteText writes the report for people, as `parley check` prints it.
func (r *Report) WriteText(w io.Writer, o TextOptions) error {
	mode := check.TextFull
	switch o.Mode {
	case Full:
	case Short:
		mode = check.TextShort
	case VerdictOnly:
		mode = check.TextVerdict
	default:
		return errors.New("conformance: unknown TextMode")
	}
	return r.rep.WriteText(w, check.TextOptions{Color: o.Color, Mode: mode})
}

// WriteJSON writes the report as one JSON document, as `parley check
// --json` prints it.
func (r *Report) WriteJSON(w io.Writer) error { return r.rep.WriteJSON(w) }
