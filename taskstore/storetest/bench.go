package storetest

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
)

// BenchAppendChunk measures Append of one artifact chunk (64 bytes of
// text) to a task whose artifact already has about `at` chunks: before the
// clock starts it fills b.N/at+1 tasks with `at` chunks each, and the
// operations then append `at` more chunks to each in turn, so every
// operation appends chunk at+1 to 2×at of its artifact. The cost per
// operation must not grow with at. Call it from a benchmark with a fresh
// store:
//
//	func BenchmarkAppendChunk(b *testing.B) {
//		for _, at := range []int{10, 10000} {
//			b.Run(fmt.Sprintf("at=%d", at), func(b *testing.B) {
//				storetest.BenchAppendChunk(b, open(b), at)
//			})
//		}
//	}
func BenchAppendChunk(b *testing.B, s taskstore.Tasks, at int) {
	ctx := context.Background()
	at = max(at, 1)
	body := strings.Repeat("x", 64)
	appendChunk := func(id string, seq uint64, n int) {
		if err := s.Append(ctx, scopeA, id, taskstore.Event{Seq: seq, Response: chunk(id, "a", n > 0, body)}); err != nil {
			b.Fatal(err)
		}
	}
	ids := make([]string, b.N/at+1)
	for k := range ids {
		ids[k] = fmt.Sprintf("chunky-%d", k)
		tk := &a2a.Task{Id: ids[k], ContextId: "c", Status: &a2a.TaskStatus{State: working, Timestamp: timestamppb.Now()}}
		if err := s.CreateTask(ctx, scopeA, tk, taskstore.Event{Seq: 1, Response: snapshotEvent(tk)}); err != nil {
			b.Fatal(err)
		}
		for n := range at {
			appendChunk(ids[k], uint64(n+2), n)
		}
	}
	b.ReportAllocs()
	defer ReportCPU(b)()
	for i := range b.N {
		n := at + i%at
		appendChunk(ids[i/at], uint64(n+2), n)
	}
}

// ReportCPU resets the benchmark timer and returns a function that
// reports the process CPU time used since, per operation, as the
// cpu-ns/op metric (0 where it is not measured). On a machine shared with
// other work it is a steadier measure of cost than ns/op, which counts
// the time the benchmark waited for a processor. Call it as
//
//	defer storetest.ReportCPU(b)()
func ReportCPU(b *testing.B) func() {
	b.ResetTimer()
	start := processCPU()
	return func() {
		b.ReportMetric(float64(processCPU()-start)/float64(max(b.N, 1)), "cpu-ns/op")
	}
}

// benchTasks numbers the tasks the benchmarks create, across calls, so
// that a benchmark run more than once on one store (as the testing
// package does, with growing b.N) makes new tasks each time.
var benchTasks atomic.Int64

// BenchSendMessage measures the store writes of a blocking SendMessage:
// per operation a task is created with its first event (a snapshot), then
// three events are appended (WORKING, an artifact, COMPLETED with a
// message), from 64 goroutines at once (or GOMAXPROCS, if more). One
// operation is one whole task.
func BenchSendMessage(b *testing.B, s taskstore.Tasks) {
	defer parallel64(b)()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			if err := sendOnce(ctx, s, fmt.Sprintf("send-%09d", benchTasks.Add(1))); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// parallel64 readies b for 64 goroutines at once (or GOMAXPROCS, if
// more), reporting allocations and CPU, and returns ReportCPU's stop.
func parallel64(b *testing.B) func() {
	b.SetParallelism(max(1, 64/runtime.GOMAXPROCS(0)))
	b.ReportAllocs()
	return ReportCPU(b)
}

// sendTask is the task a blocking SendMessage creates.
func sendTask(id string, now time.Time) *a2a.Task {
	return &a2a.Task{Id: id, ContextId: "ctx-" + id, Status: &a2a.TaskStatus{State: submitted, Timestamp: timestamppb.New(now)},
		History: []*a2a.Message{message("m-"+id, id, "ctx-"+id, "please do the thing")}}
}

// sendOnce writes the events of one blocking SendMessage.
func sendOnce(ctx context.Context, s taskstore.Tasks, id string) error {
	now := time.Now()
	tk := sendTask(id, now)
	if err := s.CreateTask(ctx, scopeA, tk, taskstore.Event{Seq: 1, Response: snapshotEvent(tk)}); err != nil {
		return err
	}
	done := statusAt(id, 4, completed, now)
	done.Response.GetStatusUpdate().Status.Message = &a2a.Message{MessageId: "r-" + id, Role: a2a.Role_ROLE_AGENT, Parts: []*a2a.Part{text("done")}}
	for _, ev := range []taskstore.Event{
		statusAt(id, 2, working, now),
		{Seq: 3, Response: chunk(id, "result", false, "the answer to the thing")},
		done,
	} {
		if err := s.Append(ctx, scopeA, id, ev); err != nil {
			return err
		}
	}
	return nil
}

// Batcher is a store that writes batches (taskstore.BatchAppender).
type Batcher interface {
	taskstore.Tasks
	taskstore.BatchAppender
}

// BenchSendMessageBatched is BenchSendMessage with the write the server
// makes on a store that writes batches when the agent answers without
// pausing: the task with WORKING, the artifact and COMPLETED, in one
// CreateTaskBatch. One operation is one whole task.
func BenchSendMessageBatched(b *testing.B, s Batcher) {
	benchBatched(b, s, 1)
}

// BenchStreamBatched measures the store writes of 64 concurrent 20-chunk
// streams on a store that writes batches, as the server makes them when
// the agent emits without pausing: the task with WORKING, the 20 chunks
// of 64 bytes and COMPLETED, in one CreateTaskBatch. One operation is one
// whole stream.
func BenchStreamBatched(b *testing.B, s Batcher) {
	benchBatched(b, s, 20)
}

// benchBatched runs a task with the given chunks per operation, from 64
// goroutines (or GOMAXPROCS, if more).
func benchBatched(b *testing.B, s Batcher, chunks int) {
	body := strings.Repeat("x", 64)
	defer parallel64(b)()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			id := fmt.Sprintf("batch-%09d", benchTasks.Add(1))
			now := time.Now()
			tk := sendTask(id, now)
			evs := make([]taskstore.Event, 0, chunks+3)
			evs = append(evs, taskstore.Event{Seq: 1, Response: snapshotEvent(tk)}, statusAt(id, 2, working, now))
			for n := range chunks {
				evs = append(evs, taskstore.Event{Seq: uint64(3 + n), Response: chunk(id, "result", n > 0, body)})
			}
			done := statusAt(id, uint64(3+chunks), completed, now)
			done.Response.GetStatusUpdate().Status.Message = &a2a.Message{MessageId: "r-" + id, Role: a2a.Role_ROLE_AGENT, Parts: []*a2a.Part{text("done")}}
			if err := s.CreateTaskBatch(ctx, scopeA, tk, append(evs, done)); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchStreamChunks measures the store writes of 64 concurrent 20-chunk
// streams (parley load --op stream): 64 goroutines (or GOMAXPROCS, if
// more) each create a task and append chunks of 64 bytes to its one
// artifact, 20 per task, then start the next task. One operation is one
// chunk.
func BenchStreamChunks(b *testing.B, s taskstore.Tasks) {
	body := strings.Repeat("x", 64)
	defer parallel64(b)()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		var id string
		seq := uint64(0)
		for n := 0; pb.Next(); n = (n + 1) % 20 {
			if n == 0 {
				id = fmt.Sprintf("stream-%09d", benchTasks.Add(1))
				tk := &a2a.Task{Id: id, ContextId: "c", Status: &a2a.TaskStatus{State: working, Timestamp: timestamppb.Now()}}
				if err := s.CreateTask(ctx, scopeA, tk, taskstore.Event{Seq: 1, Response: snapshotEvent(tk)}); err != nil {
					b.Error(err)
					return
				}
				seq = 1
			}
			seq++
			if err := s.Append(ctx, scopeA, id, taskstore.Event{Seq: seq, Response: chunk(id, "a", n > 0, body)}); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// LongStreamBatch is the most events BenchLongStreams writes at once: the
// server's bound on the events an agent may queue ahead of the store.
const LongStreamBatch = 256

// BenchLongStreams measures the store writes of streams of the given
// number of chunks (64 bytes of text each, appended to one artifact), 8 at
// once, written as the server writes a stream whose agent emits without
// pausing: the task made with its first LongStreamBatch events
// (CreateTaskBatch), the others in batches of as many (AppendBatch), the
// last with COMPLETED, and the finished task read back whole (GetTask,
// whose artifact must hold every chunk). A stream shorter than a batch is
// one CreateTaskBatch of a finished task. One operation is one
// chunk: its cost must not grow with the stream's length (200, 2,000 or
// 10,000 chunks; give -benchtime at least 8× the chunks, so that every
// goroutine finishes a stream).
func BenchLongStreams(b *testing.B, s Batcher, chunks int) {
	body := strings.Repeat("x", 64)
	b.SetParallelism(max(1, 8/runtime.GOMAXPROCS(0)))
	b.ReportAllocs()
	defer ReportCPU(b)()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		var id string
		var tk *a2a.Task
		var evs []taskstore.Event
		seq, n := uint64(0), 0
		flush := func(last bool) error {
			if last {
				seq++
				evs = append(evs, statusAt(id, seq, completed, time.Now()))
			}
			var err error
			if tk != nil {
				err, tk = s.CreateTaskBatch(ctx, scopeA, tk, evs), nil
			} else {
				err = s.AppendBatch(ctx, scopeA, id, evs)
			}
			evs = evs[:0]
			if err != nil || !last {
				return err
			}
			got, err := s.GetTask(ctx, scopeA, id)
			if err != nil {
				return err
			}
			if parts := len(got.GetArtifacts()[0].GetParts()); parts != chunks {
				return fmt.Errorf("task %s read back with %d parts, want %d", id, parts, chunks)
			}
			return nil
		}
		for pb.Next() {
			if n == 0 {
				id = fmt.Sprintf("long-%09d", benchTasks.Add(1))
				tk = &a2a.Task{Id: id, ContextId: "c", Status: &a2a.TaskStatus{State: working, Timestamp: timestamppb.Now()}}
				seq = 1
				evs = append(evs[:0], taskstore.Event{Seq: seq, Response: snapshotEvent(tk)})
			}
			seq++
			evs = append(evs, taskstore.Event{Seq: seq, Response: chunk(id, "a", n > 0, body)})
			n++
			if n == chunks || len(evs) == LongStreamBatch {
				if err := flush(n == chunks); err != nil {
					b.Error(err)
					return
				}
			}
			if n == chunks {
				n = 0
			}
		}
	})
}
