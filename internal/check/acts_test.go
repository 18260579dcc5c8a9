package check_test

import (
	"context"
	"strings"
	"testing"

	"parley.dev/parley/internal/acts"
	"parley.dev/parley/internal/check"
)

// runACTS runs the ACTS file or folder at path against base on every
// binding and returns the reports, by binding.
func runACTS(t *testing.T, base, path string, vars map[string]string) map[string]*acts.Report {
	t.Helper()
	doc, err := acts.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	ds, _, err := check.ACTSDrivers(context.Background(), check.Options{URL: base})
	if err != nil {
		t.Fatal(err)
	}
	reps := acts.Run(context.Background(), doc, acts.Options{Drivers: ds, SDK: acts.SDKInfo{Name: "parley", Version: "test", Language: "go"}, Vars: vars})
	out := map[string]*acts.Report{}
	for _, r := range reps {
		out[r.Transport] = r
	}
	if len(out) != 3 {
		t.Fatalf("reports for %d bindings, want 3", len(out))
	}
	return out
}

// results lists a report's tests by id.
func results(r *acts.Report) map[string]*acts.TestResult {
	m := map[string]*acts.TestResult{}
	for _, s := range r.Suites {
		for _, tr := range s.Tests {
			m[tr.ID] = tr
		}
	}
	return m
}

// TestACTSPasses runs Parley's own ACTS files, which cover every construct,
// against the conformance agent on the three bindings: every test passes
// or is skipped for the reason it was written to be skipped.
func TestACTSPasses(t *testing.T) {
	t.Setenv("PARLEY_ACTS_TEST_WORD", "acts")
	base := startParley(t, nil, nil)
	reps := runACTS(t, base, "testdata/acts", map[string]string{"webhookUrl": "https://hooks.example.com/acts"})
	for b, rep := range reps {
		var sb strings.Builder
		rep.Summarize(&sb)
		t.Logf("%s", sb.String())
		for id, r := range results(rep) {
			wantSkip := strings.HasPrefix(id, "OPS-SKIP-") || (strings.HasPrefix(id, "RAW-") && !strings.Contains(strings.ToLower(id), b))
			switch {
			case wantSkip && r.Result != acts.Skip:
				t.Errorf("%s %s: %s, want skip", b, id, r.Result)
			case !wantSkip && r.Result != acts.Pass:
				t.Errorf("%s %s: %s: %v", b, id, r.Result, r.Failure)
			}
		}
	}
}
