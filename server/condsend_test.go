package server_test

import (
	"context"
	"testing"

	"parley.dev/parley/a2a"
	pversion "parley.dev/parley/internal/version"
	"parley.dev/parley/server"
)

// TestConditionalSendRules: what the conditional send decides where the
// branch is silent, in process (1.1 calls): a stale expectation is told
// before a contextId that is not the task's or a terminal task; a
// matching one meets those refusals as any follow-up does; a resend of an
// accepted conditional send is answered as a resend; and a follow-up,
// conditional or not, whose agent returns without an event leaves the
// task waiting, one generation on (its message's timeline entry).
func TestConditionalSendRules(t *testing.T) {
	agent := server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		switch text := a2a.FirstText(req.Message); {
		case req.Task == nil:
			return em.Status(a2a.TaskState_TASK_STATE_INPUT_REQUIRED, nil)
		case text == "nothing":
			return nil
		case text == "done":
			return em.Status(a2a.TaskState_TASK_STATE_COMPLETED, nil)
		}
		return em.Status(a2a.TaskState_TASK_STATE_INPUT_REQUIRED, nil)
	})
	s := newServer(t, server.Options{Agent: agent, ProtocolVersions: []string{pversion.V11, a2a.ProtocolVersion}})
	v11 := func() context.Context { return as(t, "", version(pversion.V11)) }
	cond := func(id, text string, gen int64) *a2a.SendMessageRequest {
		return withConfig(followReq(id, text), &a2a.SendMessageConfiguration{IfGenerationMatch: &gen})
	}
	waiting := func() *a2a.Task {
		tk := taskOf(t)(s.SendMessage(v11(), msgReq("start")))
		if state(tk) != a2a.TaskState_TASK_STATE_INPUT_REQUIRED || tk.GetGeneration() < 1 {
			t.Fatalf("start: %s at generation %d", short(state(tk)), tk.GetGeneration())
		}
		return tk
	}

	// A contextId that is not the task's: the stale view first, then
	// (matching) the contextId.
	tk := waiting()
	other := cond(tk.Id, "more", tk.GetGeneration()-1)
	other.Message.ContextId = "not-its-context"
	_, err := s.SendMessage(v11(), other)
	wantErr(t, "stale, wrong context", err, a2a.ErrTaskGenerationMismatch)
	other = cond(tk.Id, "more", tk.GetGeneration())
	other.Message.ContextId = "not-its-context"
	_, err = s.SendMessage(v11(), other)
	wantErr(t, "matching, wrong context", err, a2a.ErrInvalidParams)

	// A terminal task: stale first, then (matching) terminal.
	done := taskOf(t)(s.SendMessage(v11(), cond(tk.Id, "done", tk.GetGeneration())))
	if state(done) != a2a.TaskState_TASK_STATE_COMPLETED {
		t.Fatalf("done: %s", short(state(done)))
	}
	_, err = s.SendMessage(v11(), cond(tk.Id, "more", tk.GetGeneration()))
	wantErr(t, "stale, terminal", err, a2a.ErrTaskGenerationMismatch)
	_, err = s.SendMessage(v11(), cond(tk.Id, "more", done.GetGeneration()))
	wantErr(t, "matching, terminal", err, a2a.ErrUnsupportedOperation)

	// A resend of an accepted conditional send: the original answer,
	// although the generation it expected is past.
	tk = waiting()
	req := cond(tk.Id, "more", tk.GetGeneration())
	first := taskOf(t)(s.SendMessage(v11(), req))
	again := taskOf(t)(s.SendMessage(v11(), req))
	if first.GetGeneration() <= tk.GetGeneration() || again.Id != tk.Id || len(again.GetHistory()) != len(first.GetHistory()) {
		t.Errorf("resend: generation %d → %d, history %d → %d; want the same task, the message once",
			first.GetGeneration(), again.GetGeneration(), len(first.GetHistory()), len(again.GetHistory()))
	}

	// An agent that does nothing with the message: the message alone is
	// a change (a timeline entry, spec PR #2129 §3.2.7), conditional or
	// not, and the task stays as the agent left it.
	for _, req := range []*a2a.SendMessageRequest{cond("", "nothing", 0), followReq("", "nothing")} {
		tk = waiting()
		req.Message.TaskId = tk.Id
		if req.Configuration != nil {
			g := tk.GetGeneration()
			req.Configuration.IfGenerationMatch = &g
		}
		got := taskOf(t)(s.SendMessage(v11(), req))
		if state(got) != a2a.TaskState_TASK_STATE_INPUT_REQUIRED || got.GetGeneration() != tk.GetGeneration()+1 {
			t.Errorf("follow-up whose agent did nothing: %s at %d, want INPUT_REQUIRED at %d",
				short(state(got)), got.GetGeneration(), tk.GetGeneration()+1)
		}
	}
}
