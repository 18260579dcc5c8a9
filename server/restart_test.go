package server_test

// Restarts, retention and shutdown.

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/server"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/memstore"
	"parley.dev/parley/taskstore/sqlitestore"
)

// TestRestartFailsLostTasks: server.New fails tasks left SUBMITTED or
// WORKING in a durable store (their execution died with the process) and
// leaves interrupted and terminal tasks alone.
func TestRestartFailsLostTasks(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "tasks.db")
	ts := a2a.Timestamp(time.Now().Add(-time.Minute))
	scope := taskstore.Scope{Owner: "alice"}
	mk := func(id string, st a2a.TaskState) *a2a.Task {
		m := a2a.UserMessage("work " + id)
		m.TaskId, m.ContextId = id, "ctx-"+id
		return &a2a.Task{Id: id, ContextId: "ctx-" + id, History: []*a2a.Message{m},
			Status: &a2a.TaskStatus{State: st, Timestamp: ts}}
	}
	before := map[string]*a2a.Task{
		"working":   mk("working", a2a.TaskState_TASK_STATE_WORKING),
		"submitted": mk("submitted", a2a.TaskState_TASK_STATE_SUBMITTED),
		"input":     mk("input", a2a.TaskState_TASK_STATE_INPUT_REQUIRED),
		"auth":      mk("auth", a2a.TaskState_TASK_STATE_AUTH_REQUIRED),
		"completed": mk("completed", a2a.TaskState_TASK_STATE_COMPLETED),
	}
	st, err := sqlitestore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range before {
		if err := st.CreateTask(context.Background(), scope, tk, taskstore.Event{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	st, err = sqlitestore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	s := newServer(t, server.Options{Store: st, RequireAuth: true})
	for id, old := range before {
		got, err := s.GetTask(as(t, "alice"), &a2a.GetTaskRequest{Id: id})
		if err != nil {
			t.Errorf("%s: %v", id, err)
			continue
		}
		switch id {
		case "working", "submitted":
			msg := got.GetStatus().GetMessage()
			if state(got) != a2a.TaskState_TASK_STATE_FAILED || a2a.FirstText(msg) == "" || msg.GetTaskId() != id {
				t.Errorf("%s after restart: %s, status message %v; want FAILED saying why", id, short(state(got)), msg)
			}
			if !got.Status.Timestamp.AsTime().After(ts.AsTime()) {
				t.Errorf("%s: status timestamp not updated", id)
			}
		default:
			if !proto.Equal(got, old) {
				t.Errorf("%s changed in the restart: %v", id, got)
			}
		}
	}
	// The interrupted one can still be continued.
	done := taskOf(t)(followUp(t, s, "alice", followReq("input", "answer")))
	if state(done) != a2a.TaskState_TASK_STATE_COMPLETED {
		t.Errorf("follow-up after restart ended %s", short(state(done)))
	}
}

// TestRestartWithRunningAgent: a first server is still running an agent
// when a second server opens the same database, as after a crash; the
// second fails the task at start-up.
func TestRestartWithRunningAgent(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "tasks.db")
	started := make(chan struct{})
	blocking := server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		if err := em.Status(a2a.TaskState_TASK_STATE_WORKING, nil); err != nil {
			return err
		}
		close(started)
		<-ctx.Done()
		return nil
	})
	st1, err := sqlitestore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st1.Close() })
	s1 := newServer(t, server.Options{Store: st1, Agent: blocking})
	task := taskOf(t)(s1.SendMessage(anon(t), withConfig(msgReq("long"), &a2a.SendMessageConfiguration{ReturnImmediately: true})))
	<-started

	st2, err := sqlitestore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st2.Close() })
	s2 := newServer(t, server.Options{Store: st2})
	got, err := s2.GetTask(anon(t), &a2a.GetTaskRequest{Id: task.Id})
	if err != nil || state(got) != a2a.TaskState_TASK_STATE_FAILED || got.Status.GetMessage() == nil {
		t.Errorf("task on the second server = %v, %v; want FAILED with a status message", got, err)
	}
}

// TestRetention: terminal tasks older than Options.Retention disappear;
// others stay. The sweep runs every max(Retention/10, 1s) (up to a minute)
// with no way to trigger it, so this test needs about a second and polls.
func TestRetention(t *testing.T) {
	t.Parallel()
	var now atomic.Int64
	now.Store(time.Date(2030, 6, 1, 12, 0, 0, 0, time.UTC).UnixNano())
	clock := func() time.Time { return time.Unix(0, now.Load()).UTC() }
	s := newServer(t, server.Options{Retention: time.Second, Now: clock})
	old := sendTask(t, s, anon(t), "hello")
	oldFailed := sendTask(t, s, anon(t), "fail")
	parked := sendTask(t, s, anon(t), "input-required")
	now.Add(int64(time.Hour))
	fresh := sendTask(t, s, anon(t), "hello")

	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err1 := s.GetTask(anon(t), &a2a.GetTaskRequest{Id: old.Id})
		_, err2 := s.GetTask(anon(t), &a2a.GetTaskRequest{Id: oldFailed.Id})
		if errors.Is(err1, a2a.ErrTaskNotFound) && errors.Is(err2, a2a.ErrTaskNotFound) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("old terminal tasks still there after 5 s: %v, %v", err1, err2)
		}
		time.Sleep(20 * time.Millisecond) // polling: the sweep has no hook
	}
	for _, tk := range []*a2a.Task{parked, fresh} {
		if _, err := s.GetTask(anon(t), &a2a.GetTaskRequest{Id: tk.Id}); err != nil {
			t.Errorf("task %s (%s) removed: %v", tk.Id, short(state(tk)), err)
		}
	}
	res, _ := s.ListTasks(anon(t), &a2a.ListTasksRequest{})
	if res.GetTotalSize() != 2 {
		t.Errorf("%d tasks listed, want 2", res.GetTotalSize())
	}
}

func TestCloseFailsRunningTasks(t *testing.T) {
	t.Parallel()
	t.Run("running", func(t *testing.T) {
		t.Parallel()
		started := make(chan struct{})
		agent := server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
			if err := em.Status(a2a.TaskState_TASK_STATE_WORKING, nil); err != nil {
				return err
			}
			close(started)
			<-ctx.Done()
			if !errors.Is(context.Cause(ctx), server.ErrShutdown) {
				t.Errorf("cause = %v, want ErrShutdown", context.Cause(ctx))
			}
			return nil
		})
		store := memstore.New()
		s := newServer(t, server.Options{Agent: agent, Store: store})
		task := taskOf(t)(s.SendMessage(anon(t), withConfig(msgReq("x"), &a2a.SendMessageConfiguration{ReturnImmediately: true})))
		<-started
		if err := s.Close(anon(t)); err != nil {
			t.Fatal(err)
		}
		got, err := store.GetTask(context.Background(), taskstore.Scope{}, task.Id)
		if err != nil || state(got) != a2a.TaskState_TASK_STATE_FAILED || !strings.Contains(a2a.FirstText(got.Status.GetMessage()), "shut down") {
			t.Errorf("after Close: %v, %v; want FAILED saying the server shut down", got, err)
		}
	})
	// A detached agent that ignores its canceled context still leaves its
	// task FAILED after Close: no task stays WORKING because an agent
	// forgot it.
	t.Run("detached", func(t *testing.T) {
		t.Parallel()
		sawShutdown := make(chan struct{})
		agent := server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
			if err := em.Status(a2a.TaskState_TASK_STATE_WORKING, nil); err != nil {
				return err
			}
			em.Detach()
			go func() {
				<-ctx.Done()
				close(sawShutdown)
			}()
			return nil
		})
		store := memstore.New()
		s := newServer(t, server.Options{Agent: agent, Store: store})
		task := taskOf(t)(s.SendMessage(anon(t), withConfig(msgReq("x"), &a2a.SendMessageConfiguration{ReturnImmediately: true})))
		if err := s.Close(anon(t)); err != nil {
			t.Fatal(err)
		}
		within(t, sawShutdown, "the detached agent's context to end")
		got, err := store.GetTask(context.Background(), taskstore.Scope{}, task.Id)
		if err != nil || state(got) != a2a.TaskState_TASK_STATE_FAILED {
			t.Errorf("detached task after Close is %s, %v; want FAILED", short(state(got)), err)
		}
	})
}
