package server_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/pgtest"
	pversion "parley.dev/parley/internal/version"
	"parley.dev/parley/server"
)

// TestClusterConditionalSendRace: two replicas each given conditional
// follow-ups of one task expecting the same generation, at once: the
// store's sequence fence lets exactly one through, on whichever replica;
// every other is refused with TaskGenerationMismatchError naming the
// generation the winner wrote, and nothing of it is in the task.
func TestClusterConditionalSendRace(t *testing.T) {
	url := pgtest.NewDatabase(t)
	agent := server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		if req.Task == nil {
			return em.Status(a2a.TaskState_TASK_STATE_INPUT_REQUIRED, nil)
		}
		time.Sleep(20 * time.Millisecond)
		return em.Status(a2a.TaskState_TASK_STATE_COMPLETED, nil)
	})
	opts := server.Options{Agent: agent, ProtocolVersions: []string{pversion.V11, a2a.ProtocolVersion}}
	a, _ := replica(t, url, 2*time.Second, opts)
	b, _ := replica(t, url, 2*time.Second, opts)
	v11 := func() context.Context { return as(t, "", version(pversion.V11)) }
	const perReplica = 3
	for round := range 8 {
		task := taskOf(t)(a.SendMessage(v11(), msgReq("start")))
		// b reads the task first, so that its run may lag what a writes.
		if _, err := b.GetTask(v11(), &a2a.GetTaskRequest{Id: task.Id}); err != nil {
			t.Fatal(err)
		}
		gen := task.GetGeneration()
		var mu sync.Mutex
		var won []string
		var refused int
		var wg sync.WaitGroup
		for i := range 2 * perReplica {
			s := []*server.Server{a, b}[i%2]
			text := fmt.Sprint("from ", i)
			wg.Go(func() {
				_, err := s.SendMessage(v11(), withConfig(followReq(task.Id, text), &a2a.SendMessageConfiguration{IfGenerationMatch: &gen}))
				mu.Lock()
				defer mu.Unlock()
				exp, cur, _ := a2a.MismatchedGenerations(err)
				switch {
				case err == nil:
					won = append(won, text)
				case errors.Is(err, a2a.ErrTaskGenerationMismatch) && exp == gen && cur > gen:
					refused++
				default:
					t.Errorf("round %d, %s: %v (expected %d, current %d); want a mismatch past %d", round, text, err, exp, cur, gen)
				}
			})
		}
		wg.Wait()
		if len(won) != 1 || refused != 2*perReplica-1 {
			t.Fatalf("round %d: accepted %v, %d refused; want one accepted", round, won, refused)
		}
		got, err := b.GetTask(v11(), &a2a.GetTaskRequest{Id: task.Id})
		if err != nil {
			t.Fatal(err)
		}
		var follow []string
		for _, m := range got.GetHistory()[1:] {
			if m.GetRole() == a2a.Role_ROLE_USER {
				follow = append(follow, a2a.FirstText(m))
			}
		}
		if len(follow) != 1 || follow[0] != won[0] {
			t.Errorf("round %d: the task's follow-ups %v, want only %q", round, follow, won[0])
		}
	}
}
