package cli_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// lines splits a command's output into its lines, without the empty one
// after the last newline.
func lines(out string) []string {
	return strings.Split(strings.TrimSuffix(out, "\n"), "\n")
}

// TestCheckOutputModes grades Parley's conformance agent with each text
// mode: the default report fits in 60 lines and ends with the verdict
// line, --verbose names every check with its details, --brief is the
// verdict line alone, and --verbose with --brief is a usage error.
func TestCheckOutputModes(t *testing.T) {
	t.Parallel()
	p := serve(t, "--agent", "conformance", "--store", "memory")
	url := "http://" + p.addr

	short, _ := mustRun(t, 0, "check", url)
	sl := lines(short)
	if len(sl) > 60 {
		t.Errorf("the default report has %d lines, want at most 60:\n%s", len(sl), short)
	}
	last := sl[len(sl)-1]
	if !strings.HasPrefix(last, "verdict: PASS (0 MUST failed, 0 SHOULD not met, ") {
		t.Errorf("the default report ends with %q, want the verdict line:\n%s", last, short)
	}
	// Nothing failed: what is left to say is why checks were skipped.
	contains(t, "default report", short, "behaviour contract: conformance",
		"SKIP 18 checks: the card declares no authentication", "SKIP 15 checks: no --webhook-addr given")
	for _, l := range sl {
		if strings.HasPrefix(l, "PASS ") || strings.HasPrefix(l, "N/A ") || strings.Contains(l, "sent:") {
			t.Errorf("the default report shows a check that needs no attention: %s", l)
		}
	}

	verbose, _ := mustRun(t, 0, "check", url, "--verbose")
	vl := lines(verbose)
	if len(vl) <= 60 || len(vl) <= 5*len(sl) {
		t.Errorf("--verbose has %d lines, the default %d: want it far longer", len(vl), len(sl))
	}
	noDuration := func(s string) string { s, _, _ = strings.Cut(s, ";"); return s }
	if noDuration(vl[len(vl)-1]) != noDuration(last) {
		t.Errorf("--verbose ends with %q, want the verdict line %q (but for the duration)", vl[len(vl)-1], last)
	}
	rep := runCheck(t, 0, url)
	for _, r := range rep.Results {
		if !strings.Contains(verbose, " "+r.ID+" ") {
			t.Errorf("--verbose does not name the check %s", r.ID)
		}
	}
	contains(t, "--verbose", verbose, "== JSONRPC ==", "== GRPC ==", "sent:     POST ", "received: ", "spec:     SPEC SILENT §3.1.2",
		"\nsummary: 0 MUST failed, 0 SHOULD not met")

	brief, _ := mustRun(t, 0, "check", url, "--brief")
	if bl := lines(brief); len(bl) != 1 || !strings.HasPrefix(bl[0], "verdict: PASS (0 MUST failed") {
		t.Errorf("--brief printed %q, want the verdict line alone", brief)
	}

	_, errs := mustRun(t, 2, "check", url, "--brief", "--verbose")
	contains(t, "stderr", errs, "--verbose and --brief")
}

// moreLine is the line of a default report saying how many results did not
// fit.
var moreLine = regexp.MustCompile(`^… (\d+) more \((.*); --verbose shows all\)$`)

// TestCheckOutputFailures grades a server that serves a good card and
// answers every operation with an HTTP 500: the default report lists the
// failures (as many as fit, then how many more), stays within 60 lines,
// ends with a FAIL verdict, and the exit status is 1 in every mode.
func TestCheckOutputFailures(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/.well-known/agent-card.json" {
			base := "http://" + r.Host
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"name":"broken","description":"answers nothing right","version":"1",
				"supportedInterfaces":[{"url":"`+base+`/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.0"},
					{"url":"`+base+`/rest","protocolBinding":"HTTP+JSON","protocolVersion":"1.0"}],
				"capabilities":{"streaming":true},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],
				"skills":[{"id":"s","name":"s","description":"d","tags":["t"]}]}`)
			return
		}
		http.Error(w, "broken", http.StatusInternalServerError)
	}))
	defer srv.Close()
	base := srv.URL

	rep := runCheck(t, 1, base)
	attention := rep.verdicts("FAIL", "WARN")
	if rep.Counts.Fail < 5 {
		rep.dump(t)
		t.Fatalf("against a broken server: %d MUST failed, want many", rep.Counts.Fail)
	}

	out, _ := mustRun(t, 1, "check", base)
	ol := lines(out)
	if len(ol) > 60 {
		t.Errorf("the default report has %d lines, want at most 60:\n%s", len(ol), out)
	}
	if last := ol[len(ol)-1]; !strings.HasPrefix(last, "verdict: FAIL ("+strconv.Itoa(rep.Counts.Fail)+" MUST failed") {
		t.Errorf("the default report ends with %q, want a FAIL verdict", last)
	}
	// Every FAIL and WARN is either listed, with a line of why under it,
	// or counted in the "… N more" line.
	shown, more := 0, 0
	for i, l := range ol {
		if strings.HasPrefix(l, "FAIL ") || strings.HasPrefix(l, "WARN ") {
			shown++
			if i+1 >= len(ol) || !strings.HasPrefix(ol[i+1], "       why: ") {
				t.Errorf("%q has no line of why under it", l)
			}
			if !strings.Contains(l, "§") {
				t.Errorf("%q names no spec section", l)
			}
		}
		if m := moreLine.FindStringSubmatch(l); m != nil {
			for _, part := range strings.Split(m[2], ", ") {
				n, v, _ := strings.Cut(part, " ")
				if v == "FAIL" || v == "WARN" {
					k, _ := strconv.Atoi(n)
					more += k
				}
			}
		}
	}
	if shown == 0 {
		t.Errorf("the default report lists no failure:\n%s", out)
	}
	if shown+more != len(attention) {
		t.Errorf("the default report shows %d FAIL/WARN and counts %d more, want %d in all:\n%s", shown, more, len(attention), out)
	}
	if len(attention) > 25 && more == 0 {
		t.Errorf("%d FAIL/WARN results cannot all fit in 60 lines, yet no \"… N more\" line:\n%s", len(attention), out)
	}
	// The first failure the verbose report gives is the first one listed.
	first := ""
	for _, r := range rep.Results {
		if r.Verdict == "FAIL" {
			first = r.ID
			break
		}
	}
	if !strings.Contains(out, "FAIL ") || !strings.Contains(out, " "+first+" ") {
		t.Errorf("the default report does not list the first failure %s:\n%s", first, out)
	}

	verbose, _ := mustRun(t, 1, "check", base, "--verbose")
	for _, r := range rep.Results {
		if !strings.Contains(verbose, " "+r.ID+" ") {
			t.Errorf("--verbose does not name the check %s", r.ID)
		}
	}
	mustRun(t, 1, "check", base, "--brief")
}
