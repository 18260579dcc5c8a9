package sqlitestore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
)

// TestGroupCommitSavepoints runs one batch by hand: the operation that
// fails, after a change of its own, loses only that change.
func TestGroupCommitSavepoints(t *testing.T) {
	ctx := t.Context()
	s := openTemp(t)
	defer s.Close()
	create := func(id string) func(w *wtx) error {
		return func(w *wtx) error {
			_, err := w.exec(ctx, s.createTask, id, scope.Tenant, scope.Owner, "c", 1, 0, 0, []byte{}, nil, false, 0, nil)
			return err
		}
	}
	boom := errors.New("boom")
	ops := []*writeOp{
		{ctx: ctx, fn: create("a")},
		{ctx: ctx, fn: func(w *wtx) error { // a change, then a Go error
			if err := create("b")(w); err != nil {
				return err
			}
			return boom
		}},
		{ctx: ctx, fn: func(w *wtx) error { // a change, then an SQLite error (NOT NULL digest)
			if err := create("c")(w); err != nil {
				return err
			}
			_, err := w.exec(ctx, s.insertMessage, scope.Tenant, scope.Owner, "m", nil, "x", false, nil, 0)
			return err
		}},
		{ctx: ctx, fn: create("d")},
	}
	for _, op := range ops {
		op.err = make(chan error, 1)
	}
	s.commitBatch(ops, false)
	want := []bool{true, false, false, true}
	for i, op := range ops {
		err := <-op.err
		if (err == nil) != want[i] {
			t.Errorf("op %d: err %v", i, err)
		}
		if i == 1 && !errors.Is(err, boom) {
			t.Errorf("op 1: err %v, want boom", err)
		}
		id := string(rune('a' + i))
		_, err = s.LastSeq(ctx, scope, id)
		if (err == nil) != want[i] {
			t.Errorf("task %s: %v", id, err)
		}
	}
}

// TestGroupCommitCleanFailure runs one batch by hand in which an
// operation fails without writing (ErrSeq): the batch commits without
// savepoints, and the others' writes stay.
func TestGroupCommitCleanFailure(t *testing.T) {
	ctx := t.Context()
	s := openTemp(t)
	defer s.Close()
	create := func(id string) func(w *wtx) error {
		return func(w *wtx) error {
			_, err := w.exec(ctx, s.createTask, id, scope.Tenant, scope.Owner, "c", 1, 0, 0, []byte{}, nil, false, 0, nil)
			return err
		}
	}
	ops := []*writeOp{
		{ctx: ctx, fn: create("a")},
		{ctx: ctx, fn: func(*wtx) error { return taskstore.ErrSeq }},
		{ctx: ctx, fn: create("c")},
	}
	for _, op := range ops {
		op.err = make(chan error, 1)
	}
	s.commitBatch(ops, false)
	for i, op := range ops {
		err := <-op.err
		if want := i == 1; errors.Is(err, taskstore.ErrSeq) != want || (!want && err != nil) {
			t.Errorf("op %d: err %v", i, err)
		}
	}
	for _, id := range []string{"a", "c"} {
		if _, err := s.LastSeq(ctx, scope, id); err != nil {
			t.Errorf("task %s: %v", id, err)
		}
	}
}

// TestGroupCommitConcurrent has many writers at once, each with its own
// sequence of updates, and checks every write landed in order.
func TestGroupCommitConcurrent(t *testing.T) {
	ctx := t.Context()
	s := openTemp(t)
	defer s.Close()
	var wg sync.WaitGroup
	for g := range 32 {
		wg.Go(func() {
			id := fmt.Sprintf("g%02d", g)
			task := newTask(id, a2a.TaskState_TASK_STATE_SUBMITTED, g)
			if err := s.CreateTask(ctx, scope, task, taskstore.Event{Seq: 1}); err != nil {
				t.Error(err)
				return
			}
			if err := s.CreateTask(ctx, scope, task, taskstore.Event{}); !errors.Is(err, taskstore.ErrExists) {
				t.Errorf("duplicate create: %v", err)
			}
			for seq := uint64(2); seq <= 20; seq++ {
				ev := &a2a.StreamResponse{Payload: &a2a.StreamResponse_StatusUpdate{StatusUpdate: &a2a.TaskStatusUpdateEvent{
					TaskId: id, Status: &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_WORKING}}}}
				if err := s.Append(ctx, scope, id, taskstore.Event{Seq: seq, Response: ev}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	for g := range 32 {
		if seq, err := s.LastSeq(ctx, scope, fmt.Sprintf("g%02d", g)); err != nil || seq != 20 {
			t.Errorf("g%02d: seq %d, %v", g, seq, err)
		}
	}
}

func TestWriteAfterClose(t *testing.T) {
	s := openTemp(t)
	s.Close()
	err := s.CreateTask(context.Background(), scope, newTask("x", a2a.TaskState_TASK_STATE_WORKING, 0), taskstore.Event{})
	if !errors.Is(err, errClosed) {
		t.Fatalf("got %v, want errClosed", err)
	}
}
