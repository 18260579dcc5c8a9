package check_test

import (
	"context"
	"strings"
	"testing"

	"parley.dev/parley/a2a"
	"parley.dev/parley/a2ahttp"
	"parley.dev/parley/internal/agents"
	"parley.dev/parley/internal/check"
)

// TestRunParleyPreview grades the A2A 1.1 preview of a Parley served as
// parley serve serves it: with 1.1 among the versions, every 1.1.* check
// passes on the three bindings; without it, each is N/A and nothing else
// changes verdict.
func TestRunParleyPreview(t *testing.T) {
	t.Parallel()
	for _, on := range []bool{true, false} {
		cfg := &a2ahttp.ServeConfig{Addr: "127.0.0.1:0", Agent: agents.Conformance(), Name: "conformance",
			Description: "d", Version: "1", Skills: []*a2a.AgentSkill{{Id: "s", Name: "s", Description: "s", Tags: []string{"s"}}}}
		if on {
			cfg.ProtocolVersions = []string{"1.1", "1.0", "0.3"}
		}
		srv, err := a2ahttp.Start(cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { srv.Close() })
		rep, err := check.Run(context.Background(), check.Options{URL: srv.URL()})
		if err != nil {
			t.Fatal(err)
		}
		if got := notPassing(rep, check.Fail, check.Warn); len(got) > 0 {
			t.Errorf("preview %v: %v", on, got)
		}
		seen := map[string]int{}
		for _, r := range rep.Results {
			if !strings.HasPrefix(r.ID, "1.1.") {
				continue
			}
			seen[r.Binding]++
			want := check.Pass
			if !on {
				want = check.NA
			}
			if r.Verdict != want {
				t.Errorf("preview %v: %s %s is %s (%s), want %s", on, r.Binding, r.ID, r.Verdict, r.Finding, want)
			}
		}
		for _, b := range []string{a2a.BindingJSONRPC, a2a.BindingHTTPJSON, a2a.BindingGRPC} {
			if seen[b] != 7 {
				t.Errorf("preview %v: %d 1.1 checks on %s, want 7", on, seen[b], b)
			}
		}
	}
}
