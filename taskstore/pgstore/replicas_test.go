package pgstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/pgtest"
	"parley.dev/parley/taskstore"
)

// openPair opens two stores, each with its own pool, on one new schema:
// what two processes on one database are.
func openPair(t *testing.T) (*Store, *Store) {
	t.Helper()
	u := pgtest.NewSchema(t, pgtest.NewDatabase(t))
	var out [2]*Store
	for i := range out {
		s, err := Open(t.Context(), u, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		out[i] = s
	}
	return out[0], out[1]
}

// TestPutMessageAcrossStores races PutMessage of one id from two stores,
// many times: each time exactly one records it and the other gets that
// record back.
func TestPutMessageAcrossStores(t *testing.T) {
	a, b := openPair(t)
	for i := range 50 {
		id := fmt.Sprintf("m-%d", i)
		var got [2]*taskstore.MessageRecord
		var errs [2]error
		var wg sync.WaitGroup
		for k, s := range []*Store{a, b} {
			wg.Go(func() {
				got[k], errs[k] = s.PutMessage(context.Background(), scope, &taskstore.MessageRecord{
					MessageID: id, Digest: fmt.Sprint("d", k), TaskID: fmt.Sprint("task-", k), Created: time.UnixMilli(1000)})
			})
		}
		wg.Wait()
		if errs[0] != nil || errs[1] != nil {
			t.Fatalf("%s: %v, %v", id, errs[0], errs[1])
		}
		if (got[0] == nil) == (got[1] == nil) {
			t.Fatalf("%s: both or neither recorded it: %+v, %+v", id, got[0], got[1])
		}
		winner, loser := 0, got[1]
		if got[0] != nil {
			winner, loser = 1, got[0]
		}
		if loser.Digest != fmt.Sprint("d", winner) || loser.TaskID != fmt.Sprint("task-", winner) {
			t.Fatalf("%s: the loser got %+v, not the winner's record", id, loser)
		}
	}
}

// TestAppendRaceAcrossStores has two stores append event 2, 3, … of one
// task at once: for each sequence number exactly one wins and the other
// gets ErrSeq, and the log holds one event per number.
func TestAppendRaceAcrossStores(t *testing.T) {
	a, b := openPair(t)
	tk := newTask("raced", 1)
	if err := a.CreateTask(t.Context(), scope, tk, snapshot(tk)); err != nil {
		t.Fatal(err)
	}
	const last = 30
	for seq := uint64(2); seq <= last; seq++ {
		var errs [2]error
		var wg sync.WaitGroup
		for k, s := range []*Store{a, b} {
			wg.Go(func() {
				errs[k] = s.Append(context.Background(), scope, "raced", status("raced", seq, a2a.TaskState_TASK_STATE_WORKING))
			})
		}
		wg.Wait()
		won := 0
		for _, err := range errs {
			switch {
			case err == nil:
				won++
			case !errors.Is(err, taskstore.ErrSeq):
				t.Fatalf("seq %d: %v", seq, err)
			}
		}
		if won != 1 {
			t.Fatalf("seq %d: %d appends won, want 1 (%v)", seq, won, errs)
		}
	}
	evs, err := b.Events(t.Context(), scope, "raced", 0, 0)
	if err != nil || len(evs) != last {
		t.Fatalf("%d events, %v; want %d", len(evs), err, last)
	}
	for i, ev := range evs {
		if ev.Seq != uint64(i+1) {
			t.Fatalf("event %d has seq %d", i, ev.Seq)
		}
	}
}

// TestCountersUnderConcurrency has goroutines of two stores create tasks
// in several contexts and move them through states at once; afterwards
// every total ListTasks reports equals a count of the tasks (the slotted
// counters lose no update and deadlock nowhere).
func TestCountersUnderConcurrency(t *testing.T) {
	a, b := openPair(t)
	ctx := t.Context()
	states := []a2a.TaskState{a2a.TaskState_TASK_STATE_INPUT_REQUIRED, a2a.TaskState_TASK_STATE_COMPLETED}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		s := []*Store{a, b}[w%2]
		wg.Go(func() {
			for i := range 20 {
				id := fmt.Sprintf("w%d-%d", w, i)
				tk := newTask(id, i)
				tk.ContextId = fmt.Sprint("ctx-", i%3)
				if err := s.CreateTask(ctx, scope, tk, snapshot(tk)); err != nil {
					errs <- err
					return
				}
				for k := range (w + i) % 3 {
					if err := s.Append(ctx, scope, id, status(id, uint64(k+2), states[k%2])); err != nil {
						errs <- err
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	all, err := a.ListTasks(ctx, scope, taskstore.ListQuery{Limit: 1000})
	if err != nil || all.Total != 160 || len(all.Tasks) != 160 {
		t.Fatalf("all: total %d, %d tasks, %v; want 160", all.Total, len(all.Tasks), err)
	}
	for _, c := range []string{"", "ctx-0", "ctx-1", "ctx-2"} {
		for _, st := range []a2a.TaskState{0, a2a.TaskState_TASK_STATE_WORKING, states[0], states[1]} {
			q := taskstore.ListQuery{ContextID: c, State: st, Limit: 1000}
			res, err := b.ListTasks(ctx, scope, q)
			if err != nil {
				t.Fatal(err)
			}
			want := 0
			for _, tk := range all.Tasks {
				if (c == "" || tk.ContextId == c) && (st == 0 || tk.GetStatus().GetState() == st) {
					want++
				}
			}
			if res.Total != want || len(res.Tasks) != want {
				t.Errorf("context %q state %v: total %d, %d tasks; want %d", c, st, res.Total, len(res.Tasks), want)
			}
		}
	}
}
