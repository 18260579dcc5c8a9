package share_test

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/memstore"
	"parley.dev/parley/taskstore/sqlitestore"
)

// TestStoresShareLargeTasks: in every store that shares its large tasks
// through a Group, the GetTask calls of one large finished task made at
// once get one tree, and a write ends the sharing.
func TestStoresShareLargeTasks(t *testing.T) {
	for _, c := range []struct {
		name string
		open func(t *testing.T) taskstore.Store
	}{
		{"memory", func(*testing.T) taskstore.Store { return memstore.New() }},
		{"sqlite", func(t *testing.T) taskstore.Store {
			s, err := sqlitestore.Open(filepath.Join(t.TempDir(), "tasks.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := c.open(t)
			ctx := context.Background()
			sc := taskstore.Scope{Owner: "o"}
			tk := &a2a.Task{Id: "big", ContextId: "c", Status: &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_COMPLETED},
				Artifacts: []*a2a.Artifact{a2a.TextArtifact("a", strings.Repeat("x", 256<<10))}}
			if err := s.CreateTask(ctx, sc, tk, taskstore.Event{Seq: 1, Response: &a2a.StreamResponse{Payload: &a2a.StreamResponse_Task{Task: tk}}}); err != nil {
				t.Fatal(err)
			}
			got := make([]*a2a.Task, 8)
			var wg sync.WaitGroup
			for i := range got {
				wg.Go(func() {
					var err error
					if got[i], err = s.GetTask(ctx, sc, "big"); err != nil {
						t.Error(err)
					}
				})
			}
			wg.Wait()
			for i, g := range got {
				if g != got[0] {
					t.Fatalf("GetTask %d got a tree of its own, not the shared one", i)
				}
			}
			msg := &a2a.Message{MessageId: "m2", Role: a2a.Role_ROLE_USER, Parts: []*a2a.Part{{Content: &a2a.Part_Text{Text: "more"}}}}
			if err := s.Append(ctx, sc, "big", taskstore.Event{Message: msg}); err != nil {
				t.Fatal(err)
			}
			after, err := s.GetTask(ctx, sc, "big")
			if err != nil {
				t.Fatal(err)
			}
			if after == got[0] || len(after.GetHistory()) != len(got[0].GetHistory())+1 {
				t.Fatalf("GetTask after a write: the old tree (history %d)", len(after.GetHistory()))
			}
		})
	}
}
