package server_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
	"parley.dev/parley/internal/testkit"
	pversion "parley.dev/parley/internal/version"
	"parley.dev/parley/server"
	"parley.dev/parley/taskstore"
)

// TestTimelineOutlivesTheResumeWindow: on every store, with a resume
// window of a millisecond swept every few, a task's log is pruned by a
// server that serves 1.0 alone and by one that serves the 1.1 preview,
// whose GetTask still answers the whole timeline and the artifacts'
// generations (spec PR #2129 §3.2.8: a timeline keeps its start), from
// the task's timeline base.
func TestTimelineOutlivesTheResumeWindow(t *testing.T) {
	for _, st := range scopeStores {
		t.Run(st.name, func(t *testing.T) {
			for _, preview := range []bool{false, true} {
				store := st.open(t)
				s := testkit.StartServer(t, &testkit.Options{Agent: generationAgent(), Store: store, Quiet: true,
					Mutate: func(card *a2a.AgentCard, o *server.Options) {
						o.ResumeWindow, o.SweepInterval = time.Millisecond, 5*time.Millisecond
						if preview {
							o.ProtocolVersions = []string{pversion.V11, a2a.ProtocolVersion}
						}
					}})
				ctx, cancel := context.WithTimeout(context.Background(), guard)
				defer cancel()
				v := a2a.ProtocolVersion
				if preview {
					v = pversion.V11
				}
				c := versionClient(t, s, scopeBindings[0].f(), v)
				id := twoTurns(t, ctx, c)
				// The memory store prunes to the second, rounded up: a
				// sweep 1.2 s on has pruned all but the last event.
				_, err := store.Events(ctx, taskstore.Scope{}, id, 0, 1)
				for end := time.Now().Add(1200 * time.Millisecond); time.Now().Before(end) && !errors.Is(err, taskstore.ErrPruned); {
					time.Sleep(20 * time.Millisecond)
					_, err = store.Events(ctx, taskstore.Scope{}, id, 0, 1)
				}
				if !errors.Is(err, taskstore.ErrPruned) {
					t.Fatalf("preview %v: the log's start read back with %v; want it pruned (ErrPruned)", preview, err)
				}
				if !preview {
					continue
				}
				tk, err := c.GetTask(ctx, &a2a.GetTaskRequest{Id: id})
				if err != nil {
					t.Fatal(err)
				}
				var gens []int64
				for _, e := range tk.GetTimeline() {
					gens = append(gens, e.GetGeneration())
				}
				spans := map[string][2]int64{}
				for _, a := range tk.GetArtifacts() {
					spans[a.GetArtifactId()] = [2]int64{a.GetStartGeneration(), a.GetEndGeneration()}
				}
				if !slices.Equal(gens, []int64{1, 2, 5, 6, 7, 9}) || spans["a"] != [2]int64{3, 4} || spans["b"] != [2]int64{8, 8} {
					t.Errorf("after the resume window: timeline at %v, spans %v; want [1 2 5 6 7 9], a [3 4], b [8 8]", gens, spans)
				}
			}
		})
	}
}

// twoTurns streams "stream", which makes a task, then "go on" to it, and
// returns the task's id.
func twoTurns(t *testing.T, ctx context.Context, c *client.Client) string {
	t.Helper()
	var id string
	for _, text := range []string{"stream", "go on"} {
		msg := a2a.UserMessage(text)
		msg.TaskId = id
		for ev, err := range c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: msg}) {
			if err != nil {
				t.Fatalf("stream %q: %v", text, err)
			}
			if tk := ev.Response.GetTask(); tk != nil {
				id = tk.GetId()
			}
		}
	}
	return id
}

// chunkyAgent streams artifact a in n chunks, then asks for input; the
// follow-up reports progress, sends artifact b and completes.
func chunkyAgent(n int) server.Agent {
	return server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		if req.Task != nil {
			for _, err := range []error{
				em.StatusText(a2a.TaskState_TASK_STATE_WORKING, "progress"),
				em.Artifact(&a2a.Artifact{ArtifactId: "b", Parts: []*a2a.Part{a2a.TextPart("done")}}),
				em.StatusText(a2a.TaskState_TASK_STATE_COMPLETED, "done"),
			} {
				if err != nil {
					return err
				}
			}
			return nil
		}
		if err := em.StatusText(a2a.TaskState_TASK_STATE_WORKING, ""); err != nil {
			return err
		}
		piece := func(i int) *a2a.Artifact {
			return &a2a.Artifact{ArtifactId: "a", Parts: []*a2a.Part{a2a.TextPart(fmt.Sprintf("chunk %d; ", i))}}
		}
		if err := em.StartArtifact(piece(0)); err != nil {
			return err
		}
		for i := 1; i < n-1; i++ {
			if err := em.AppendArtifact(piece(i)); err != nil {
				return err
			}
		}
		if err := em.FinishArtifact(piece(n - 1)); err != nil {
			return err
		}
		return em.StatusText(a2a.TaskState_TASK_STATE_INPUT_REQUIRED, "more?")
	})
}

// TestTimelineAfterPruning: on every store, a 1.1 task with a turn that
// asks for input and an artifact streamed in thousands of chunks reads
// back, after its log is pruned to its last event, exactly as before, on
// every binding: its timeline whole, timelineLength 0 and 2, its
// artifacts' generations and contents (spec PR #2129 §3.2.8); a resume
// from a pruned position still finds it pruned.
func TestTimelineAfterPruning(t *testing.T) {
	const chunks = 2000
	for _, st := range scopeStores {
		t.Run(st.name, func(t *testing.T) {
			store := st.open(t)
			s := testkit.StartServer(t, &testkit.Options{Agent: chunkyAgent(chunks), Store: store, Quiet: true,
				Mutate: func(card *a2a.AgentCard, o *server.Options) {
					o.ResumeWindow = -1 // pruned below
					o.ProtocolVersions = []string{pversion.V11, a2a.ProtocolVersion}
				}})
			ctx, cancel := context.WithTimeout(context.Background(), guard)
			defer cancel()
			c := versionClient(t, s, scopeBindings[0].f(), pversion.V11)
			id := twoTurns(t, ctx, c)
			reads := func() []*a2a.Task {
				t.Helper()
				var out []*a2a.Task
				for _, b := range scopeBindings {
					c := versionClient(t, s, b.f(), pversion.V11)
					for _, n := range []*int32{nil, proto.Int32(0), proto.Int32(2)} {
						tk, err := c.GetTask(ctx, &a2a.GetTaskRequest{Id: id, TimelineLength: n})
						if err != nil {
							t.Fatalf("%s GetTask: %v", b.name, err)
						}
						out = append(out, tk)
					}
				}
				return out
			}
			before := reads()
			var got []string
			var gens []int64
			for _, e := range before[0].GetTimeline() {
				got = append(got, entryText(e))
				gens = append(gens, e.GetGeneration())
			}
			const n = chunks
			want := []string{"user:stream", "WORKING", "INPUT_REQUIRED", "user:go on", "WORKING", "COMPLETED"}
			if !slices.Equal(got, want) || !slices.Equal(gens, []int64{1, 2, n + 3, n + 4, n + 5, n + 7}) {
				t.Fatalf("before pruning: timeline %v at %v; want %v at [1 2 %d %d %d %d]", got, gens, want, n+3, n+4, n+5, n+7)
			}
			spans := map[string][2]int64{}
			for _, a := range before[0].GetArtifacts() {
				spans[a.GetArtifactId()] = [2]int64{a.GetStartGeneration(), a.GetEndGeneration()}
			}
			if spans["a"] != [2]int64{3, n + 2} || spans["b"] != [2]int64{n + 6, n + 6} {
				t.Fatalf("before pruning: spans %v; want a [3 %d], b [%d %d]", spans, n+2, n+6, n+6)
			}

			pruned, err := store.PruneEvents(ctx, time.Now().Add(time.Hour))
			if err != nil || pruned != n+6 {
				t.Fatalf("PruneEvents = %d, %v; want %d (all but the last)", pruned, err, n+6)
			}
			if _, err := store.Events(ctx, taskstore.Scope{}, id, 0, 1); !errors.Is(err, taskstore.ErrPruned) {
				t.Errorf("resume from the start after pruning: %v; want ErrPruned", err)
			}
			after := reads()
			for i := range before {
				if !proto.Equal(after[i], before[i]) {
					t.Errorf("%s GetTask, timelineLength %s, after pruning:\n%v\nwant as before:\n%v",
						scopeBindings[i/3].name, []string{"unset", "0", "2"}[i%3], after[i], before[i])
				}
			}
			if l := len(after[2].GetTimeline()); l != 2 || len(after[1].GetTimeline()) != 0 {
				t.Errorf("timelineLength 0 and 2 after pruning: %d and %d entries", len(after[1].GetTimeline()), l)
			}
		})
	}
}
