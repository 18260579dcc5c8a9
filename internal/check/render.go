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
	// Mode chooses how much of the report is written; the zero value
	// writes all of it.
	Mode TextMode
}

// TextMode is how much of a report WriteText writes.
type TextMode int

const (
	// TextFull writes every result with what was sent, what came back and
	// the requirement, then the summary and the verdict.
	TextFull TextMode = iota
	// TextShort writes what needs attention: a short header, each FAIL and
	// WARN (its check, level, section and one line of why), one line per
	// reason for the SKIP results, and the verdict line last; never more
	// than ShortMaxLines lines.
	TextShort
	// TextVerdict writes the verdict line alone.
	TextVerdict
)

// ShortMaxLines is the most lines a TextShort report has.
const ShortMaxLines = 60

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

// WriteText writes the report for people. In full (the default mode):
// the agent, the interfaces, then every result grouped by binding, then a
// summary; every mode ends with the verdict line (see TextMode).
func (r *Report) WriteText(w io.Writer, o TextOptions) error {
	t := &textWriter{w: w, o: o}
	switch o.Mode {
	case TextVerdict:
	case TextShort:
		r.writeShort(t)
	default:
		r.writeHeader(t)
		group := "\x00"
		for _, res := range r.Results {
			if g := resultGroup(res); g != group {
				group = g
				t.p("\n%s\n", o.paint(ansiBold+ansiCyan, "== "+g+" =="))
			}
			writeResult(t, res)
		}
		r.writeSummary(t)
	}
	r.writeVerdictLine(t)
	return t.err
}

// VerdictLine is the last line of every text report: the verdict (FAIL
// when a MUST failed, PASS with warnings when only SHOULDs were not met,
// PASS otherwise), then the counts and how long the run took.
func (r *Report) VerdictLine() string {
	return r.verdictLine(TextOptions{})
}

func (r *Report) verdictLine(o TextOptions) string {
	c := r.Counts
	v := o.paint(ansiBold+ansiGreen, "PASS")
	switch {
	case c.Fail > 0:
		v = o.paint(ansiBold+ansiRed, "FAIL")
	case c.Warn > 0:
		v = o.paint(ansiBold+ansiYellow, "PASS with warnings")
	}
	d := ""
	if r.Duration != "" {
		d = "; " + r.Duration
	}
	return fmt.Sprintf("verdict: %s (%d MUST failed, %d SHOULD not met, %d passed, %d not applicable, %d skipped%s)",
		v, c.Fail, c.Warn, c.Pass, c.NA, c.Skip, d)
}

// writeVerdictLine writes the verdict line.
func (r *Report) writeVerdictLine(t *textWriter) {
	t.p("%s\n", r.verdictLine(t.o))
}

// shortInterfaces is the most interfaces a short report's header lists.
const shortInterfaces = 6

// whyWidth is the most characters of a finding a short report shows.
const whyWidth = 200

// writeShort writes a short report, all but its verdict line: the target
// and agent, the interfaces, then the FAIL and WARN results, then the
// SKIP reasons, as many as fit in ShortMaxLines with a line saying how
// many were left out.
func (r *Report) writeShort(t *textWriter) {
	var head []string
	head = append(head, t.o.paint(ansiBold, "parley check")+" "+r.Target)
	agent := r.Agent
	if agent == "" {
		agent = "(no name)"
	}
	switch {
	case r.Conformance:
		agent += " · behaviour contract: " + r.Contract + ", every check runs"
	case r.Detected != "":
		agent += " · behaviour contract: " + oneLine(r.Detected, whyWidth)
	}
	head = append(head, "  agent: "+agent)
	for i, in := range r.Bindings {
		if i == shortInterfaces-1 && len(r.Bindings) > shortInterfaces {
			head = append(head, fmt.Sprintf("  … %d more interfaces (--verbose lists them)", len(r.Bindings)-i))
			break
		}
		state := "checked"
		if !in.Checked {
			state = "not checked: " + oneLine(in.Reason, whyWidth)
		}
		head = append(head, fmt.Sprintf("  interface %-9s %s (A2A %s): %s", in.Binding, in.URL, in.Version, state))
	}

	// An entry is a FAIL or WARN result (two lines) or a SKIP reason
	// (one line, n results).
	type entry struct {
		lines []string
		v     Verdict
		n     int
	}
	var entries []entry
	for _, v := range []Verdict{Fail, Warn} {
		for _, res := range r.Results {
			if res.Verdict != v {
				continue
			}
			first := fmt.Sprintf("%s %s %s %s: %s", t.o.verdict(v), bindingLabel(res.Binding), res.ID,
				strings.TrimSpace(res.Level+" "+res.Section), res.Title)
			why := "       " + t.o.paint(ansiDim, "why:") + " " + oneLine(res.Finding, whyWidth)
			entries = append(entries, entry{[]string{first, why}, v, 1})
		}
	}
	for _, s := range foldSkips(r.Results) {
		entries = append(entries, entry{[]string{t.o.verdict(Skip) + " " + s.line}, Skip, s.n})
	}

	for _, l := range head {
		t.p("%s\n", l)
	}
	if len(entries) == 0 {
		t.p("\n")
		return
	}
	// Room for the entries: all but the header, the blank lines around
	// the entries and the verdict line.
	room := ShortMaxLines - len(head) - 3
	need := 0
	for _, e := range entries {
		need += len(e.lines)
	}
	if need > room {
		room-- // for the line saying what was left out
	}
	t.p("\n")
	left := map[Verdict]int{}
	used := 0
	for i, e := range entries {
		if used+len(e.lines) > room {
			for _, e := range entries[i:] {
				left[e.v] += e.n
			}
			break
		}
		used += len(e.lines)
		for _, l := range e.lines {
			t.p("%s\n", l)
		}
	}
	if len(left) > 0 {
		var parts []string
		total := 0
		for _, v := range []Verdict{Fail, Warn, Skip} {
			if left[v] > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", left[v], v))
				total += left[v]
			}
		}
		t.p("… %d more (%s; --verbose shows all)\n", total, strings.Join(parts, ", "))
	}
	t.p("\n")
}

// oneLine returns s on one line, cut to at most width characters.
func oneLine(s string, width int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > width {
		s = string(r[:width-1]) + "…"
	}
	return s
}

// skipIDs is the most check ids a folded SKIP line names; a larger group
// gives only its count.
const skipIDs = 3

// foldedSkip is one line of a short report for the SKIP results that
// share a reason.
type foldedSkip struct {
	line string
	n    int
}

// foldSkips folds the SKIP results into one line per reason, across
// bindings, in the order the reasons first appear: the number of checks
// (and their ids when there are few) and the reason.
func foldSkips(results []Result) []foldedSkip {
	var reasons []string
	byReason := map[string][]string{}
	for _, res := range results {
		if res.Verdict != Skip {
			continue
		}
		if _, ok := byReason[res.Finding]; !ok {
			reasons = append(reasons, res.Finding)
		}
		id := res.ID
		if res.Binding != "" {
			id += " " + bindingLabel(res.Binding)
		}
		byReason[res.Finding] = append(byReason[res.Finding], id)
	}
	var out []foldedSkip
	for _, why := range reasons {
		ids := byReason[why]
		n := fmt.Sprintf("%d checks", len(ids))
		if len(ids) == 1 {
			n = "1 check"
		}
		if len(ids) <= skipIDs {
			n += " (" + strings.Join(ids, ", ") + ")"
		}
		if why == "" {
			why = "no reason given"
		}
		out = append(out, foldedSkip{n + ": " + oneLine(why, whyWidth), len(ids)})
	}
	return out
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
		t.p("  behaviour contract: %s (%s): every check runs\n", r.Contract, r.Detected)
	} else if r.Detected != "" {
		t.p("  behaviour contract: %s\n", r.Detected)
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

// writeResult writes one result: a line with its verdict, then its
// details.
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
