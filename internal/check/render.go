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
	// results that are not PASS.
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

func (o TextOptions) paint(code, s string) string {
	if !o.Color {
		return s
	}
	return code + s + ansiReset
}

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

// WriteText writes the report for people: the agent, the interfaces, then
// every result grouped by binding, then a summary.
func (r *Report) WriteText(w io.Writer, o TextOptions) error {
	ew := &errWriter{w: w}
	p := func(format string, args ...any) { fmt.Fprintf(ew, format, args...) }
	p("%s %s\n", o.paint(ansiBold, "parley check"), r.Target)
	p("  card:    %s\n", r.CardURL)
	if r.Agent != "" {
		p("  agent:   %s\n", r.Agent)
	}
	if r.Conformance {
		p("  conformance agent: yes (%s): every check runs\n", r.Detected)
	} else if r.Detected != "" {
		p("  conformance agent: %s\n", r.Detected)
	}
	for _, in := range r.Bindings {
		state := "checked"
		if !in.Checked {
			state = "not checked: " + in.Reason
		}
		p("  interface %-9s %s (A2A %s): %s\n", in.Binding, in.URL, in.Version, state)
	}
	p("  verdicts: FAIL = a MUST failed, WARN = a SHOULD not met, PASS, N/A = no requirement applies (observed behaviour in the finding), SKIP = not run\n")
	p("  \"Parley:\" notes compare with Parley's own choices (DESIGN B1–B14); they are not requirements.\n")

	group := "\x00"
	for _, res := range r.Results {
		g := res.Binding
		if g == "" {
			g = "card and cross-binding"
			if strings.HasPrefix(res.ID, "equivalence.") {
				g = "across bindings"
			} else {
				g = "agent card"
			}
		}
		if g != group {
			group = g
			p("\n%s\n", o.paint(ansiBold+ansiCyan, "== "+g+" =="))
		}
		row := res.Row
		if row == "" {
			row = "-"
		}
		op := res.Operation
		p("%s %-4s %-45s %s", o.verdict(res.Verdict), row, res.ID, res.Title)
		if op != "" {
			p(" [%s]", op)
		}
		p("\n")
		if o.Brief && res.Verdict == Pass {
			continue
		}
		ind := "       "
		if res.Sent != "" {
			p("%s%s %s\n", ind, o.paint(ansiDim, "sent:    "), res.Sent)
		}
		if res.Received != "" {
			p("%s%s %s\n", ind, o.paint(ansiDim, "received:"), res.Received)
		}
		p("%s%s %s %s: %s\n", ind, o.paint(ansiDim, "spec:    "), res.Level, res.Section, res.Requires)
		if res.Finding != "" {
			p("%s%s %s: %s\n", ind, o.paint(ansiDim, "verdict: "), res.Verdict.Describe(), res.Finding)
		}
		if res.Parley != "" {
			p("%s%s %s\n", ind, o.paint(ansiDim, "Parley:  "), res.Parley)
		}
	}
	c := r.Counts
	p("\n%s %d MUST failed, %d SHOULD not met, %d passed, %d not applicable, %d skipped (%s)\n",
		o.paint(ansiBold, "summary:"), c.Fail, c.Warn, c.Pass, c.NA, c.Skip, r.Duration)
	if c.Fail > 0 {
		p("%s\n", o.paint(ansiBold+ansiRed, "MUST failures:"))
		for _, res := range r.Results {
			if res.Verdict == Fail {
				p("  %s %s %s: %s\n", bindingLabel(res.Binding), res.ID, res.Section, res.Finding)
			}
		}
	}
	if c.Warn > 0 {
		p("%s\n", o.paint(ansiYellow, "SHOULD not met:"))
		for _, res := range r.Results {
			if res.Verdict == Warn {
				p("  %s %s %s: %s\n", bindingLabel(res.Binding), res.ID, res.Section, res.Finding)
			}
		}
	}
	var diffs []string
	for _, res := range r.Results {
		if strings.HasPrefix(res.Parley, "differs") {
			diffs = append(diffs, fmt.Sprintf("  %s %s %s: %s", bindingLabel(res.Binding), res.Row, res.ID, strings.TrimPrefix(res.Parley, "differs: ")))
		}
	}
	if len(diffs) > 0 {
		p("differs from Parley's choices (not requirements):\n%s\n", strings.Join(diffs, "\n"))
	}
	return ew.err
}

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

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}
