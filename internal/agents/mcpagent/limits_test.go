package mcpagent_test

// Tests of the bounds of `parley serve --mcp` at real sizes, over the
// wire: a result larger than an MCP message may be, thousands of progress
// notifications, and the time limit of a call.

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/agents/mcpagent"
	"parley.dev/parley/internal/agents/mcpagent/mcptest"
)

// TestMCPAgentResultTooLarge: a result of 9 MB reaches the A2A caller
// whole on each binding; one larger than the 16 MiB an MCP message over
// stdio may be ends the task FAILED saying so (not with the exit status
// of the child stopped for it), and the server, started again, serves the
// next call.
func TestMCPAgentResultTooLarge(t *testing.T) {
	t.Parallel()
	f := mcptest.Start(t, mcpagent.Options{Command: []string{mcptest.GoServer(t)}})
	for name, c := range f.Clients {
		task := mcptest.Send(t, c, a2a.UserMessage(`big {"bytes": 9000000, "kind": "blob"}`))
		mcptest.WantState(t, task, a2a.TaskState_TASK_STATE_COMPLETED, "")
		if parts := mcptest.ResultParts(t, task); len(parts) != 1 || len(parts[0].GetRaw()) != 9_000_000 {
			t.Errorf("%s: a 9 MB blob came back as %d parts", name, len(parts))
		}
	}
	c := f.Clients["jsonrpc"]
	mcptest.WantState(t, mcptest.Send(t, c, a2a.UserMessage(`big {"bytes": 17000000}`)), a2a.TaskState_TASK_STATE_FAILED,
		"the MCP server sent a message larger than 16 MiB")
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		task := mcptest.Send(t, c, a2a.UserMessage(`echo {"text": "after"}`))
		if task.GetStatus().GetState() == a2a.TaskState_TASK_STATE_COMPLETED {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no call served after the large result: %v", task.GetStatus())
		}
	}
}

// TestMCPAgentManyProgress: a tool that sends 5,000 progress
// notifications at once: the A2A stream gets WORKING updates in order,
// fewer when the stream falls behind (coalesced, the oldest dropped), and
// then the result; the MCP session stays up.
func TestMCPAgentManyProgress(t *testing.T) {
	t.Parallel()
	for name, opts := range transports() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := mcptest.Start(t, opts(t))
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			var said []string
			var last *a2a.TaskStatusUpdateEvent
			for ev, err := range f.Clients["grpc"].SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage(`chatty {"steps": 5000}`)}) {
				if err != nil {
					t.Fatal(err)
				}
				if u := ev.Response.GetStatusUpdate(); u != nil {
					last = u
					if m := u.GetStatus().GetMessage(); m != nil && ev.State() == a2a.TaskState_TASK_STATE_WORKING {
						said = append(said, a2a.JoinText(m.GetParts()))
					}
				}
			}
			if last.GetStatus().GetState() != a2a.TaskState_TASK_STATE_COMPLETED || len(said) == 0 || len(said) > 5000 {
				t.Fatalf("ended %v after %d progress updates", last.GetStatus().GetState(), len(said))
			}
			prev := 0
			for _, s := range said {
				var n int
				if _, err := fmt.Sscanf(s, "progress %d/5000", &n); err != nil || n <= prev {
					t.Fatalf("progress updates out of order: %q after %d", s, prev)
				}
				prev = n
			}
			task := mcptest.Send(t, f.Clients["jsonrpc"], a2a.UserMessage(`chatty {"steps": 1}`))
			mcptest.WantState(t, task, a2a.TaskState_TASK_STATE_COMPLETED, "")
			t.Logf("5000 progress notifications: %d WORKING updates, the last %q", len(said), said[len(said)-1])
		})
	}
}

// TestMCPAgentCallTimeout: a call that runs past CallTimeout is canceled
// at the MCP server and its task ends FAILED saying why; the time a call
// waits for an answer is not counted.
func TestMCPAgentCallTimeout(t *testing.T) {
	t.Parallel()
	f := mcptest.Start(t, mcpagent.Options{Command: []string{mcptest.GoServer(t)}, CallTimeout: 500 * time.Millisecond})
	c := f.Clients["rest"]
	count := func() string {
		return a2a.JoinText(mcptest.ResultParts(t, mcptest.Send(t, c, a2a.UserMessage("canceled"))))
	}
	before := count()
	mcptest.WantState(t, mcptest.Send(t, c, a2a.UserMessage("slow")), a2a.TaskState_TASK_STATE_FAILED,
		"the call of slow was stopped after running 500ms, its time limit (--mcp-call-timeout)")
	for deadline := time.Now().Add(10 * time.Second); count() == before; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the MCP server was not told the call was canceled")
		}
	}
	task := mcptest.Send(t, c, a2a.UserMessage("ask"))
	mcptest.WantState(t, task, a2a.TaskState_TASK_STATE_INPUT_REQUIRED, "What is your name?")
	time.Sleep(time.Second) // past the limit, waiting for the answer
	m := a2a.UserMessage("Ada")
	m.TaskId = task.GetId()
	done := mcptest.Send(t, c, m)
	mcptest.WantState(t, done, a2a.TaskState_TASK_STATE_COMPLETED, "")
	if got := a2a.JoinText(mcptest.ResultParts(t, done)); !strings.Contains(got, "hello Ada") {
		t.Errorf("after the answer: %q", got)
	}
}
