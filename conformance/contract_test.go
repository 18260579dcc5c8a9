package conformance_test

import (
	"context"
	"strings"
	"testing"

	"parley.dev/parley/a2a"
	"parley.dev/parley/conformance"
	"parley.dev/parley/internal/agents"
	"parley.dev/parley/parleytest"
	"parley.dev/parley/server"
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

	// Declared none: every behaviour check is skipped, saying so.
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

// TestACTSAgentMisbehaving: the behaviour checks driven through ACTS's
// prefixes can fail. An agent that completes a tck-multi-turn task at once
// (instead of asking for input) and streams tck-stream-chunked in one
// chunk fails the checks of an interrupted task and of chunk order, once
// its contract is declared.
func TestACTSAgentMisbehaving(t *testing.T) {
	acts := agents.ACTS()
	bad := server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		switch text := a2a.FirstText(req.Message); {
		case strings.HasPrefix(text, "tck-multi-turn"):
			return em.StatusText(a2a.TaskState_TASK_STATE_COMPLETED, "done at once")
		case strings.HasPrefix(text, "tck-stream-chunked"):
			if err := em.Artifact(a2a.TextArtifact("chunked", "all of it")); err != nil {
				return err
			}
			return em.Status(a2a.TaskState_TASK_STATE_COMPLETED, nil)
		}
		return acts.Execute(ctx, req, em)
	})
	srv := parleytest.NewServer(t, bad, parleytest.WithBindings(a2a.BindingJSONRPC))
	// Declared: the probe of tck-multi-turn would not recognise it.
	rep, err := conformance.Run(t.Context(), srv.URL, conformance.WithContract(conformance.ContractACTS))
	if err != nil {
		t.Fatal(err)
	}
	failed := map[string]bool{}
	for _, r := range rep.Results() {
		if r.Status == conformance.Fail {
			failed[r.ID] = true
		}
	}
	for _, id := range []string{"op.send-input-required", "stream.order"} {
		if !failed[id] {
			t.Errorf("%s did not fail (failed: %v)", id, failed)
		}
	}
	if rep.Contract() != conformance.ContractACTS {
		t.Errorf("contract %q, want acts", rep.Contract())
	}
}

// TestReplyingAgentNoContract: an agent that answers every message with a
// Message (as ACTS's tck-message-response asks, and as the README's
// shouting agent does) is not taken for an ACTS agent: the behaviour
// checks are skipped, saying why, rather than failed.
func TestReplyingAgentNoContract(t *testing.T) {
	reply := server.AgentFunc(func(_ context.Context, req *server.Request, em *server.Emitter) error {
		return em.Reply(a2a.AgentMessage(strings.ToUpper(a2a.FirstText(req.Message))))
	})
	srv := parleytest.NewServer(t, reply, parleytest.WithBindings(a2a.BindingJSONRPC))
	rep, err := conformance.Run(t.Context(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Contract() != "" || rep.ConformanceAgent() {
		t.Fatalf("contract %q for an agent that replies to everything", rep.Contract())
	}
	for _, r := range rep.Results() {
		if strings.HasPrefix(r.ID, "op.") && (r.Status != conformance.Skip || !strings.Contains(r.Detail, "no behaviour contract detected")) {
			t.Errorf("%s %s: %s", r.ID, r.Status, r.Detail)
		}
	}
}
