package server_test

// Idempotent resends of a messageId (docs/decisions.md#b14).

import (
	"context"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"parley.dev/parley/internal/testkit"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/agents"
	"parley.dev/parley/server"
	"parley.dev/parley/taskstore/memstore"
	"parley.dev/parley/taskstore/sqlitestore"
)

func TestIdempotentResend(t *testing.T) {
	t.Parallel()
	t.Run("same message", resendSameMessage)
	t.Run("same id, other content", resendOtherContent)
	t.Run("concurrent", resendConcurrently)
	t.Run("before the task is made", resendBeforeMade)
	t.Run("direct reply", resendDirectReply)
	t.Run("per principal", resendPerPrincipal)
	t.Run("follow-up resend", resendFollowUp)
}

// resendSameMessage: a resend returns the original task and runs nothing.
func resendSameMessage(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	s := newServer(t, server.Options{Agent: counting(agents.Conformance(), &calls)})
	req := msgReq("hello")
	first := taskOf(t)(s.SendMessage(anon(t), proto.Clone(req).(*a2a.SendMessageRequest)))
	again := taskOf(t)(s.SendMessage(anon(t), proto.Clone(req).(*a2a.SendMessageRequest)))
	if again.Id != first.Id || !proto.Equal(again, first) {
		t.Errorf("resend returned %v, want the original %v", again, first)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("agent ran %d times, want once", n)
	}
	got, _ := s.GetTask(anon(t), &a2a.GetTaskRequest{Id: first.Id})
	if n := countMessage(got, req.Message.MessageId); n != 1 {
		t.Errorf("message appears %d times in history, want once: %v", n, historyTexts(got))
	}
	res, _ := s.ListTasks(anon(t), &a2a.ListTasksRequest{})
	if res.GetTotalSize() != 1 {
		t.Errorf("%d tasks exist, want 1", res.GetTotalSize())
	}
	// A streaming resend of a finished task: its snapshot, then the end.
	evs, err := testkit.Collect(s.SendStreamingMessage(anon(t), proto.Clone(req).(*a2a.SendMessageRequest)))
	if err != nil || len(evs) != 1 || evs[0].Response.GetTask().GetId() != first.Id || state(evs[0].Response.GetTask()) != a2a.TaskState_TASK_STATE_COMPLETED {
		t.Errorf("streaming resend = %v, %v", describeAll(evs), err)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("agent ran %d times after a streaming resend, want once", n)
	}
}

// resendOtherContent: a known messageId with other content is refused.
func resendOtherContent(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	s := newServer(t, server.Options{Agent: counting(agents.Conformance(), &calls)})
	req := msgReq("hello")
	first := taskOf(t)(s.SendMessage(anon(t), proto.Clone(req).(*a2a.SendMessageRequest)))
	other := proto.Clone(req).(*a2a.SendMessageRequest)
	other.Message.Parts = []*a2a.Part{a2a.TextPart("goodbye")}
	_, err := s.SendMessage(anon(t), other)
	wantErr(t, "resend with other content", err, a2a.ErrInvalidParams)
	_, err = testkit.Collect(s.SendStreamingMessage(anon(t), other))
	wantErr(t, "streaming resend with other content", err, a2a.ErrInvalidParams)
	if n := calls.Load(); n != 1 {
		t.Errorf("agent ran %d times, want once", n)
	}
	got, _ := s.GetTask(anon(t), &a2a.GetTaskRequest{Id: first.Id})
	if !proto.Equal(got, first) {
		t.Errorf("task changed: %v", got)
	}
}

// resendConcurrently: twenty identical sends at once run the agent once.
func resendConcurrently(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	s := newServer(t, server.Options{Agent: counting(agents.Conformance(), &calls)})
	req := msgReq("slow 20")
	var wg sync.WaitGroup
	results := make([]*a2a.Task, 20)
	errs := make([]error, 20)
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := s.SendMessage(anon(t), proto.Clone(req).(*a2a.SendMessageRequest))
			results[i], errs[i] = resp.GetTask(), err
		}()
	}
	wg.Wait()
	for i := range 20 {
		if errs[i] != nil || results[i] == nil {
			t.Fatalf("send %d: %v, %v", i, results[i], errs[i])
		}
		if results[i].Id != results[0].Id || state(results[i]) != a2a.TaskState_TASK_STATE_COMPLETED {
			t.Errorf("send %d returned task %s in %s; want %s COMPLETED", i, results[i].Id, short(state(results[i])), results[0].Id)
		}
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("agent ran %d times for 20 identical sends, want once", n)
	}
	got, _ := s.GetTask(anon(t), &a2a.GetTaskRequest{Id: results[0].Id})
	if n := countMessage(got, req.Message.MessageId); n != 1 {
		t.Errorf("message appears %d times in history", n)
	}
}

// resendBeforeMade: a resend sent while the agent has not yet made the
// task (nothing emitted) waits for it, and runs nothing.
func resendBeforeMade(t *testing.T) {
	t.Parallel()
	for name, store := range map[string]func(t *testing.T) server.Options{
		"memory": func(t *testing.T) server.Options { return server.Options{Store: memstore.New()} },
		"sqlite": func(t *testing.T) server.Options {
			st, err := sqlitestore.Open(filepath.Join(t.TempDir(), "p.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return server.Options{Store: st}
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var calls atomic.Int32
			started, release := make(chan struct{}, 2), make(chan struct{})
			o := store(t)
			o.Agent = server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
				calls.Add(1)
				started <- struct{}{}
				<-release // nothing emitted yet: no task, no record
				return em.Status(a2a.TaskState_TASK_STATE_COMPLETED, nil)
			})
			s := newServer(t, o)
			req := msgReq("once")
			results := make(chan *a2a.Task, 2)
			send := func() {
				resp, err := s.SendMessage(anon(t), proto.Clone(req).(*a2a.SendMessageRequest))
				if err != nil {
					t.Error(err)
				}
				results <- resp.GetTask()
			}
			go send()
			<-started
			go send()
			select {
			case <-started:
				t.Error("the resend ran the agent again")
			case <-time.After(100 * time.Millisecond):
			}
			close(release)
			first, again := <-results, <-results
			if first.GetId() == "" || again.GetId() != first.GetId() || state(again) != a2a.TaskState_TASK_STATE_COMPLETED {
				t.Errorf("the two sends returned %v and %v, want one COMPLETED task", first, again)
			}
			if n := calls.Load(); n != 1 {
				t.Errorf("agent ran %d times, want once", n)
			}
		})
	}
}

// resendDirectReply: a resend of a message answered directly gets the same reply.
func resendDirectReply(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	s := newServer(t, server.Options{Agent: counting(agents.Conformance(), &calls)})
	req := msgReq("message")
	first, err := s.SendMessage(anon(t), proto.Clone(req).(*a2a.SendMessageRequest))
	if err != nil || first.GetMessage() == nil {
		t.Fatalf("first send: %v, %v", first, err)
	}
	again, err := s.SendMessage(anon(t), proto.Clone(req).(*a2a.SendMessageRequest))
	if err != nil || !proto.Equal(again.GetMessage(), first.GetMessage()) {
		t.Errorf("resend = %v, %v; want the same reply %v", again, err, first.GetMessage())
	}
	evs, err := testkit.Collect(s.SendStreamingMessage(anon(t), proto.Clone(req).(*a2a.SendMessageRequest)))
	if err != nil || len(evs) != 1 || !proto.Equal(evs[0].Response.GetMessage(), first.GetMessage()) {
		t.Errorf("streaming resend = %v, %v", describeAll(evs), err)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("agent ran %d times, want once", n)
	}
}

// resendPerPrincipal: messageIds are remembered per principal.
func resendPerPrincipal(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	s := newServer(t, server.Options{RequireAuth: true, Agent: counting(agents.Conformance(), &calls)})
	req := msgReq("hello")
	a := taskOf(t)(s.SendMessage(as(t, "alice"), proto.Clone(req).(*a2a.SendMessageRequest)))
	b := taskOf(t)(s.SendMessage(as(t, "bob"), proto.Clone(req).(*a2a.SendMessageRequest)))
	if a.Id == b.Id || calls.Load() != 2 {
		t.Errorf("the same messageId from two principals gave tasks %s and %s with %d runs; want two of each", a.Id, b.Id, calls.Load())
	}
}

// resendFollowUp: a resent follow-up returns its task and is stored once.
func resendFollowUp(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	s := newServer(t, server.Options{Agent: counting(agents.Conformance(), &calls)})
	parked := sendTask(t, s, anon(t), "input-required")
	f := followReq(parked.Id, "more")
	r1, err := followUp(t, s, "", f)
	done := mustTask(t, r1, err)
	again := taskOf(t)(s.SendMessage(anon(t), proto.Clone(f).(*a2a.SendMessageRequest)))
	if !proto.Equal(done, again) || calls.Load() != 2 {
		t.Errorf("resent follow-up = %v (%d runs); want %v and 2 runs", again, calls.Load(), done)
	}
	got, _ := s.GetTask(anon(t), &a2a.GetTaskRequest{Id: parked.Id})
	if n := countMessage(got, f.Message.MessageId); n != 1 {
		t.Errorf("follow-up appears %d times in history", n)
	}
}

func countMessage(t *a2a.Task, id string) int {
	n := 0
	for _, m := range t.GetHistory() {
		if m.MessageId == id {
			n++
		}
	}
	return n
}

// TestResendWhileInterrupted: a resend (docs/decisions.md#b14) of a message
// whose task is INPUT_REQUIRED or AUTH_REQUIRED returns that task at once, as
// the first send did, also while Execute is still running after parking the
// task, or has detached (as an AUTH_REQUIRED agent waiting for an out-of-band
// sign-in does).
func TestResendWhileInterrupted(t *testing.T) {
	t.Parallel()
	hold := make(chan struct{})
	t.Cleanup(func() { close(hold) })
	agent := server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		switch a2a.FirstText(req.Message) {
		case "input":
			if err := em.StatusText(a2a.TaskState_TASK_STATE_INPUT_REQUIRED, "which one?"); err != nil {
				return err
			}
			select { // tidying up before returning
			case <-hold:
			case <-ctx.Done():
			}
			return nil
		case "auth":
			if err := em.StatusText(a2a.TaskState_TASK_STATE_AUTH_REQUIRED, "sign in first"); err != nil {
				return err
			}
			em.Detach()
			go func() {
				select {
				case <-hold:
				case <-ctx.Done():
					return
				}
				_ = em.Status(a2a.TaskState_TASK_STATE_COMPLETED, nil)
			}()
			return nil
		}
		return nil
	})
	s := newServer(t, server.Options{Agent: agent})
	for _, text := range []string{"input", "auth"} {
		t.Run(text, func(t *testing.T) {
			t.Parallel()
			req := msgReq(text)
			first := taskOf(t)(s.SendMessage(anon(t), proto.Clone(req).(*a2a.SendMessageRequest)))
			if !a2a.IsInterrupted(state(first)) {
				t.Fatalf("first send returned %s", short(state(first)))
			}
			ctx, cancel := context.WithTimeout(anon(t), 3*time.Second)
			defer cancel()
			resp, err := s.SendMessage(ctx, proto.Clone(req).(*a2a.SendMessageRequest))
			if err != nil || !proto.Equal(resp.GetTask(), first) {
				t.Errorf("blocking resend = %v, %v; want the %s task at once", resp, err, short(state(first)))
			}
			sctx, scancel := context.WithTimeout(anon(t), 3*time.Second)
			defer scancel()
			evs, err := testkit.Collect(s.SendStreamingMessage(sctx, proto.Clone(req).(*a2a.SendMessageRequest)))
			if err != nil || len(evs) == 0 || evs[0].Response.GetTask().GetId() != first.Id {
				t.Errorf("streaming resend = %v, %v", describeAll(evs), err)
			}
			if text == "input" && sctx.Err() != nil {
				t.Errorf("streaming resend of an INPUT_REQUIRED task stayed open: %v", describeAll(evs))
			}
		})
	}
}

// TestIdempotencySurvivesRestart: a resend after a restart on a durable
// store returns the original task without running the agent again.
func TestIdempotencySurvivesRestart(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "tasks.db")
	req := msgReq("hello")
	var calls atomic.Int32
	var first *a2a.Task
	for round := range 2 {
		st, err := sqlitestore.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		s, err := server.New(&server.Options{Card: testCard(true, true), Agent: counting(agents.Conformance(), &calls), Store: st, Logger: quiet,
			Push: testkit.NoDelivery{}})
		if err != nil {
			t.Fatal(err)
		}
		task := taskOf(t)(s.SendMessage(anon(t), proto.Clone(req).(*a2a.SendMessageRequest)))
		if round == 0 {
			first = task
		} else if !proto.Equal(task, first) {
			t.Errorf("resend after restart = %v, want %v", task, first)
		}
		if err := s.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		st.Close()
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("agent ran %d times, want once", n)
	}
}
