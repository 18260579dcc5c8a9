package check

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// TextOptions configure WriteText.
type TextOptions struct {
	// Color uses ANSI colours for verdicts (for a terminal).
	Color bool
	// Brief prints the details (sent, received, requirement) only for
	// results that are not PASS, and folds the SKIP results of each
	// heading into one line per reason, after the heading's other results.
	Brief bool
}

const (
	ansiReset  = "\x1b[0m"
	ansiBold   = "\x1b[1m"
	ansiDim    = "\x1b[2m"
	ansiRed    = "\x1b[31m"
	ansiGreen  = "\x1b[32m"
	ansiYellow = "\x1b[33m"
	ansiCyan   = "\x1b[36m"
)

// paint colours s when colours are on.
func (o TextOptions) paint(code, s string) string {
	if !o.Color {
		return s
	}
	return code + s + ansiReset
}

// verdict renders a verdict in a column of four, in its colour.
func (o TextOptions) verdict(v Verdict) string {
	s := fmt.Sprintf("%-4s", string(v))
	switch v {
	case Fail:
		return o.paint(ansiBold+ansiRed, s)
	case Warn:
		return o.paint(ansiYellow, s)
	case Pass:
		return o.paint(ansiGreen, s)
	default:
		return o.paint(ansiDim, s)
	}
}

// textWriter writes a text report; the first write error sticks.
type textWriter struct {
	w   io.Writer
	o   TextOptions
	err error
}

// p writes formatted text, unless an earlier write failed.
func (t *textWriter) p(format string, args ...any) {
	if t.err == nil {
		_, t.err = fmt.Fprintf(t.w, format, args...)
	}
}

// WriteText writes the report for people: the agent, the interfaces, then
// every result grouped by binding, then a summary.
func (r *Report) WriteText(w io.Writer, o TextOptions) error {
	t := &textWriter{w: w, o: o}
	r.writeHeader(t)
	group := "\x00"
	var skipped []Result // the current heading's SKIP results, in a brief report
	for _, res := range r.Results {
		if g := resultGroup(res); g != group {
			writeSkips(t, skipped)
			skipped = skipped[:0]
			group = g
			t.p("\n%s\n", o.paint(ansiBold+ansiCyan, "== "+g+" =="))
		}
		if o.Brief && res.Verdict == Skip {
			skipped = append(skipped, res)
			continue
		}
		writeResult(t, res)
	}
	writeSkips(t, skipped)
	r.writeSummary(t)
	return t.err
}

// briefSkipIDs is the most check ids a folded SKIP line names; a larger
// group gives only its count.
const briefSkipIDs = 3

// writeSkips writes the SKIP results of one heading for a brief report:
// one line per reason, in the order the reasons first appear, with the
// number of checks (and their ids when there are few).
func writeSkips(t *textWriter, skipped []Result) {
	var reasons []string
	byReason := map[string][]string{}
	for _, res := range skipped {
		if _, ok := byReason[res.Finding]; !ok {
			reasons = append(reasons, res.Finding)
		}
		byReason[res.Finding] = append(byReason[res.Finding], res.ID)
	}
	for _, why := range reasons {
		ids := byReason[why]
		n := fmt.Sprintf("%d checks", len(ids))
		if len(ids) == 1 {
			n = "1 check"
		}
		if len(ids) <= briefSkipIDs {
			n += " (" + strings.Join(ids, ", ") + ")"
		}
		if why == "" {
			why = "no reason given"
		}
		t.p("%s %s: %s\n", t.o.verdict(Skip), n, why)
	}
}

// writeHeader writes the target, the agent and its interfaces, and a key
// to the verdicts.
func (r *Report) writeHeader(t *textWriter) {
	t.p("%s %s\n", t.o.paint(ansiBold, "parley check"), r.Target)
	t.p("  card:    %s\n", r.CardURL)
	if r.Agent != "" {
		t.p("  agent:   %s\n", r.Agent)
	}
	if r.Conformance {
		t.p("  conformance agent: yes (%s): every check runs\n", r.Detected)
	} else if r.Detected != "" {
		t.p("  conformance agent: %s\n", r.Detected)
	}
	for _, in := range r.Bindings {
		state := "checked"
		if !in.Checked {
			state = "not checked: " + in.Reason
		}
		t.p("  interface %-9s %s (A2A %s): %s\n", in.Binding, in.URL, in.Version, state)
	}
	t.p("  verdicts: FAIL = a MUST failed, WARN = a SHOULD not met, PASS, N/A = no requirement applies (observed behaviour in the finding), SKIP = not run\n")
	t.p("  \"Parley:\" notes compare with Parley's own choices (B1–B14, docs/decisions.md); they are not requirements.\n")
}

// resultGroup is the heading a result is listed under: its binding, the
// agent card, or across bindings.
func resultGroup(res Result) string {
	switch {
	case res.Binding != "":
		return res.Binding
	case strings.HasPrefix(res.ID, "equivalence."):
		return "across bindings"
	}
	return "agent card"
}

// writeResult writes one result: a line with its verdict, then its details
// (only for results other than PASS in a brief report, which folds SKIP
// results with writeSkips instead).
func writeResult(t *textWriter, res Result) {
	row := res.Row
	if row == "" {
		row = "-"
	}
	t.p("%s %-4s %-45s %s", t.o.verdict(res.Verdict), row, res.ID, res.Title)
	if res.Operation != "" {
		t.p(" [%s]", res.Operation)
	}
	t.p("\n")
	if t.o.Brief && res.Verdict == Pass {
		return
	}
	const ind = "       "
	if res.Sent != "" {
		t.p("%s%s %s\n", ind, t.o.paint(ansiDim, "sent:    "), res.Sent)
	}
	if res.Received != "" {
		t.p("%s%s %s\n", ind, t.o.paint(ansiDim, "received:"), res.Received)
	}
	t.p("%s%s %s %s: %s\n", ind, t.o.paint(ansiDim, "spec:    "), res.Level, res.Section, res.Requires)
	if res.Finding != "" {
		t.p("%s%s %s: %s\n", ind, t.o.paint(ansiDim, "verdict: "), res.Verdict.Describe(), res.Finding)
	}
	if res.Parley != "" {
		t.p("%s%s %s\n", ind, t.o.paint(ansiDim, "Parley:  "), res.Parley)
	}
}

// writeSummary writes the counts, then the MUST failures, the SHOULDs not
// met and the differences from Parley's choices.
func (r *Report) writeSummary(t *textWriter) {
	c := r.Counts
	t.p("\n%s %d MUST failed, %d SHOULD not met, %d passed, %d not applicable, %d skipped (%s)\n",
		t.o.paint(ansiBold, "summary:"), c.Fail, c.Warn, c.Pass, c.NA, c.Skip, r.Duration)
	if c.Fail > 0 {
		t.p("%s\n", t.o.paint(ansiBold+ansiRed, "MUST failures:"))
		r.writeVerdicts(t, Fail)
	}
	if c.Warn > 0 {
		t.p("%s\n", t.o.paint(ansiYellow, "SHOULD not met:"))
		r.writeVerdicts(t, Warn)
	}
	var diffs []string
	for _, res := range r.Results {
		if strings.HasPrefix(res.Parley, "differs") {
			diffs = append(diffs, fmt.Sprintf("  %s %s %s: %s", bindingLabel(res.Binding), res.Row, res.ID, strings.TrimPrefix(res.Parley, "differs: ")))
		}
	}
	if len(diffs) > 0 {
		t.p("differs from Parley's choices (not requirements):\n%s\n", strings.Join(diffs, "\n"))
	}
}

// writeVerdicts lists the results with verdict v, one line each.
func (r *Report) writeVerdicts(t *textWriter, v Verdict) {
	for _, res := range r.Results {
		if res.Verdict == v {
			t.p("  %s %s %s: %s\n", bindingLabel(res.Binding), res.ID, res.Section, res.Finding)
		}
	}
}

// bindingLabel names a result's binding in the summary.
func bindingLabel(b string) string {
	if b == "" {
		return "[card]"
	}
	return "[" + b + "]"
}

// WriteJSON writes the report as one JSON document on one line.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}
