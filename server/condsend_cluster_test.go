package server_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/eventbus"
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
	a, b, v11 := v11Replicas(t, server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		if req.Task == nil {
			return em.Status(a2a.TaskState_TASK_STATE_INPUT_REQUIRED, nil)
		}
		time.Sleep(20 * time.Millisecond)
		return em.Status(a2a.TaskState_TASK_STATE_COMPLETED, nil)
	}))
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

// TestClusterTimeline: the timeline's count across replicas. A task made
// on one replica, held there by a long poll on its generation, is
// continued on the other (an ordinary follow-up that first loses the
// sequence to nobody, then one that meets the first replica's run
// behind it): the hold wakes at the message's own entry, and both
// replicas read back the same timeline, the two follow-ups as message
// entries, in increasing generations up to the task's.
func TestClusterTimeline(t *testing.T) {
	a, b, v11 := v11Replicas(t, untilDone)
	task := taskOf(t)(a.SendMessage(v11(), msgReq("start")))
	gen := task.GetGeneration()
	held := make(chan *a2a.Task, 1)
	go func() {
		tk, err := a.GetTask(v11(), &a2a.GetTaskRequest{Id: task.Id, CurrentGeneration: &gen})
		if err != nil {
			t.Error(err)
		}
		held <- tk
	}()
	time.Sleep(200 * time.Millisecond) // the hold arrives first (not needed for the outcome)
	taskOf(t)(b.SendMessage(v11(), followReq(task.Id, "more")))
	select {
	case tk := <-held:
		if tk.GetGeneration() <= gen {
			t.Errorf("the hold on the other replica answered generation %d, want past %d", tk.GetGeneration(), gen)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the hold on the other replica was not woken by the follow-up")
	}
	// a's run may be behind b's writes: its follow-up meets them.
	done := taskOf(t)(a.SendMessage(v11(), followReq(task.Id, "done")))
	var views [2][]string
	for i, s := range []*server.Server{a, b} {
		tk, err := s.GetTask(v11(), &a2a.GetTaskRequest{Id: task.Id})
		if err != nil {
			t.Fatal(err)
		}
		var last int64
		for _, e := range tk.GetTimeline() {
			if e.GetGeneration() <= last || e.GetGeneration() > tk.GetGeneration() {
				t.Errorf("replica %d: entry at %d after %d (task at %d)", i, e.GetGeneration(), last, tk.GetGeneration())
			}
			last = e.GetGeneration()
			views[i] = append(views[i], fmt.Sprint(e.GetGeneration(), entryText(e)))
		}
		if tk.GetGeneration() != done.GetGeneration() {
			t.Errorf("replica %d: generation %d, want %d", i, tk.GetGeneration(), done.GetGeneration())
		}
	}
	want := []string{"1user:start", "2INPUT_REQUIRED", "3user:more", "4INPUT_REQUIRED", "5user:done", "6COMPLETED"}
	if fmt.Sprint(views[0]) != fmt.Sprint(want) || fmt.Sprint(views[1]) != fmt.Sprint(want) {
		t.Errorf("timelines %v and %v, want %v on both", views[0], views[1], want)
	}
}

// countsAnnounces is a Bus that counts the announcements (Notify of a
// task's key, not of a request key) its replica makes.
type countsAnnounces struct {
	server.Bus
	n atomic.Int64
}

func (b *countsAnnounces) Notify(ctx context.Context, key string, seq uint64) error {
	if !eventbus.IsRequest(key) {
		b.n.Add(1)
	}
	return b.Bus.Notify(ctx, key, seq)
}

// TestClusterFollowerDoesNotReannounce: a replica that follows a task (a
// long poll held there) and reads another replica's follow-up message
// from the log wakes its hold, and announces nothing: the replica that
// wrote the message announced it (every follower already read it), and a
// second announcement from each follower would have every follower read
// the log again for nothing.
func TestClusterFollowerDoesNotReannounce(t *testing.T) {
	url := pgtest.NewDatabase(t)
	agent := server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		return em.Status(a2a.TaskState_TASK_STATE_INPUT_REQUIRED, nil)
	})
	opts := server.Options{Agent: agent, ProtocolVersions: []string{pversion.V11, a2a.ProtocolVersion}}
	a, _ := replica(t, url, 2*time.Second, opts)
	bus := &countsAnnounces{}
	b, _ := wrappedReplica(t, url, 2*time.Second, opts, func(o *server.Options) {
		bus.Bus = o.Cluster.Bus
		o.Cluster.Bus = bus
	})
	v11 := func() context.Context { return as(t, "", version(pversion.V11)) }
	task := taskOf(t)(a.SendMessage(v11(), msgReq("start")))
	gen := task.GetGeneration()
	held := make(chan *a2a.Task, 1)
	go func() {
		tk, err := b.GetTask(v11(), &a2a.GetTaskRequest{Id: task.Id, CurrentGeneration: &gen})
		if err != nil {
			t.Error(err)
		}
		held <- tk
	}()
	time.Sleep(200 * time.Millisecond) // the hold is in place on b
	taskOf(t)(a.SendMessage(v11(), followReq(task.Id, "more")))
	select {
	case tk := <-held:
		if tk.GetGeneration() <= gen {
			t.Fatalf("the hold on b answered generation %d, want past %d", tk.GetGeneration(), gen)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the hold on b was not woken by a's follow-up")
	}
	time.Sleep(300 * time.Millisecond) // b's announcer would have sent by now
	if n := bus.n.Load(); n != 0 {
		t.Errorf("b, which wrote nothing, announced the task %d times", n)
	}
}

// TestClusterFollowUpBehindReplica: a follow-up given to a replica whose
// run has applied another replica's follow-up but not yet the
// INPUT_REQUIRED its agent answered (the run lags the store on purpose)
// is taken, not refused as one still being worked on; a conditional one
// expecting the run's older generation is refused with the stored one.
func TestClusterFollowUpBehindReplica(t *testing.T) {
	a, b, v11 := v11Replicas(t, untilDone)
	// lagging makes a task on a, continues it on b, and leaves a's run
	// with b's message applied and not the status after it.
	lagging := func() (*a2a.Task, *a2a.Task) {
		task := taskOf(t)(a.SendMessage(v11(), msgReq("start")))
		held, err := a.HoldRun(t.Context(), task.Id)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(held.Release)
		more := taskOf(t)(b.SendMessage(v11(), followReq(task.Id, "more")))
		if more.GetStatus().GetState() != a2a.TaskState_TASK_STATE_INPUT_REQUIRED {
			t.Fatalf("the follow-up on b left the task %s", more.GetStatus().GetState())
		}
		if seq, err := held.ApplyNext(t.Context()); err != nil || seq != uint64(task.GetGeneration())+1 {
			t.Fatalf("a's run at %d (%v), want just past %d", seq, err, task.GetGeneration())
		}
		return task, more
	}
	task, more := lagging()
	done := taskOf(t)(a.SendMessage(v11(), followReq(task.Id, "done")))
	if done.GetStatus().GetState() != a2a.TaskState_TASK_STATE_COMPLETED || done.GetGeneration() != more.GetGeneration()+2 {
		t.Fatalf("the follow-up on a: %s at %d, want COMPLETED at %d", done.GetStatus().GetState(), done.GetGeneration(), more.GetGeneration()+2)
	}
	task, more = lagging()
	stale := more.GetGeneration() - 1 // a's run's generation
	_, err := a.SendMessage(v11(), withConfig(followReq(task.Id, "stale"), &a2a.SendMessageConfiguration{IfGenerationMatch: &stale}))
	if exp, cur, _ := a2a.MismatchedGenerations(err); !errors.Is(err, a2a.ErrTaskGenerationMismatch) || exp != stale || cur != more.GetGeneration() {
		t.Fatalf("conditional follow-up expecting %d: %v (expected %d, current %d); want a mismatch at %d", stale, err, exp, cur, more.GetGeneration())
	}
}

// untilDone asks for input until a message says "done", then completes.
var untilDone = server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
	if a2a.FirstText(req.Message) == "done" {
		return em.Status(a2a.TaskState_TASK_STATE_COMPLETED, nil)
	}
	return em.Status(a2a.TaskState_TASK_STATE_INPUT_REQUIRED, nil)
})

// v11Replicas starts two replicas of agent serving 1.1 and 1.0 on a new
// PostgreSQL database, and returns them with a maker of contexts of
// calls at 1.1.
func v11Replicas(t *testing.T, agent server.Agent) (a, b *server.Server, v11 func() context.Context) {
	t.Helper()
	url := pgtest.NewDatabase(t)
	opts := server.Options{Agent: agent, ProtocolVersions: []string{pversion.V11, a2a.ProtocolVersion}}
	a, _ = replica(t, url, 2*time.Second, opts)
	b, _ = replica(t, url, 2*time.Second, opts)
	return a, b, func() context.Context { return as(t, "", version(pversion.V11)) }
}
