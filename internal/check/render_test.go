package check_test

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"parley.dev/parley/internal/check"
	"parley.dev/parley/internal/testkit"
)

// foldedSkip is a SKIP line of a short report: a count, maybe the check
// ids, and the reason.
var foldedSkip = regexp.MustCompile(`^SKIP (\d+) checks?(?: \(([^)]*)\))?: (.+)$`)

// reportLines splits a text report into lines, without the empty one after
// the last newline.
func reportLines(s string) []string {
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// TestShortFoldsSkips runs the checks against the echo agent, where every
// check needing Parley's conformance agent is skipped, and compares the
// short report with the full one: the full report has a line for every
// result, the short one no PASS or N/A line, the SKIP results folded into
// one line per reason across bindings, accounting for every skipped check,
// and both end with the same verdict line.
func TestShortFoldsSkips(t *testing.T) {
	t.Parallel()
	s := testkit.StartServer(t, &testkit.Options{Kind: "echo", Quiet: true})
	rep, err := check.Run(context.Background(), check.Options{URL: s.URL})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Conformance || rep.Counts.Skip < 10 {
		t.Fatalf("against the echo agent: conformance %v, %d skipped; want many checks skipped", rep.Conformance, rep.Counts.Skip)
	}
	var full, short bytes.Buffer
	if err := rep.WriteText(&full, check.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteText(&short, check.TextOptions{Mode: check.TextShort}); err != nil {
		t.Fatal(err)
	}
	fl, sl := reportLines(full.String()), reportLines(short.String())

	fullSkips := strings.Count("\n"+full.String(), "\nSKIP ")
	if fullSkips != rep.Counts.Skip {
		t.Errorf("the full report has %d SKIP lines, want one per skipped check (%d)", fullSkips, rep.Counts.Skip)
	}
	if got := strings.Count("\n"+full.String(), "\nPASS "); got != rep.Counts.Pass {
		t.Errorf("the full report has %d PASS lines, want %d", got, rep.Counts.Pass)
	}
	if len(sl) > check.ShortMaxLines {
		t.Errorf("the short report has %d lines, want at most %d", len(sl), check.ShortMaxLines)
	}
	if fl[len(fl)-1] != sl[len(sl)-1] || fl[len(fl)-1] != rep.VerdictLine() || !strings.HasPrefix(rep.VerdictLine(), "verdict: PASS (0 MUST failed") {
		t.Errorf("last lines: full %q, short %q; want both the verdict line %q", fl[len(fl)-1], sl[len(sl)-1], rep.VerdictLine())
	}

	total, conformanceLines := 0, 0
	seen := map[string]bool{}
	for _, l := range sl {
		if strings.HasPrefix(l, "PASS ") || strings.HasPrefix(l, "N/A ") || strings.HasPrefix(l, "== ") {
			t.Errorf("the short report has %q", l)
		}
		if !strings.HasPrefix(l, "SKIP") {
			continue
		}
		m := foldedSkip.FindStringSubmatch(l)
		if m == nil {
			t.Errorf("short SKIP line %q is not of the form \"SKIP N checks: reason\"", l)
			continue
		}
		n, _ := strconv.Atoi(m[1])
		total += n
		if seen[m[3]] {
			t.Errorf("reason %q listed twice", m[3])
		}
		seen[m[3]] = true
		if strings.HasPrefix(m[3], "needs an agent speaking a behaviour contract") {
			conformanceLines++
			if n < 10*countChecked(rep) {
				t.Errorf("%d checks need the conformance agent, want those of every binding folded together", n)
			}
		}
	}
	if total != rep.Counts.Skip {
		t.Errorf("the short SKIP lines count %d checks, want %d", total, rep.Counts.Skip)
	}
	if conformanceLines != 1 {
		t.Errorf("%d short lines for the conformance agent, want 1", conformanceLines)
	}
	if len(sl)*4 > len(fl) {
		t.Errorf("short report has %d lines, the full one %d: want far fewer", len(sl), len(fl))
	}
}

// countChecked counts the interfaces the checks ran on.
func countChecked(rep *check.Report) int {
	n := 0
	for _, in := range rep.Bindings {
		if in.Checked {
			n++
		}
	}
	return n
}

// TestShortSkipLine pins the shape of a short report: FAIL and WARN first,
// each with its binding, id, level, section and title, and a line of why
// on one line; then the folded SKIP lines (a single check is named, a few
// are listed with their binding, many are only counted; reasons keep the
// order they first appear in); then the verdict.
func TestShortSkipLine(t *testing.T) {
	t.Parallel()
	rep := &check.Report{Target: "http://x", Agent: "x", Duration: "1s", Results: []check.Result{
		{ID: "a.one", Binding: "JSONRPC", Verdict: check.Skip, Finding: "no stream"},
		{ID: "a.two", Binding: "JSONRPC", Verdict: check.Pass, Title: "passes"},
		{ID: "a.three", Binding: "JSONRPC", Verdict: check.Skip, Finding: "needs X"},
		{ID: "a.four", Binding: "JSONRPC", Verdict: check.Skip, Finding: "needs X"},
		{ID: "a.warn", Binding: "JSONRPC", Verdict: check.Warn, Level: "SHOULD", Section: "§9", Title: "should", Finding: "did not"},
		{ID: "a.five", Binding: "JSONRPC", Verdict: check.Skip, Finding: "needs X"},
		{ID: "a.six", Binding: "JSONRPC", Verdict: check.Skip, Finding: "needs X"},
		{ID: "b.one", Binding: "GRPC", Verdict: check.Skip, Finding: "no stream"},
		{ID: "b.fail", Binding: "GRPC", Verdict: check.Fail, Level: "MUST", Section: "§3.1", Title: "must",
			Finding: "refused\nwith   a long\tstory"},
		{ID: "card.x", Verdict: check.NA, Title: "n/a"},
	}, Counts: check.Counts{Fail: 1, Warn: 1, Pass: 1, NA: 1, Skip: 7}}
	var out bytes.Buffer
	if err := rep.WriteText(&out, check.TextOptions{Mode: check.TextShort}); err != nil {
		t.Fatal(err)
	}
	want := "parley check http://x\n" +
		"  agent: x\n" +
		"\n" +
		"FAIL [GRPC] b.fail MUST §3.1: must\n" +
		"       why: refused with a long story\n" +
		"WARN [JSONRPC] a.warn SHOULD §9: should\n" +
		"       why: did not\n" +
		"SKIP 2 checks (a.one [JSONRPC], b.one [GRPC]): no stream\n" +
		"SKIP 4 checks: needs X\n" +
		"\n" +
		"verdict: FAIL (1 MUST failed, 1 SHOULD not met, 1 passed, 1 not applicable, 7 skipped; 1s)\n"
	if out.String() != want {
		t.Errorf("WriteText(short) =\n%s\nwant\n%s", out.String(), want)
	}

	out.Reset()
	if err := rep.WriteText(&out, check.TextOptions{Mode: check.TextVerdict}); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != rep.VerdictLine()+"\n" {
		t.Errorf("WriteText(verdict) = %q", got)
	}
}

// TestShortTruncates gives the short report more failures than fit: it has
// exactly ShortMaxLines lines, lists the first failures in order, and says
// how many of each verdict were left out.
func TestShortTruncates(t *testing.T) {
	t.Parallel()
	rep := &check.Report{Target: "http://x", Agent: "x"}
	for i := range 100 {
		v := check.Fail
		if i%4 == 3 {
			v = check.Warn
		}
		rep.Results = append(rep.Results, check.Result{ID: fmt.Sprintf("c.%03d", i), Verdict: v, Level: "MUST", Section: "§1", Title: "t", Finding: "f"})
	}
	rep.Results = append(rep.Results, check.Result{ID: "s", Verdict: check.Skip, Finding: "why"})
	rep.Counts = check.Counts{Fail: 75, Warn: 25, Skip: 1}
	var out bytes.Buffer
	if err := rep.WriteText(&out, check.TextOptions{Mode: check.TextShort}); err != nil {
		t.Fatal(err)
	}
	l := reportLines(out.String())
	if len(l) != check.ShortMaxLines {
		t.Errorf("%d lines, want %d:\n%s", len(l), check.ShortMaxLines, out.String())
	}
	// 2 header lines, a blank, 27 results of 2 lines, the "more" line, a
	// blank, the verdict: the 75 FAILs come first, 27 shown.
	if l[3] != "FAIL [card] c.000 MUST §1: t" || !strings.HasPrefix(l[len(l)-5], "FAIL [card] c.034 ") {
		t.Errorf("the failures listed are not the first ones, in order:\n%s", out.String())
	}
	if got := l[len(l)-3]; got != "… 74 more (48 FAIL, 25 WARN, 1 SKIP; --verbose shows all)" {
		t.Errorf("the line for what was left out is %q", got)
	}
	if got := l[len(l)-1]; got != rep.VerdictLine() {
		t.Errorf("last line %q, want the verdict line", got)
	}
}
