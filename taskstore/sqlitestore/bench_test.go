package sqlitestore

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
)

func BenchmarkCreate(b *testing.B) {
	s := openTemp(b)
	defer s.Close()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if err := s.CreateTask(b.Context(), scope, newTask(fmt.Sprintf("task-%08d", i), a2a.TaskState_TASK_STATE_WORKING, i), taskstore.Event{}); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

func BenchmarkGet(b *testing.B) {
	s := openTemp(b)
	defer s.Close()
	fill(b, s, 10000, []taskstore.Scope{scope})
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := s.GetTask(b.Context(), scope, fmt.Sprintf("task-%06d", i%10000)); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

func BenchmarkListPage(b *testing.B) {
	s := openTemp(b)
	defer s.Close()
	fill(b, s, 10000, []taskstore.Scope{scope})
	mid := newTask("task-005000", a2a.TaskState_TASK_STATE_WORKING, 5000/3)
	for _, c := range []struct {
		name string
		q    taskstore.ListQuery
	}{
		{"first", taskstore.ListQuery{Limit: 50}},
		{"middle", taskstore.ListQuery{Limit: 50, After: &taskstore.Cursor{Time: mid.Status.Timestamp.AsTime(), ID: mid.Id}}},
		{"state+context", taskstore.ListQuery{Limit: 50, State: a2a.TaskState_TASK_STATE_WORKING, ContextID: "ctx-3"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				res, err := s.ListTasks(b.Context(), scope, c.q)
				if err != nil || len(res.Tasks) != 50 {
					b.Fatalf("%d tasks, %v", len(res.Tasks), err)
				}
			}
		})
	}
}

// BenchmarkConcurrentWrites has many goroutines each create a task and
// update it three times, the write pattern of a blocking SendMessage.
func BenchmarkConcurrentWrites(b *testing.B) {
	s := openTemp(b)
	defer s.Close()
	b.ReportAllocs()
	var next atomic.Int64
	b.SetParallelism(16) // 16 × GOMAXPROCS writers
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			i := int(next.Add(1))
			id := fmt.Sprintf("task-%08d", i)
			t := newTask(id, a2a.TaskState_TASK_STATE_SUBMITTED, i)
			if err := s.CreateTask(ctx, scope, t, taskstore.Event{Seq: 1}); err != nil {
				b.Fatal(err)
			}
			for seq, st := range []a2a.TaskState{a2a.TaskState_TASK_STATE_WORKING, a2a.TaskState_TASK_STATE_WORKING, a2a.TaskState_TASK_STATE_COMPLETED} {
				ev := &a2a.StreamResponse{Payload: &a2a.StreamResponse_StatusUpdate{StatusUpdate: &a2a.TaskStatusUpdateEvent{
					TaskId: id, ContextId: t.ContextId, Status: &a2a.TaskStatus{State: st}}}}
				if err := s.Append(ctx, scope, id, taskstore.Event{Seq: uint64(seq + 2), Response: ev}); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
