package server_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/agents"
	"parley.dev/parley/server"
	"parley.dev/parley/taskstore/memstore"
)

// TestResendOfEvictedTaskDoesNotRun: the memory store's bound on tasks
// evicts a finished task whatever its age, so the retention rule cannot
// tell it from a task never made. Its message's record is marked instead,
// and a resend of the message is answered TaskNotFound without running
// the agent again (spec §3.3.1), with no retention set and with one.
func TestResendOfEvictedTaskDoesNotRun(t *testing.T) {
	t.Parallel()
	for _, retention := range []time.Duration{0, time.Hour} {
		t.Run(retention.String(), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), guard)
			defer cancel()
			var runs atomic.Int32
			srv := newServer(t, server.Options{Store: memstore.NewWith(&memstore.Options{MaxTasks: 2}),
				Agent: counting(agents.Conformance(), &runs), Retention: retention})
			first := a2a.UserMessage("hello")
			firstTask := taskOf(t)(srv.SendMessage(ctx, &a2a.SendMessageRequest{Message: first}))
			for _, text := range []string{"two", "three"} {
				sendTask(t, srv, ctx, text) // the third task evicts the first
			}
			// The server may hold the finished task a moment longer than
			// the store, and answer a resend from it: the first task, which
			// is right too. Resend until the answer comes from the store.
			before := runs.Load()
			for {
				resp, err := srv.SendMessage(ctx, &a2a.SendMessageRequest{Message: first})
				if err == nil && resp.GetTask().GetId() == firstTask.GetId() && ctx.Err() == nil {
					time.Sleep(10 * time.Millisecond)
					continue
				}
				if err == nil || a2a.AsError(err).Code != a2a.CodeTaskNotFound {
					t.Fatalf("resend of the evicted task's message: %v, %v; want TaskNotFound", resp, err)
				}
				break
			}
			if n := runs.Load(); n != before || n != 3 {
				t.Errorf("the agent ran %d times, %d before the resend; want 3 both", n, before)
			}
		})
	}
}
