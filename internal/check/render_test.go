package check_test

import (
	"bytes"
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"parley.dev/parley/internal/check"
	"parley.dev/parley/internal/testkit"
)

// foldedSkip is a SKIP line of a brief report: a count, maybe the check
// ids, and the reason.
var foldedSkip = regexp.MustCompile(`^SKIP (\d+) checks?(?: \(([^)]*)\))?: (.+)$`)

// TestBriefFoldsSkips runs the checks against the echo agent, where every
// check needing Parley's conformance agent is skipped, and compares the
// brief report with the full one: the same PASS, FAIL, WARN and N/A lines
// in the same order, and the SKIP results folded into one line per reason
// and heading, accounting for every skipped check.
func TestBriefFoldsSkips(t *testing.T) {
	t.Parallel()
	s := testkit.StartServer(t, &testkit.Options{Kind: "echo", Quiet: true})
	rep, err := check.Run(context.Background(), check.Options{URL: s.URL})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Conformance || rep.Counts.Skip < 10 {
		t.Fatalf("against the echo agent: conformance %v, %d skipped; want many checks skipped", rep.Conformance, rep.Counts.Skip)
	}
	var full, brief bytes.Buffer
	if err := rep.WriteText(&full, check.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteText(&brief, check.TextOptions{Brief: true}); err != nil {
		t.Fatal(err)
	}

	// verdictLines are the lines of a report that start with a verdict
	// other than SKIP, and the headings.
	verdictLines := func(text string) []string {
		var out []string
		for _, l := range strings.Split(text, "\n") {
			if strings.HasPrefix(l, "== ") || strings.HasPrefix(l, "PASS ") || strings.HasPrefix(l, "FAIL ") ||
				strings.HasPrefix(l, "WARN ") || strings.HasPrefix(l, "N/A ") {
				out = append(out, l)
			}
		}
		return out
	}
	if f, b := verdictLines(full.String()), verdictLines(brief.String()); strings.Join(f, "\n") != strings.Join(b, "\n") {
		t.Errorf("the brief report's verdict lines differ from the full report's:\nfull:\n%s\nbrief:\n%s", strings.Join(f, "\n"), strings.Join(b, "\n"))
	}

	fullSkips := strings.Count("\n"+full.String(), "\nSKIP ")
	if fullSkips != rep.Counts.Skip {
		t.Errorf("the full report has %d SKIP lines, want one per skipped check (%d)", fullSkips, rep.Counts.Skip)
	}
	// Each heading names each reason once; the counts add up.
	total, conformanceLines := 0, 0
	seen := map[string]bool{}
	heading := ""
	for _, l := range strings.Split(brief.String(), "\n") {
		if strings.HasPrefix(l, "== ") {
			heading = l
			continue
		}
		if !strings.HasPrefix(l, "SKIP") {
			continue
		}
		m := foldedSkip.FindStringSubmatch(l)
		if m == nil {
			t.Errorf("brief SKIP line %q is not of the form \"SKIP N checks: reason\"", l)
			continue
		}
		n, _ := strconv.Atoi(m[1])
		total += n
		if key := heading + "\x00" + m[3]; seen[key] {
			t.Errorf("reason %q listed twice under %s", m[3], heading)
		} else {
			seen[key] = true
		}
		if strings.HasPrefix(m[3], "needs Parley's conformance agent") {
			conformanceLines++
			if n < 10 {
				t.Errorf("%s: %d checks need the conformance agent, want them folded together", heading, n)
			}
		}
	}
	if total != rep.Counts.Skip {
		t.Errorf("the brief SKIP lines count %d checks, want %d", total, rep.Counts.Skip)
	}
	if checked := countChecked(rep); conformanceLines != checked {
		t.Errorf("%d brief lines for the conformance agent, want one per checked interface (%d)", conformanceLines, checked)
	}
	if fl, bl := strings.Count(full.String(), "\n"), strings.Count(brief.String(), "\n"); bl*2 > fl {
		t.Errorf("brief report has %d lines, the full one %d: want well under half", bl, fl)
	}
	if !strings.Contains(brief.String(), "skipped (") {
		t.Errorf("the brief report lost its summary:\n%s", brief.String())
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

// TestBriefSkipLine pins the shape of a folded SKIP line: a single check
// is named, a few are listed, many are only counted, and reasons keep the
// order they first appear in.
func TestBriefSkipLine(t *testing.T) {
	t.Parallel()
	rep := &check.Report{Target: "http://x", Results: []check.Result{
		{ID: "a.one", Binding: "JSONRPC", Verdict: check.Skip, Finding: "no stream"},
		{ID: "a.two", Binding: "JSONRPC", Verdict: check.Pass, Title: "passes"},
		{ID: "a.three", Binding: "JSONRPC", Verdict: check.Skip, Finding: "needs X"},
		{ID: "a.four", Binding: "JSONRPC", Verdict: check.Skip, Finding: "needs X"},
		{ID: "a.five", Binding: "JSONRPC", Verdict: check.Skip, Finding: "needs X"},
		{ID: "a.six", Binding: "JSONRPC", Verdict: check.Skip, Finding: "needs X"},
		{ID: "b.one", Binding: "GRPC", Verdict: check.Skip, Finding: "no stream"},
		{ID: "b.two", Binding: "GRPC", Verdict: check.Skip, Finding: "no stream"},
	}}
	var out bytes.Buffer
	if err := rep.WriteText(&out, check.TextOptions{Brief: true}); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	want := "\n== JSONRPC ==\n" +
		"PASS -    a.two                                         passes\n" +
		"SKIP 1 check (a.one): no stream\n" +
		"SKIP 4 checks: needs X\n" +
		"\n== GRPC ==\n" +
		"SKIP 2 checks (b.one, b.two): no stream\n"
	if !strings.Contains(text, want) {
		t.Errorf("WriteText(brief) =\n%s\nwant it to contain\n%s", text, want)
	}
}
