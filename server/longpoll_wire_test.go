package server_test

// Long-poll GetTask (A2A 1.1, spec §3.2.7 "Long-Polling") over the wire:
// on the three bindings and every store, a 1.1 GetTask whose
// currentGeneration is at or above the task's generation is held until
// the task changes, or answered unchanged at Options.LongPollTimeout;
// below it, without it, from a 1.0 caller, or for a task the caller does
// not own, it is answered at once. A hold counts as an open stream for
// the per-caller limit, and the drain ends it. Ordering is asserted, not
// timing: the guards only turn a hang into a failure.

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/a2ahttp"
	"parley.dev/parley/client"
	"parley.dev/parley/internal/pgtest"
	"parley.dev/parley/internal/testkit"
	pversion "parley.dev/parley/internal/version"
	"parley.dev/parley/server"
	"parley.dev/parley/taskstore"
)

// neverTimesOut is a LongPollTimeout no test waits for: a hold that
// should not be (or should be woken) fails on the guard instead.
const neverTimesOut = time.Hour

// startLongPollServer serves generationAgent on store with the 1.1
// preview on, holds ending at timeout, tokens (none: anonymous) and the
// handler's options adjusted by hopts (may be nil).
func startLongPollServer(t *testing.T, store taskstore.Store, timeout time.Duration, tokens map[string]string, hopts func(*a2ahttp.Options)) *testkit.Server {
	return testkit.StartServer(t, &testkit.Options{Agent: generationAgent(), Store: store, Quiet: true, Tokens: tokens, HTTP: hopts,
		Mutate: func(card *a2a.AgentCard, o *server.Options) {
			o.ProtocolVersions = []string{pversion.V11, a2a.ProtocolVersion, pversion.V03}
			o.LongPollTimeout = timeout
		}})
}

// bearer sends every request with a bearer token.
type bearer struct {
	base  http.RoundTripper
	token string
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

// principalClient is versionClient for the caller of token.
func principalClient(t *testing.T, s *testkit.Server, f client.TransportFactory, v, token string) *client.Client {
	base := http.DefaultTransport
	if f.Binding == a2a.BindingGRPC {
		base = testkit.H2CClient().Transport
	}
	pc, err := client.New(s.Card, &client.Options{HTTPClient: &http.Client{Transport: askVersion{bearer{base, token}, v}},
		Transports: []client.TransportFactory{f}, Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	return pc
}

// inputRequired makes a task that waits for input at generation 5 (the
// Task, WORKING, two chunks, INPUT_REQUIRED) and returns its id.
func inputRequired(t *testing.T, ctx context.Context, c *client.Client) string {
	t.Helper()
	resp, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("stream")})
	if tk := resp.GetTask(); err != nil || tk.GetGeneration() != 5 {
		t.Fatalf("send: %v, %v; want a task at generation 5", resp, err)
	}
	return resp.GetTask().GetId()
}

// poll is a GetTask of task id with currentGeneration gen.
func poll(id string, gen int64) *a2a.GetTaskRequest {
	return &a2a.GetTaskRequest{Id: id, CurrentGeneration: proto.Int64(gen)}
}

// answer is what a GetTask in a goroutine returned.
type answer struct {
	task *a2a.Task
	err  error
}

// holdAsync starts req on c in a goroutine, and waits until the core
// holds it (or it answered: a test that expected a hold then fails on
// what it got).
func holdAsync(t *testing.T, ctx context.Context, s *testkit.Server, c *client.Client, req *a2a.GetTaskRequest) <-chan answer {
	t.Helper()
	out := make(chan answer, 1)
	go func() {
		tk, err := c.GetTask(ctx, req)
		out <- answer{tk, err}
	}()
	for s.Core.Waiters(req.Id) == 0 && len(out) == 0 {
		if ctx.Err() != nil {
			t.Fatalf("GetTask %s was never held", req.Id)
		}
		time.Sleep(time.Millisecond)
	}
	return out
}

// await returns what a GetTask started by holdAsync answered.
func await(t *testing.T, ctx context.Context, ch <-chan answer) answer {
	t.Helper()
	select {
	case a := <-ch:
		return a
	case <-ctx.Done():
		t.Fatal("the held GetTask never answered")
		return answer{}
	}
}

// goOn sends the follow-up that takes an INPUT_REQUIRED task of
// generationAgent to COMPLETED (generation 8), retrying while the first
// execution is still returning.
func goOn(t *testing.T, ctx context.Context, c *client.Client, id string) {
	t.Helper()
	for {
		follow := a2a.UserMessage("go on")
		follow.TaskId = id
		_, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: follow})
		if !stillWorking(err) {
			if err != nil {
				t.Fatalf("follow-up: %v", err)
			}
			return
		}
	}
}

// onEveryStore runs fn on each binding against a long-poll server (see
// startLongPollServer) on each store, with a guard on its calls.
func onEveryStore(t *testing.T, timeout time.Duration, tokens map[string]string, fn func(t *testing.T, ctx context.Context, s *testkit.Server, f client.TransportFactory)) {
	for _, st := range scopeStores {
		t.Run(st.name, func(t *testing.T) {
			s := startLongPollServer(t, st.open(t), timeout, tokens, nil)
			for _, b := range scopeBindings {
				t.Run(b.name, func(t *testing.T) {
					ctx, cancel := context.WithTimeout(context.Background(), guard)
					defer cancel()
					fn(t, ctx, s, b.f())
				})
			}
		})
	}
}

func TestLongPollOverTheWire(t *testing.T) {
	onEveryStore(t, neverTimesOut, nil, func(t *testing.T, ctx context.Context, s *testkit.Server, f client.TransportFactory) {
		c11 := versionClient(t, s, f, pversion.V11)
		c10 := versionClient(t, s, f, a2a.ProtocolVersion)
		id := inputRequired(t, ctx, c11)

		// Answered at once: a generation below the task's, a
		// 1.0 caller (whose currentGeneration is no member of
		// its version), a missing task.
		if tk, err := c11.GetTask(ctx, poll(id, 4)); err != nil || tk.GetGeneration() != 5 {
			t.Errorf("currentGeneration 4: generation %d, %v; want 5 at once", tk.GetGeneration(), err)
		}
		if tk, err := c10.GetTask(ctx, poll(id, 5)); err != nil || tk.GetGeneration() != 0 ||
			tk.GetStatus().GetState() != a2a.TaskState_TASK_STATE_INPUT_REQUIRED {
			t.Errorf("1.0 caller, currentGeneration 5: %v, %v; want the task at once, without a generation", tk, err)
		}
		if _, err := c11.GetTask(ctx, poll("no-such-task", 5)); !errors.Is(err, a2a.ErrTaskNotFound) {
			t.Errorf("missing task: %v; want TaskNotFoundError at once", err)
		}

		// Held, then woken by a change: the answer comes after
		// it, with the new generation.
		req := poll(id, 5)
		req.HistoryLength = proto.Int32(1)
		held := holdAsync(t, ctx, s, c11, req)
		select {
		case a := <-held:
			t.Fatalf("answered before any change: %v, %v", a.task, a.err)
		default:
		}
		goOn(t, ctx, c11, id)
		a := await(t, ctx, held)
		// The first change is the follow-up's message itself (its
		// timeline entry, generation 6), which may still be
		// INPUT_REQUIRED.
		if a.err != nil || a.task.GetGeneration() <= 5 || a.task.GetHistory()[len(a.task.GetHistory())-1].GetRole() != a2a.Role_ROLE_USER &&
			a.task.GetStatus().GetState() == a2a.TaskState_TASK_STATE_INPUT_REQUIRED {
			t.Fatalf("held GetTask: %v, %v; want the task after the follow-up (generation 6 to 9)", a.task, a.err)
		}
		if n := len(a.task.GetHistory()); n > 1 {
			t.Errorf("held GetTask with historyLength 1: %d history messages", n)
		}
	})
}

// TestLongPollHoldKeepsNoTask: a hold keeps the task's generation, not a
// copy of the task, while it waits (a caller pins what it holds, not the
// size of the task it points at); the change that wakes it loads the task
// again, and the hold answers it whole.
func TestLongPollHoldKeepsNoTask(t *testing.T) {
	onEveryStore(t, neverTimesOut, nil, func(t *testing.T, ctx context.Context, s *testkit.Server, f client.TransportFactory) {
		c11 := versionClient(t, s, f, pversion.V11)
		id := inputRequired(t, ctx, c11)
		// The execution that asked for input ends after the answer: wait
		// until the run lets the task go.
		for _, live := s.Core.TaskLoaded(id); live; _, live = s.Core.TaskLoaded(id) {
			if ctx.Err() != nil {
				t.Fatal("the run of a task waiting for input was not let go")
			}
			time.Sleep(time.Millisecond)
		}
		held := holdAsync(t, ctx, s, c11, poll(id, 5))
		if loaded, live := s.Core.TaskLoaded(id); !live || loaded {
			t.Errorf("while held: live run %v, task loaded %v; want a live run without the task", live, loaded)
		}
		goOn(t, ctx, c11, id)
		a := await(t, ctx, held)
		if a.err != nil || a.task.GetGeneration() <= 5 || len(a.task.GetArtifacts()) == 0 || len(a.task.GetHistory()) < 2 {
			t.Fatalf("held GetTask: %v, %v; want the whole task after the follow-up", a.task, a.err)
		}
	})
}

// TestLongPollTimeout: at the server's timeout a hold answers the task
// unchanged, a normal result, whatever generation it waited past.
func TestLongPollTimeout(t *testing.T) {
	onEveryStore(t, 50*time.Millisecond, nil, func(t *testing.T, ctx context.Context, s *testkit.Server, f client.TransportFactory) {
		c := versionClient(t, s, f, pversion.V11)
		id := inputRequired(t, ctx, c)
		for _, gen := range []int64{5, 1000} {
			tk, err := c.GetTask(ctx, poll(id, gen))
			if err != nil || tk.GetGeneration() != 5 || tk.GetStatus().GetState() != a2a.TaskState_TASK_STATE_INPUT_REQUIRED {
				t.Errorf("currentGeneration %d at the timeout: %v, %v; want the task unchanged", gen, tk, err)
			}
		}
	})
}

// TestLongPollOwnerFirst: another principal's task is TaskNotFoundError
// at once, never after a hold.
func TestLongPollOwnerFirst(t *testing.T) {
	onEveryStore(t, neverTimesOut, map[string]string{"ta": "alice", "tb": "bob"}, func(t *testing.T, ctx context.Context, s *testkit.Server, f client.TransportFactory) {
		id := inputRequired(t, ctx, principalClient(t, s, f, pversion.V11, "ta"))
		_, err := principalClient(t, s, f, pversion.V11, "tb").GetTask(ctx, poll(id, 5))
		if !errors.Is(err, a2a.ErrTaskNotFound) {
			t.Errorf("bob's long poll of alice's task: %v; want TaskNotFoundError at once", err)
		}
	})
}

// TestLongPollCountsAsStream: with MaxStreams 1 a held GetTask is the
// caller's one stream: a second hold and a subscription are refused as a
// stream over the limit is, other callers and calls that are not held go
// on, and the place is given back when the hold ends.
func TestLongPollCountsAsStream(t *testing.T) {
	for _, b := range scopeBindings {
		t.Run(b.name, func(t *testing.T) {
			s := startLongPollServer(t, nil, neverTimesOut, map[string]string{"ta": "alice", "tb": "bob"},
				func(o *a2ahttp.Options) { o.MaxStreams = 1 })
			ctx, cancel := context.WithTimeout(context.Background(), guard)
			defer cancel()
			alice := principalClient(t, s, b.f(), pversion.V11, "ta")
			id := inputRequired(t, ctx, alice)
			hctx, stop := context.WithCancel(ctx)
			held := holdAsync(t, hctx, s, alice, poll(id, 5))

			if _, err := alice.GetTask(ctx, poll(id, 5)); !errors.Is(err, a2a.ErrRateLimited) {
				t.Errorf("a second hold: %v; want the stream limit's RateLimitedError", err)
			}
			for _, err := range alice.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{Id: id}) {
				if !errors.Is(err, a2a.ErrRateLimited) {
					t.Errorf("a subscription beside the hold: %v; want the stream limit's RateLimitedError", err)
				}
				break
			}
			if tk, err := alice.GetTask(ctx, poll(id, 4)); err != nil || tk.GetGeneration() != 5 {
				t.Errorf("a poll answered at once beside the hold: %v, %v", tk, err)
			}
			if _, err := principalClient(t, s, b.f(), a2a.ProtocolVersion, "ta").GetTask(ctx, poll(id, 5)); err != nil {
				t.Errorf("a 1.0 poll (never held) beside the hold: %v", err)
			}
			bob := principalClient(t, s, b.f(), pversion.V11, "tb")
			bctx, bstop := context.WithCancel(ctx)
			bobHeld := holdAsync(t, bctx, s, bob, poll(inputRequired(t, ctx, bob), 5))
			bstop()
			if a := await(t, ctx, bobHeld); !errors.Is(a.err, context.Canceled) {
				t.Errorf("bob's hold beside alice's: %v, %v; want it held until canceled", a.task, a.err)
			}

			stop()
			if a := await(t, ctx, held); !errors.Is(a.err, context.Canceled) {
				t.Errorf("the hold canceled by its caller: %v, %v; want context.Canceled", a.task, a.err)
			}
			// The place comes back once the server saw the caller leave.
			for {
				hctx, stop := context.WithCancel(ctx)
				again := holdAsync(t, hctx, s, alice, poll(id, 5))
				stop()
				a := await(t, ctx, again)
				if errors.Is(a.err, context.Canceled) {
					break
				}
				if !errors.Is(a.err, a2a.ErrRateLimited) || ctx.Err() != nil {
					t.Fatalf("a hold after the first ended: %v, %v", a.task, a.err)
				}
				time.Sleep(time.Millisecond)
			}
		})
	}
}

// TestLongPollDrain: the drain ends a hold at once with the task
// unchanged, and a poll while draining is not held.
func TestLongPollDrain(t *testing.T) {
	for _, b := range scopeBindings {
		t.Run(b.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), guard)
			defer cancel()
			s := startLongPollServer(t, nil, neverTimesOut, nil, nil)
			c := versionClient(t, s, b.f(), pversion.V11)
			id := inputRequired(t, ctx, c)
			held := holdAsync(t, ctx, s, c, poll(id, 5))
			drained := make(chan error, 1)
			go func() { drained <- s.Core.Shutdown(ctx) }()
			if a := await(t, ctx, held); a.err != nil || a.task.GetGeneration() != 5 {
				t.Errorf("hold at the drain: %v, %v; want the task unchanged", a.task, a.err)
			}
			if err := <-drained; err != nil {
				t.Errorf("Shutdown: %v", err)
			}
			if tk, err := c.GetTask(ctx, poll(id, 5)); err != nil || tk.GetGeneration() != 5 {
				t.Errorf("poll after the stop: %v, %v; want the task at once", tk, err)
			}
		})
	}
}

// TestLongPollAcrossReplicas: a hold on replica B is woken when replica A
// writes the task (the Bus's wake-up, through B's follower of the log),
// and answers with A's change.
func TestLongPollAcrossReplicas(t *testing.T) {
	url := pgtest.NewDatabase(t)
	opts := server.Options{ProtocolVersions: []string{pversion.V11, a2a.ProtocolVersion}, LongPollTimeout: neverTimesOut}
	a, _ := replica(t, url, 2*time.Second, opts)
	b, _ := replica(t, url, 2*time.Second, opts)
	in11 := func() context.Context { return as(t, "", version(pversion.V11)) }

	id := sendTask(t, a, in11(), "input-required").GetId()
	now, err := b.GetTask(in11(), &a2a.GetTaskRequest{Id: id})
	if err != nil || now.GetGeneration() == 0 {
		t.Fatalf("GetTask on B: %v, %v", now, err)
	}
	held := make(chan answer, 1)
	go func() {
		tk, err := b.GetTask(in11(), poll(id, now.GetGeneration()))
		held <- answer{tk, err}
	}()
	for b.Waiters(id) == 0 && len(held) == 0 {
		time.Sleep(time.Millisecond)
	}
	if len(held) > 0 {
		t.Fatalf("answered before any change: %v", <-held)
	}
	if _, err := followUp(t, a, "", followReq(id, "more")); err != nil {
		t.Fatalf("follow-up on A: %v", err)
	}
	select {
	case got := <-held:
		if got.err != nil || got.task.GetGeneration() <= now.GetGeneration() {
			t.Fatalf("hold on B: %v, %v; want A's change, past generation %d", got.task, got.err, now.GetGeneration())
		}
	case <-time.After(guard):
		t.Fatal("the hold on B was never woken by A's write")
	}
}

// TestLongPollEndsAtTheDrainNotAfterIt: the drain ends a hold at once,
// while the executions it waits for still run (the hold answers before
// Shutdown returns); Close, without a drain, ends a hold too.
func TestLongPollEndsAtTheDrainNotAfterIt(t *testing.T) {
	in11 := func() context.Context { return as(t, "", version(pversion.V11)) }
	opts := server.Options{Agent: generationAgent(), ProtocolVersions: []string{pversion.V11, a2a.ProtocolVersion}, LongPollTimeout: neverTimesOut}
	hold := func(s *server.Server, id string, gen int64) <-chan answer {
		held := make(chan answer, 1)
		go func() {
			tk, err := s.GetTask(in11(), poll(id, gen))
			held <- answer{tk, err}
		}()
		for s.Waiters(id) == 0 && len(held) == 0 {
			time.Sleep(time.Millisecond)
		}
		return held
	}

	s := newServer(t, opts)
	// "wait" works until canceled: generation 2, WORKING, its execution
	// running through the drain.
	id := taskOf(t)(s.SendMessage(in11(), withConfig(msgReq("wait"), &a2a.SendMessageConfiguration{ReturnImmediately: true}))).GetId()
	for tk, _ := s.GetTask(in11(), &a2a.GetTaskRequest{Id: id}); tk.GetGeneration() < 2; tk, _ = s.GetTask(in11(), &a2a.GetTaskRequest{Id: id}) {
		time.Sleep(time.Millisecond)
	}
	held := hold(s, id, 2)
	dctx, stopDrain := context.WithCancel(context.Background())
	drained := make(chan error, 1)
	go func() { drained <- s.Shutdown(dctx) }()
	unchangedAt(t, held, 2, "the drain")
	select {
	case err := <-drained:
		t.Errorf("Shutdown returned (%v) while the execution still ran", err)
	default:
	}
	stopDrain()
	<-drained

	s = newServer(t, opts)
	id = taskOf(t)(s.SendMessage(in11(), msgReq("stream"))).GetId() // INPUT_REQUIRED, generation 5
	held = hold(s, id, 5)
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	unchangedAt(t, held, 5, "Close")
}

// unchangedAt checks that what ended the hold held, and answered the
// task unchanged at generation gen.
func unchangedAt(t *testing.T, held <-chan answer, gen int64, what string) {
	t.Helper()
	select {
	case a := <-held:
		if a.err != nil || a.task.GetGeneration() != gen {
			t.Errorf("hold at %s: %v, %v; want the task unchanged, generation %d", what, a.task, a.err, gen)
		}
	case <-time.After(guard):
		t.Fatalf("%s did not end the hold", what)
	}
}
