package server_test

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/agents"
	"parley.dev/parley/internal/pgtest"
	pversion "parley.dev/parley/internal/version"
	"parley.dev/parley/server"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/memstore"
	"parley.dev/parley/taskstore/pgstore"
	"parley.dev/parley/taskstore/sqlitestore"
)

// chunkedTask stores, straight into st, a completed task of the id whose
// artifact was streamed in n chunks: the task (1), WORKING (2), the
// chunks (3 to n+2, the last one lastChunk) and COMPLETED (n+3).
func chunkedTask(tb testing.TB, st taskstore.Store, id string, n int) {
	tb.Helper()
	ctx := context.Background()
	msg := a2a.UserMessage("stream")
	msg.TaskId, msg.ContextId = id, "ctx"
	tk := &a2a.Task{Id: id, ContextId: "ctx", History: []*a2a.Message{msg},
		Status: &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_SUBMITTED}}
	if err := st.CreateTask(ctx, taskstore.Scope{}, tk, taskstore.Event{Seq: 1, Response: &a2a.StreamResponse{
		Payload: &a2a.StreamResponse_Task{Task: tk}}}); err != nil {
		tb.Fatal(err)
	}
	status := func(seq int, s a2a.TaskState) taskstore.Event {
		return taskstore.Event{Seq: uint64(seq), Response: &a2a.StreamResponse{Payload: &a2a.StreamResponse_StatusUpdate{
			StatusUpdate: &a2a.TaskStatusUpdateEvent{TaskId: id, ContextId: "ctx", Status: &a2a.TaskStatus{State: s}}}}}
	}
	evs := []taskstore.Event{status(2, a2a.TaskState_TASK_STATE_WORKING)}
	for i := range n {
		evs = append(evs, taskstore.Event{Seq: uint64(i + 3), Response: &a2a.StreamResponse{Payload: &a2a.StreamResponse_ArtifactUpdate{
			ArtifactUpdate: &a2a.TaskArtifactUpdateEvent{TaskId: id, ContextId: "ctx", Append: i > 0, LastChunk: i == n-1,
				Artifact: &a2a.Artifact{ArtifactId: "a", Parts: []*a2a.Part{a2a.TextPart(fmt.Sprintf("chunk %d of the answer; ", i))}}}}}})
	}
	evs = append(evs, status(n+3, a2a.TaskState_TASK_STATE_COMPLETED))
	for len(evs) > 0 {
		k := min(500, len(evs))
		if err := st.AppendBatch(ctx, taskstore.Scope{}, id, evs[:k]); err != nil {
			tb.Fatal(err)
		}
		evs = evs[k:]
	}
}

// BenchmarkGetTaskTimeline is one GetTask of a completed task whose
// artifact was streamed in 10,000 chunks, answered at 1.0 (no timeline),
// at 1.1 (its timeline and artifact generations, read from the log) and at
// 1.1 once the log is pruned (read from the task's timeline base), on the
// three stores (PostgreSQL as pgtest finds it).
func BenchmarkGetTaskTimeline(b *testing.B) {
	const chunks = 10000
	for _, name := range []string{"mem", "sqlite", "postgres"} {
		b.Run(name, func(b *testing.B) {
			st := benchStores[name](b)
			id := "chunked"
			chunkedTask(b, st, id, chunks)
			card, err := agents.Card("echo", []*a2a.AgentInterface{
				{Url: "http://127.0.0.1/", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: pversion.V11},
			})
			if err != nil {
				b.Fatal(err)
			}
			srv, err := server.New(&server.Options{Card: card, Agent: agents.Echo(), Store: st,
				ProtocolVersions: []string{pversion.V11, a2a.ProtocolVersion}, Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				_ = srv.Close(ctx)
			})
			for _, v := range []string{a2a.ProtocolVersion, pversion.V11, "pruned"} {
				if v == "pruned" { // 1.1 again, once the log is pruned: the base and the last event
					if _, err := st.PruneEvents(context.Background(), time.Now().Add(time.Hour)); err != nil {
						b.Fatal(err)
					}
					v = pversion.V11 + "-pruned"
				}
				b.Run("v"+v, func(b *testing.B) {
					v := strings.TrimSuffix(v, "-pruned")
					b.ReportAllocs()
					for b.Loop() {
						ctx := a2a.WithCallInfo(context.Background(), &a2a.CallInfo{Version: v})
						tk, err := srv.GetTask(ctx, &a2a.GetTaskRequest{Id: id})
						if err != nil {
							b.Fatal(err)
						}
						if want := v == pversion.V11; (len(tk.GetTimeline()) == 3) != want ||
							(tk.GetArtifacts()[0].GetEndGeneration() == chunks+2) != want {
							b.Fatalf("at %s: timeline %d entries, artifact ends at %d", v, len(tk.GetTimeline()), tk.GetArtifacts()[0].GetEndGeneration())
						}
					}
				})
			}
		})
	}
}

// benchStores open a store of each kind for a benchmark (PostgreSQL as
// pgtest finds it).
var benchStores = map[string]func(b *testing.B) taskstore.Store{
	"mem": func(*testing.B) taskstore.Store { return memstore.New() },
	"sqlite": func(b *testing.B) taskstore.Store {
		st, err := sqlitestore.Open(filepath.Join(b.TempDir(), "bench.db"))
		if err != nil {
			b.Fatal(err)
		}
		return st
	},
	"postgres": func(b *testing.B) taskstore.Store {
		st, err := pgstore.Open(b.Context(), pgtest.NewDatabase(b), nil)
		if err != nil {
			b.Fatal(err)
		}
		return st
	},
}

// BenchmarkPruneChunked is one PruneEvents of the log of a completed task
// whose artifact was streamed in 10,000 chunks (stored as the server
// stores them, in batches), down to its last event, on the three stores.
func BenchmarkPruneChunked(b *testing.B) {
	const chunks = 10000
	for _, name := range []string{"mem", "sqlite", "postgres"} {
		b.Run(name, func(b *testing.B) {
			st := benchStores[name](b)
			ctx := context.Background()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				chunkedTask(b, st, fmt.Sprint("chunked-", i), chunks)
				b.StartTimer()
				if n, err := st.PruneEvents(ctx, time.Now().Add(time.Hour)); err != nil || n != chunks+2 {
					b.Fatalf("PruneEvents = %d, %v; want %d", n, err, chunks+2)
				}
			}
		})
	}
}
