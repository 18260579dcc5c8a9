package conformance_test

import (
	"strings"
	"testing"

	"parley.dev/parley/conformance"
	"parley.dev/parley/internal/agents"
	"parley.dev/parley/parleytest"
)

// TestACTSAgent grades, with Test, an agent served by the test kit that
// speaks only ACTS's behaviour contract (the tck-* prefixes): the contract
// is detected by its probe, and the behaviour checks run through it: none
// is skipped for want of a contract, and none fails.
func TestACTSAgent(t *testing.T) {
	tokens := map[string]string{"tok-a": "alice", "tok-b": "bob"}
	srv := parleytest.NewServer(t, agents.ACTS(), parleytest.WithTokens(tokens))
	opts := []conformance.Option{conformance.WithToken("tok-a"), conformance.WithSecondToken("tok-b")}
	conformance.Test(t, srv.URL, opts...)

	rep, err := conformance.Run(t.Context(), srv.URL, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Contract() != conformance.ContractACTS || !rep.ConformanceAgent() {
		t.Fatalf("contract %q (behaviour checks %v), want acts", rep.Contract(), rep.ConformanceAgent())
	}
	var behaviour int
	for _, r := range rep.Results() {
		if r.Status == conformance.Skip && strings.Contains(r.Detail, "behaviour contract") && !strings.HasPrefix(r.ID, "B11.append-unknown") {
			t.Errorf("%s %s skipped: %s", r.Binding, r.ID, r.Detail)
		}
		if strings.HasPrefix(r.ID, "op.") || strings.HasPrefix(r.ID, "B2.") {
			behaviour++
		}
	}
	if behaviour == 0 {
		t.Error("no behaviour check in the report")
	}

	// Declared rather than detected: the same contract; declared none,
	// every behaviour check is skipped, saying so.
	rep, err = conformance.Run(t.Context(), srv.URL, append(opts, conformance.WithContract(conformance.ContractNone))...)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Results() {
		if strings.HasPrefix(r.ID, "op.send-blocking") && (r.Status != conformance.Skip || !strings.Contains(r.Detail, "no behaviour contract")) {
			t.Errorf("declared none: %s %s %s %s", r.Binding, r.ID, r.Status, r.Detail)
		}
	}
	if _, err := conformance.Run(t.Context(), srv.URL, conformance.WithContract("klingon")); err == nil {
		t.Error("an unknown contract was accepted")
	}
}
