package agents

import (
	"context"
	"slices"
	"strings"

	"parley.dev/parley/a2a"
	"parley.dev/parley/server"
)

// ACTS, the A2A Conformance Test Specification (draft 0.1.0, as of commit
// dbcabfba of the A2A repository's conformance-spec branch), drives the
// agent under test by the text of the first text part of the user message
// (§11: the message-prefix convention): the text starts with the name of a
// behaviour of its contract (§11.2), and a test that needs one declares it
// in requires_behaviors. The table says in a line what each does; the
// choices made where it says no more are documented on Conformance.

// actsRules is ACTS's contract: the fourteen behaviours of §11.2, plus
// tck-auth-required, which the suite's tests require although the table
// does not list it. The text is trimmed before it is matched, and the
// longest prefix wins (ruleFor).
var actsRules = append(slices.Clip(sharedRules),
	// tck-long-running leaves an artifact: the suite's polling test asks
	// the finished task for one.
	rule{"tck-long-running", afterDelay(textArtifact("result", "Long-running work done"), "Long-running work done")},
	rule{"tck-multi-turn", multiTurn},
	rule{"tck-cancel", untilCanceled},
	rule{"tck-stream-basic", completeWith(true, textArtifact("stream", "Streamed content"))},
	rule{"tck-stream-chunked", chunked},
	rule{"tck-task-failure", statusOnly(a2a.TaskState_TASK_STATE_FAILED, "The task failed, as tck-task-failure asks")},
)

// actsDone is the word that ends a tck-multi-turn conversation.
const actsDone = "done"

// ACTS is the acts agent: it speaks only ACTS's behaviour contract (the
// table on Conformance, the tck-* text prefixes). A message that names no
// behaviour, and is no follow-up on a task that did, ends its task
// REJECTED with a status message listing the prefixes: the contract says
// nothing of such messages, and a test that expects any behaviour from
// them fails against this agent instead of passing by chance.
func ACTS() server.Agent {
	return server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		if run := actsFor(req); run != nil {
			return run(ctx, req, em)
		}
		return em.StatusText(a2a.TaskState_TASK_STATE_REJECTED, actsUnknown)
	})
}

// actsUnknown is the acts agent's answer to a message that names no
// behaviour of the contract.
var actsUnknown = "This agent speaks only the ACTS behaviour contract: start the first text part of the message with one of " +
	strings.Join(actsPrefixes(), ", ")

// actsPrefixes returns the prefixes of the contract, in the order of
// actsRules.
func actsPrefixes() []string {
	out := make([]string, len(actsRules))
	for i, r := range actsRules {
		out[i] = r.prefix
	}
	return out
}

// actsFor returns the behaviour the message asks for: the one whose prefix
// starts its first text part, trimmed; on a follow-up that names none, the
// one that the task's first user message named (a tck-multi-turn
// conversation goes on with plain text). It returns nil when neither names
// one.
func actsFor(req *server.Request) behaviour {
	if run := ruleFor(actsRules, actsText(req.Message)); run != nil {
		return run
	}
	for _, m := range req.Task.GetHistory() {
		if m.GetRole() == a2a.Role_ROLE_USER {
			return ruleFor(actsRules, actsText(m))
		}
	}
	return nil
}

// actsText is the text ACTS keys a message on: its first text part,
// trimmed.
func actsText(m *a2a.Message) string {
	return strings.TrimSpace(a2a.FirstText(m))
}

// multiTurn asks for more input until a follow-up on its task says done
// (its first word, in any case), then completes with a status message. It
// asks without a status message: each would join the task's history
// between the user's turns, and the suite's history tests read the turns
// at fixed positions of it.
func multiTurn(_ context.Context, req *server.Request, em *server.Emitter) error {
	if f := strings.Fields(actsText(req.Message)); req.Task != nil && len(f) > 0 && strings.EqualFold(f[0], actsDone) {
		return em.StatusText(a2a.TaskState_TASK_STATE_COMPLETED, "Conversation complete")
	}
	return em.Status(a2a.TaskState_TASK_STATE_INPUT_REQUIRED, nil)
}

// untilCanceled works until the task is canceled (or the server stops).
func untilCanceled(ctx context.Context, _ *server.Request, em *server.Emitter) error {
	if err := em.Status(a2a.TaskState_TASK_STATE_WORKING, nil); err != nil {
		return err
	}
	<-ctx.Done()
	return nil // canceled: the core already recorded it
}
