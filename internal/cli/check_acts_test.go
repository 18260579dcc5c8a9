package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckACTS runs Parley's own ACTS files with `parley check --acts`
// against `parley serve --agent conformance`: the passing ones exit 0 and
// write one report per binding, named per ACTS §13.5; the ones built to
// fail exit 1 with the failures listed; a bad document is a usage error.
func TestCheckACTS(t *testing.T) {
	t.Setenv("PARLEY_ACTS_TEST_WORD", "acts") // the suite's {{env.…}}
	p := serve(t, "--agent", "conformance", "--store", "memory")
	dir := t.TempDir()
	out, _ := mustRun(t, 0, "check", "http://"+p.addr, "--acts", "../check/testdata/acts", "--acts-report", dir,
		"--acts-var", "webhookUrl=https://hooks.example.com/acts")
	contains(t, "check --acts", out, "ACTS on jsonrpc: 18 tests, 15 passed, 0 failed, 3 skipped, 0 errors",
		"ACTS on rest: 18 tests, 14 passed", "ACTS on grpc: 18 tests, 13 passed", "MUST:   ")
	files, _ := filepath.Glob(filepath.Join(dir, "acts-report-Parley-conformance-agent-*.json"))
	if len(files) != 3 {
		entries, _ := os.ReadDir(dir)
		t.Fatalf("reports: %v, want 3 (%v)", files, entries)
	}
	for _, f := range files {
		b, _ := os.ReadFile(f)
		var rep struct {
			Transport string `json:"transport"`
			Summary   struct {
				Total int `json:"total"`
			} `json:"summary"`
		}
		if err := json.Unmarshal(b, &rep); err != nil || rep.Summary.Total != 18 || !strings.Contains(f, "-"+rep.Transport+"-") {
			t.Errorf("%s: %+v %v", f, rep, err)
		}
	}

	out, _ = mustRun(t, 1, "check", "http://"+p.addr, "--acts", "../check/testdata/acts-fail/fail.acts.yaml", "--binding", "grpc")
	contains(t, "check --acts (failing)", out, "ACTS on grpc:", "FAIL F-EXACT [must]: step s: task.status.state: values differ",
		"ERROR E-UNRESOLVED [must]")
	if strings.Contains(out, "ACTS on rest") {
		t.Errorf("--binding grpc ran rest:\n%s", out)
	}
	js, _ := mustRun(t, 1, "check", "http://"+p.addr, "--acts", "../check/testdata/acts-fail/fail.acts.yaml", "--json")
	var reps []map[string]any
	if err := json.Unmarshal([]byte(js), &reps); err != nil || len(reps) != 3 {
		t.Errorf("--json: %d reports, %v", len(reps), err)
	}

	bad := filepath.Join(dir, "bad.acts.yaml")
	os.WriteFile(bad, []byte("acts_version: \"1.0\"\n"), 0o644)
	_, errs := mustRun(t, 1, "check", "http://"+p.addr, "--acts", bad)
	contains(t, "a bad document", errs, "spec_version is missing")
	_, errs = mustRun(t, 2, "check", "http://"+p.addr, "--acts-report", dir)
	contains(t, "--acts-report alone", errs, "--acts-report and --acts-var go with --acts")
}
