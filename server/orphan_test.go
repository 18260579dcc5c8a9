package server_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/server"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/memstore"
	"parley.dev/parley/taskstore/sqlitestore"
)

// TestResendOfOrphanedMessageRuns: a messageId whose record was written
// but whose task never was (the process died between the two, or the
// task's write failed) is run on the next send, as the task the record
// names, in every store: every resend gets an answer (B14). A follow-up
// resend naming a task that is not there is still TaskNotFound, and with
// a retention shorter than the record's age the message is not run
// again (its task may have been removed).
func TestResendOfOrphanedMessageRuns(t *testing.T) {
	t.Parallel()
	stores := map[string]func(t *testing.T) taskstore.Store{
		"memory": func(*testing.T) taskstore.Store { return memstore.New() },
		"sqlite": func(t *testing.T) taskstore.Store {
			st, err := sqlitestore.Open(filepath.Join(t.TempDir(), "tasks.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		},
	}
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), guard)
			defer cancel()
			st := open(t)
			orphan := func(id string, age time.Duration) *a2a.Message {
				msg := a2a.UserMessage("hello")
				msg.MessageId = id
				if _, err := st.PutMessage(ctx, taskstore.Scope{}, &taskstore.MessageRecord{MessageID: id,
					Digest: server.DigestOf(msg), TaskID: "task-of-" + id, Created: time.Now().Add(-age)}); err != nil {
					t.Fatal(err)
				}
				return msg
			}
			fresh, old := orphan("m-fresh", time.Minute), orphan("m-old", 2*time.Hour)
			srv := newServer(t, server.Options{Store: st, Retention: time.Hour})

			for range 2 { // the first send runs it; the second is a plain resend
				resp, err := srv.SendMessage(ctx, &a2a.SendMessageRequest{Message: fresh})
				if err != nil {
					t.Fatalf("resend of an orphaned message: %v", err)
				}
				if tk := resp.GetTask(); tk.GetId() != "task-of-m-fresh" || tk.GetStatus().GetState() != a2a.TaskState_TASK_STATE_COMPLETED {
					t.Fatalf("resend answered %v, want task task-of-m-fresh COMPLETED", resp)
				}
			}
			if _, err := srv.SendMessage(ctx, &a2a.SendMessageRequest{Message: old}); a2a.AsError(err).Code != a2a.CodeTaskNotFound {
				t.Errorf("resend of a record older than the retention: %v, want TaskNotFound", err)
			}
			follow := a2a.UserMessage("more")
			follow.MessageId, follow.TaskId = "m-follow", "task-of-m-follow"
			if _, err := st.PutMessage(ctx, taskstore.Scope{}, &taskstore.MessageRecord{MessageID: "m-follow",
				Digest: server.DigestOf(follow), TaskID: "task-of-m-follow", Created: time.Now()}); err != nil {
				t.Fatal(err)
			}
			if _, err := srv.SendMessage(ctx, &a2a.SendMessageRequest{Message: follow}); a2a.AsError(err).Code != a2a.CodeTaskNotFound {
				t.Errorf("follow-up resend naming a task that is not there: %v, want TaskNotFound", err)
			}
		})
	}
}
