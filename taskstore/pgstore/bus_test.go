package pgstore_test

import (
	"context"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/eventbus"
	"parley.dev/parley/internal/pgtest"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/pgstore"
)

var sc = taskstore.Scope{Tenant: "t", Owner: "o"}

// replica is what one process holds: its store (its own pool) and bus.
type replica struct {
	store *pgstore.Store
	bus   *pgstore.Bus
}

func openReplicas(t *testing.T, n int) []replica {
	t.Helper()
	u := pgtest.NewSchema(t, pgtest.NewDatabase(t))
	var out []replica
	for range n {
		s, err := pgstore.Open(t.Context(), u, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := pgstore.NewBus(t.Context(), s.Pool(), "")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close(); s.Close() })
		out = append(out, replica{s, b})
	}
	return out
}

func statusEvent(id string, seq uint64, st a2a.TaskState) taskstore.Event {
	return taskstore.Event{Seq: seq, Response: &a2a.StreamResponse{Payload: &a2a.StreamResponse_StatusUpdate{
		StatusUpdate: &a2a.TaskStatusUpdateEvent{TaskId: id, ContextId: "c", Status: &a2a.TaskStatus{State: st, Timestamp: timestamppb.Now()}}}}}
}

// follow runs eventbus.Follow with an hour's poll, so only wake-ups move
// it, and sends what it yields on a channel.
func follow(t *testing.T, r replica, id string, after uint64) <-chan uint64 {
	out := make(chan uint64, 64)
	go func() {
		defer close(out)
		for ev, err := range eventbus.Follow(t.Context(), r.store, r.bus, sc, id, after, time.Hour) {
			if err != nil {
				return
			}
			out <- ev.Seq
		}
	}()
	return out
}

func expect(t *testing.T, ch <-chan uint64, seq uint64, what string) {
	t.Helper()
	select {
	case got := <-ch:
		if got != seq {
			t.Fatalf("%s: event %d, want %d", what, got, seq)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: event %d did not arrive", what, seq)
	}
}

// TestFollowAcrossReplicas writes a task's events through one replica
// (store and bus) while two others follow it through theirs: both get
// every event, in order, woken by NOTIFY alone, and stop at the end.
func TestFollowAcrossReplicas(t *testing.T) {
	rs := openReplicas(t, 3)
	writer := rs[0]
	tk := &a2a.Task{Id: "x", ContextId: "c", Status: &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_SUBMITTED}}
	if err := writer.store.CreateTask(t.Context(), sc, tk, taskstore.Event{Seq: 1, Response: &a2a.StreamResponse{Payload: &a2a.StreamResponse_Task{Task: tk}}}); err != nil {
		t.Fatal(err)
	}
	followers := []<-chan uint64{follow(t, rs[1], "x", 0), follow(t, rs[2], "x", 0)}
	for i, f := range followers {
		expect(t, f, 1, "follower "+string(rune('1'+i)))
	}
	for seq := uint64(2); seq <= 6; seq++ {
		st := a2a.TaskState_TASK_STATE_WORKING
		if seq == 6 {
			st = a2a.TaskState_TASK_STATE_COMPLETED
		}
		if err := writer.store.Append(t.Context(), sc, "x", statusEvent("x", seq, st)); err != nil {
			t.Fatal(err)
		}
		if err := writer.bus.Notify(t.Context(), "x", seq); err != nil {
			t.Fatal(err)
		}
		for i, f := range followers {
			expect(t, f, seq, "follower "+string(rune('1'+i)))
		}
	}
	for _, f := range followers {
		select {
		case _, open := <-f:
			if open {
				t.Fatal("an event after the terminal one")
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Follow did not end at the terminal event")
		}
	}
}

// TestReconnect kills the listening session of a follower's bus: the bus
// connects again and wakes its watchers, so an event appended meanwhile
// still arrives without waiting for the hour's poll; the watcher of a
// request key is not woken by that, only by a request.
func TestReconnect(t *testing.T) {
	rs := openReplicas(t, 2)
	writer, reader := rs[0], rs[1]
	tk := &a2a.Task{Id: "y", ContextId: "c", Status: &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_SUBMITTED}}
	if err := writer.store.CreateTask(t.Context(), sc, tk, taskstore.Event{Seq: 1, Response: &a2a.StreamResponse{Payload: &a2a.StreamResponse_Task{Task: tk}}}); err != nil {
		t.Fatal(err)
	}
	f := follow(t, reader, "y", 0)
	expect(t, f, 1, "before the kill")
	// Watchers of a key nobody notifies: the reconnection wakes that of a
	// log, never that of a request.
	idle, stopIdle := reader.bus.Watch("idle")
	defer stopIdle()
	req, stopReq := reader.bus.Watch(eventbus.RequestKey("cancel:y"))
	defer stopReq()
	// Both buses listen; kill every listening session, then append
	// and notify while they are down.
	var killed int
	if err := writer.store.Pool().QueryRow(t.Context(), `SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE query LIKE 'LISTEN %' AND datname = current_database() AND pid <> pg_backend_pid()`).Scan(&killed); err != nil || killed != 2 {
		t.Fatalf("killed %d listening sessions, want 2 (%v)", killed, err)
	}
	if err := writer.store.Append(t.Context(), sc, "y", statusEvent("y", 2, a2a.TaskState_TASK_STATE_WORKING)); err != nil {
		t.Fatal(err)
	}
	writer.bus.Notify(context.Background(), "y", 2)
	expect(t, f, 2, "after the kill")
	deadline := time.Now().Add(10 * time.Second)
	for !reader.bus.Listening() && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if !reader.bus.Listening() {
		t.Fatal("the bus did not listen again")
	}
	select {
	case <-idle:
	case <-time.After(10 * time.Second):
		t.Fatal("the reconnection did not wake a watcher")
	}
	select {
	case <-req:
		t.Fatal("the reconnection woke the watcher of a request key")
	default: // woken in the same pass as idle's, had it been
	}
	writer.bus.Notify(context.Background(), eventbus.RequestKey("cancel:y"), 0)
	select {
	case <-req:
	case <-time.After(10 * time.Second):
		t.Fatal("a request was not delivered after the reconnection")
	}
	if err := writer.store.Append(t.Context(), sc, "y", statusEvent("y", 3, a2a.TaskState_TASK_STATE_WORKING)); err != nil {
		t.Fatal(err)
	}
	writer.bus.Notify(context.Background(), "y", 3)
	expect(t, f, 3, "after the reconnection")
}

// TestNotifyMany wakes, in another process, the watchers of every task
// it names.
func TestNotifyMany(t *testing.T) {
	rs := openReplicas(t, 2)
	b := rs[1].bus
	w1, stop1 := b.Watch("t1")
	defer stop1()
	w2, stop2 := b.Watch("t2")
	defer stop2()
	if err := rs[0].bus.NotifyMany(t.Context(), []string{"t1", "t2"}); err != nil {
		t.Fatal(err)
	}
	for _, w := range []<-chan struct{}{w1, w2} {
		select {
		case <-w:
		case <-time.After(5 * time.Second):
			t.Fatal("a watcher was not woken")
		}
	}
}
