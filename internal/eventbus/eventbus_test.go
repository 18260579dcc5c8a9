package eventbus_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/eventbus"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/memstore"
)

var sc = taskstore.Scope{Tenant: "t", Owner: "o"}

func statusEvent(id string, seq uint64, st a2a.TaskState) taskstore.Event {
	return taskstore.Event{Seq: seq, Response: &a2a.StreamResponse{Payload: &a2a.StreamResponse_StatusUpdate{
		StatusUpdate: &a2a.TaskStatusUpdateEvent{TaskId: id, ContextId: "c", Status: &a2a.TaskStatus{State: st, Timestamp: timestamppb.Now()}}}}}
}

func create(t *testing.T, s taskstore.Tasks, id string) {
	t.Helper()
	tk := &a2a.Task{Id: id, ContextId: "c", Status: &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_SUBMITTED}}
	if err := s.CreateTask(t.Context(), sc, tk, taskstore.Event{Seq: 1, Response: &a2a.StreamResponse{Payload: &a2a.StreamResponse_Task{Task: tk}}}); err != nil {
		t.Fatal(err)
	}
}

// TestFollowWakesOnNotify follows a task with a poll of an hour: every
// event appended and notified arrives, in order, and the terminal one
// ends the sequence.
func TestFollowWakesOnNotify(t *testing.T) {
	s := memstore.New()
	bus := &eventbus.Local{}
	create(t, s, "t1")
	got := make(chan uint64, 16)
	done := make(chan error, 1)
	go func() {
		for ev, err := range eventbus.Follow(t.Context(), s, bus, sc, "t1", 0, time.Hour) {
			if err != nil {
				done <- err
				return
			}
			got <- ev.Seq
		}
		done <- nil
	}()
	if seq := <-got; seq != 1 {
		t.Fatalf("first event %d, want 1", seq)
	}
	states := []a2a.TaskState{a2a.TaskState_TASK_STATE_WORKING, a2a.TaskState_TASK_STATE_WORKING, a2a.TaskState_TASK_STATE_COMPLETED}
	for i, st := range states {
		seq := uint64(i + 2)
		if err := s.Append(t.Context(), sc, "t1", statusEvent("t1", seq, st)); err != nil {
			t.Fatal(err)
		}
		if err := bus.Notify(t.Context(), "t1", seq); err != nil {
			t.Fatal(err)
		}
		select {
		case g := <-got:
			if g != seq {
				t.Fatalf("event %d, want %d", g, seq)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("event %d did not arrive after Notify", seq)
		}
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Follow did not end after the terminal event")
	}
}

// TestFollowPollsWithoutNotify appends without notifying: the fallback
// poll still delivers every event.
func TestFollowPollsWithoutNotify(t *testing.T) {
	s := memstore.New()
	create(t, s, "t2")
	go func() {
		for seq := uint64(2); seq <= 4; seq++ {
			st := a2a.TaskState_TASK_STATE_WORKING
			if seq == 4 {
				st = a2a.TaskState_TASK_STATE_FAILED
			}
			time.Sleep(20 * time.Millisecond)
			if err := s.Append(context.Background(), sc, "t2", statusEvent("t2", seq, st)); err != nil {
				panic(err)
			}
		}
	}()
	var seqs []uint64
	for ev, err := range eventbus.Follow(t.Context(), s, &eventbus.Local{}, sc, "t2", 1, 10*time.Millisecond) {
		if err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, ev.Seq)
	}
	if len(seqs) != 3 || seqs[0] != 2 || seqs[2] != 4 {
		t.Fatalf("events %v, want [2 3 4]", seqs)
	}
}

// TestFollowErrors: a task outside the scope is ErrNotFound; a cancelled
// context ends the wait with its error.
func TestFollowErrors(t *testing.T) {
	s := memstore.New()
	create(t, s, "t3")
	for _, err := range eventbus.Follow(t.Context(), s, &eventbus.Local{}, taskstore.Scope{Tenant: "other"}, "t3", 0, time.Hour) {
		if !errors.Is(err, taskstore.ErrNotFound) {
			t.Fatalf("other scope: %v, want ErrNotFound", err)
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var last error
	for ev, err := range eventbus.Follow(ctx, s, &eventbus.Local{}, sc, "t3", 0, time.Hour) {
		if err != nil {
			last = err
			continue
		}
		if ev.Seq == 1 {
			cancel()
		}
	}
	if !errors.Is(last, context.Canceled) {
		t.Fatalf("after cancel: %v, want context.Canceled", last)
	}
}

// TestWatchStop: a stopped watch is no longer woken, and others are.
func TestWatchStop(t *testing.T) {
	bus := &eventbus.Local{}
	a, stopA := bus.Watch("x")
	b, stopB := bus.Watch("x")
	defer stopB()
	stopA()
	stopA() // twice is fine
	bus.Notify(t.Context(), "x", 1)
	select {
	case <-a:
		t.Fatal("a stopped watch was woken")
	default:
	}
	select {
	case <-b:
	default:
		t.Fatal("a live watch was not woken")
	}
}

// TestWakeAllSkipsRequests: a bus that resynchronizes (WakeAll) wakes the
// watchers of every key but request keys, which only a Wake of their own
// key wakes.
func TestWakeAllSkipsRequests(t *testing.T) {
	var r eventbus.Registry
	logKey, reqKey := "t1", eventbus.RequestKey("cancel:t1")
	if eventbus.IsRequest(logKey) || !eventbus.IsRequest(reqKey) {
		t.Fatalf("IsRequest(%q), IsRequest(%q) = %v, %v", logKey, reqKey, eventbus.IsRequest(logKey), eventbus.IsRequest(reqKey))
	}
	logW, stopLog := r.Add(logKey)
	defer stopLog()
	reqW, stopReq := r.Add(reqKey)
	defer stopReq()
	r.WakeAll()
	if !woken(logW) {
		t.Error("WakeAll did not wake the watcher of a log key")
	}
	if woken(reqW) {
		t.Error("WakeAll woke the watcher of a request key")
	}
	r.Wake(reqKey)
	if !woken(reqW) {
		t.Error("Wake of a request key did not wake its watcher")
	}
	if woken(logW) {
		t.Error("Wake of a request key woke another key's watcher")
	}
}

// woken reports whether ch holds a wake-up, taking it.
func woken(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
