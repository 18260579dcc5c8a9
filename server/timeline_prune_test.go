package server_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/testkit"
	pversion "parley.dev/parley/internal/version"
	"parley.dev/parley/server"
	"parley.dev/parley/taskstore"
)

// TestTimelineOutlivesTheResumeWindow: on every store, with a resume
// window of a millisecond swept every few, a task's log is pruned by a
// server that serves 1.0 alone, and kept whole by one that serves the 1.1
// preview, whose GetTask then answers the whole timeline and the
// artifacts' generations (spec PR #2129 §3.2.8: a timeline keeps its
// start).
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
				// The memory store prunes to the second, rounded up: a
				// sweep 1.2 s on has pruned all but the last event.
				_, err := store.Events(ctx, taskstore.Scope{}, id, 0, 1)
				for end := time.Now().Add(1200 * time.Millisecond); time.Now().Before(end) && !errors.Is(err, taskstore.ErrPruned); {
					time.Sleep(20 * time.Millisecond)
					_, err = store.Events(ctx, taskstore.Scope{}, id, 0, 1)
				}
				if !preview {
					if !errors.Is(err, taskstore.ErrPruned) {
						t.Fatalf("1.0 alone: the log's start read back with %v; want it pruned (ErrPruned)", err)
					}
					continue
				}
				if err != nil {
					t.Errorf("1.1: the log's start: %v; want it kept", err)
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
