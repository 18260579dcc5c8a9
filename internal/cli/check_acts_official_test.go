package cli_test

import (
	"encoding/json"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"parley.dev/parley/internal/acts"
)

// officialContradictions are the official suite's tests whose expectation
// contradicts the specification (docs/acts.md lists each with its
// section): reported failed wherever they run.
var officialContradictions = []string{"CARD-DISC-002", "REST-PD-001", "CLIENT-AUTH-001", "CLIENT-CAP-001",
	"CORE-CTX-001", "VER-NEG-002", "SEC-AUTH-006", "CORE-ERR-008", "DM-FMT-003", "DM-ART-003", "DM-ART-004"}

// officialPreconditionSkips are the tests of the official suite that
// parley serve --capabilities extended-card does not meet the
// preconditions of (they test an agent without streaming, push or an
// extended card): the only skips that are not binding filters.
var officialPreconditionSkips = []string{"CORE-CAP-001", "CORE-CAP-002", "SEC-EXTCARD-003", "PUSH-CFG-004"}

// echoBehaviours are the behaviours of ACTS §11.2 the echo agent has by
// chance (it completes every task with the message's text as an
// artifact, streamed working → artifact → completed).
var echoBehaviours = []string{"tck-complete-task", "tck-artifact-text", "tck-stream-basic", "tck-stream-chunked", "tck-long-running"}

// TestOfficialACTSSuite runs the official ACTS suite, read from the folder
// PARLEY_ACTS_SUITE names (the A2A repository's tests/acts at
// conformance-spec dbcabfba; it is not part of this repository), with
// `parley check --acts` against `parley serve` with two tokens of every
// right, a third with tasks:read alone (insufficientAuthToken), an
// extended card and private webhooks allowed, as docs/acts.md says:
//   - the conformance agent: every test passes, or fails as a listed
//     contradiction of the specification, or is skipped by a binding
//     filter or a listed precondition; no runner error;
//   - the acts agent (only the tck-* contract): the same verdicts;
//   - the echo agent (no contract): every test of a behaviour it lacks
//     fails, and nothing else becomes a runner error.
func TestOfficialACTSSuite(t *testing.T) {
	dir := os.Getenv("PARLEY_ACTS_SUITE")
	if dir == "" {
		t.Skip("PARLEY_ACTS_SUITE is not set (the folder of the official suite, tests/acts of the A2A repository's conformance-spec branch)")
	}
	doc, err := acts.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	behaviours := map[string][]string{}
	for _, s := range doc.Suites {
		for _, tc := range s.Tests {
			behaviours[tc.ID] = tc.RequiresBehaviors
		}
	}
	run := func(agent string) map[[2]string]*acts.TestResult {
		p := serve(t, "--agent", agent, "--store", "memory", "--auth-token", "alice=tok-a", "--auth-token", "bob=tok-b",
			"--auth-token", "carol=tok-c:tasks:read", "--push-allow-private", "--capabilities", "extended-card")
		out, _ := mustRun(t, 1, "check", "http://"+p.addr, "--token", "tok-a", "--token2", "tok-b",
			"--insufficient-token", "tok-c", "--webhook-addr", "127.0.0.1:0", "--acts", dir, "--json")
		var reps []acts.Report
		if err := json.Unmarshal([]byte(out), &reps); err != nil || len(reps) != 3 {
			t.Fatalf("%s: %d reports, %v", agent, len(reps), err)
		}
		got := map[[2]string]*acts.TestResult{}
		for _, rep := range reps {
			t.Logf("%s on %s: %+v", agent, rep.Transport, rep.Summary)
			for _, s := range rep.Suites {
				for _, r := range s.Tests {
					got[[2]string{rep.Transport, r.ID}] = r
					if r.Result == acts.Error {
						t.Errorf("%s %s %s: runner error %v", agent, rep.Transport, r.ID, r.Failure)
					}
				}
			}
		}
		return got
	}

	conf := run("conformance")
	others := map[string]int{}
	for _, k := range slices.SortedFunc(maps.Keys(conf), func(a, b [2]string) int { return strings.Compare(a[0]+a[1], b[0]+b[1]) }) {
		r := conf[k]
		switch {
		case r.Result == acts.Fail && !slices.Contains(officialContradictions, k[1]):
			t.Errorf("conformance %s %s [%s] failed: %v", k[0], k[1], r.Level, r.Failure)
		case slices.Contains(officialContradictions, k[1]) && r.Result == acts.Pass:
			t.Errorf("conformance %s %s contradicts the specification but passed", k[0], k[1])
		case r.Result == acts.Skip && !strings.HasPrefix(r.SkipReason, "transport filter"):
			others[k[0]]++
			if !slices.Contains(officialPreconditionSkips, k[1]) {
				t.Errorf("conformance %s %s skipped: %s", k[0], k[1], r.SkipReason)
			}
		}
	}
	for b, n := range others {
		if n > 5 {
			t.Errorf("%s: %d skips other than binding filters, want at most 5", b, n)
		}
	}

	for k, r := range run("acts") {
		if c := conf[k]; c == nil || c.Result != r.Result {
			t.Errorf("acts %s %s: %s, the conformance agent %v", k[0], k[1], r.Result, c)
		}
	}

	for k, r := range run("echo") {
		lacks := slices.ContainsFunc(behaviours[k[1]], func(b string) bool { return !slices.Contains(echoBehaviours, b) })
		if lacks && r.Result != acts.Fail && !strings.HasPrefix(r.SkipReason, "transport filter") {
			t.Errorf("echo %s %s needs %v, which echo lacks, but is %s", k[0], k[1], behaviours[k[1]], r.Result)
		}
	}
}
