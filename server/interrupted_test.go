package server_test

// TaskHandle.EndInterrupted: an agent ends a task that waits for input
// with no execution (spec §4.1.3).

import (
	"context"
	"errors"
	"iter"
	"sync"
	"testing"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/pgtest"
	"parley.dev/parley/internal/testkit"
	"parley.dev/parley/server"
)

// handles is an agent that asks for input on every new task, keeping the
// task's handle, and completes the task on a follow-up; on "hold" it
// first waits on release, having emitted nothing.
type handles struct {
	mu      sync.Mutex
	byTask  map[string]server.TaskHandle
	held    chan struct{} // a "hold" follow-up is running
	release chan struct{}
}

func newHandles() *handles {
	return &handles{byTask: map[string]server.TaskHandle{}, held: make(chan struct{}, 1), release: make(chan struct{})}
}

func (h *handles) Execute(ctx context.Context, req *server.Request, em *server.Emitter) error {
	if req.Task == nil {
		h.mu.Lock()
		h.byTask[req.TaskID] = em.Handle()
		h.mu.Unlock()
		return em.StatusText(a2a.StateInputRequired, "which one?")
	}
	if a2a.FirstText(req.Message) == "hold" {
		h.held <- struct{}{}
		<-h.release
	}
	return em.Status(a2a.StateCompleted, nil)
}

func (h *handles) of(t *testing.T, id string) server.TaskHandle {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	hd, ok := h.byTask[id]
	if !ok || hd.ID() != id {
		t.Fatalf("no handle for task %s", id)
	}
	return hd
}

func TestEndInterrupted(t *testing.T) {
	t.Parallel()
	h := newHandles()
	s := newServer(t, server.Options{Agent: h})
	ctx := anon(t)

	t.Run("interrupted, no execution: ends", func(t *testing.T) {
		task := sendTask(t, s, ctx, "start")
		next, stop := iter.Pull2(s.SubscribeToTask(shortCtx(t, ""), &a2a.SubscribeToTaskRequest{Id: task.Id}))
		defer stop()
		if _, err, _ := next(); err != nil { // the snapshot: subscribed
			t.Fatalf("SubscribeToTask: %v", err)
		}
		if err := h.of(t, task.Id).EndInterrupted(ctx, a2a.StateFailed, a2a.AgentMessage("what it waited on is gone")); err != nil {
			t.Fatalf("EndInterrupted = %v, want nil", err)
		}
		evs, err := testkit.Rest(next)
		if err != nil || len(evs) == 0 {
			t.Fatalf("SubscribeToTask: %d events, %v", len(evs), err)
		}
		last := evs[len(evs)-1]
		if got := last.Response.GetStatusUpdate().GetStatus(); got.GetState() != a2a.StateFailed || a2a.FirstText(got.GetMessage()) != "what it waited on is gone" {
			t.Errorf("subscriber's last event = %v, want FAILED with the message", describe(last))
		}
		got, err := s.GetTask(ctx, &a2a.GetTaskRequest{Id: task.Id})
		if err != nil || state(got) != a2a.StateFailed || got.GetStatus().GetMessage().GetTaskId() != task.Id {
			t.Errorf("GetTask = %v, %v; want FAILED, its message stamped with the task", got.GetStatus(), err)
		}
		_, err = s.SendMessage(ctx, followReq(task.Id, "the answer"))
		wantErr(t, "SendMessage after EndInterrupted", err, a2a.ErrUnsupportedOperation)
		if err := h.of(t, task.Id).EndInterrupted(ctx, a2a.StateFailed, nil); !errors.Is(err, server.ErrTaskClosed) {
			t.Errorf("EndInterrupted on a FAILED task = %v, want ErrTaskClosed", err)
		}
	})

	t.Run("execution running: left alone", func(t *testing.T) { endWhileFollowedUp(t, h, s, s) })

	t.Run("not a terminal state", func(t *testing.T) {
		task := sendTask(t, s, ctx, "start")
		if err := h.of(t, task.Id).EndInterrupted(ctx, a2a.StateWorking, nil); err == nil {
			t.Error("EndInterrupted(WORKING) = nil, want an error")
		}
		if got, _ := s.GetTask(ctx, &a2a.GetTaskRequest{Id: task.Id}); state(got) != a2a.StateInputRequired {
			t.Errorf("task is %s, want INPUT_REQUIRED", short(state(got)))
		}
	})
}

// TestEndInterruptedRacesFollowUp: of a follow-up and EndInterrupted sent
// at once, exactly one wins, and the task ends as the winner says.
func TestEndInterruptedRacesFollowUp(t *testing.T) {
	t.Parallel()
	h := newHandles()
	s := newServer(t, server.Options{Agent: h})
	raceEndAndFollowUp(t, h, s, s)
}

// TestClusterEndInterrupted: with replicas, EndInterrupted on the replica
// that asked gives way to a follow-up another replica took, even before
// that one's agent wrote anything; and of the two sent at once, exactly
// one wins.
func TestClusterEndInterrupted(t *testing.T) {
	url := pgtest.NewDatabase(t)
	h := newHandles()
	a, _ := replica(t, url, 2*time.Second, server.Options{Agent: h})
	b, _ := replica(t, url, 2*time.Second, server.Options{Agent: h})
	endWhileFollowedUp(t, h, a, b)
	raceEndAndFollowUp(t, h, a, b)
}

// endWhileFollowedUp starts a task on start, and calls EndInterrupted
// while the agent handles its follow-up, sent to follow, before emitting
// anything: the task is left to the follow-up, which completes it. It
// closes h.release.
func endWhileFollowedUp(t *testing.T, h *handles, start, follow *server.Server) {
	ctx := anon(t)
	task := sendTask(t, start, ctx, "start")
	done := make(chan *a2a.Task)
	go func() {
		resp, _ := follow.SendMessage(ctx, followReq(task.Id, "hold"))
		done <- resp.GetTask()
	}()
	<-h.held
	if err := h.of(t, task.Id).EndInterrupted(ctx, a2a.StateFailed, nil); !errors.Is(err, server.ErrNotInterrupted) {
		t.Errorf("EndInterrupted while a follow-up runs = %v, want ErrNotInterrupted", err)
	}
	close(h.release)
	if got := <-done; state(got) != a2a.StateCompleted {
		t.Errorf("the follow-up ended %s, want COMPLETED", short(state(got)))
	}
}

// raceEndAndFollowUp starts tasks on start and sends, for each, the
// follow-up on follow while EndInterrupted runs.
func raceEndAndFollowUp(t *testing.T, h *handles, start, follow *server.Server) {
	ctx := anon(t)
	for range 30 {
		task := sendTask(t, start, ctx, "start")
		hd := h.of(t, task.Id)
		var endErr, sendErr error
		var wg sync.WaitGroup
		wg.Go(func() { endErr = hd.EndInterrupted(ctx, a2a.StateFailed, a2a.AgentMessage("gone")) })
		wg.Go(func() { _, sendErr = followUp(t, follow, "", followReq(task.Id, "answer")) })
		wg.Wait()
		got, err := follow.GetTask(ctx, &a2a.GetTaskRequest{Id: task.Id})
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case endErr == nil && errors.Is(sendErr, a2a.ErrUnsupportedOperation) && state(got) == a2a.StateFailed:
		case errors.Is(endErr, server.ErrNotInterrupted) || errors.Is(endErr, server.ErrTaskClosed):
			if sendErr != nil || state(got) != a2a.StateCompleted {
				t.Fatalf("follow-up won (EndInterrupted = %v), but SendMessage = %v and the task is %s", endErr, sendErr, short(state(got)))
			}
		default:
			t.Fatalf("EndInterrupted = %v, SendMessage = %v, task %s: want one winner", endErr, sendErr, short(state(got)))
		}
	}
}
