package server_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/agents"
	"parley.dev/parley/server"
)

// startedAgent is the conformance agent, announcing each Execute call on
// started (when there is room) before it runs it.
func startedAgent(started chan<- string) server.Agent {
	conf := agents.Conformance()
	return server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		select {
		case started <- a2a.FirstText(req.Message):
		default: // nobody is counting this one
		}
		return conf.Execute(ctx, req, em)
	})
}

// inFlight is a blocking send and a stream of the same text, both running
// when inFlight returns.
type inFlight struct {
	blocking  chan sendResult
	stream    chan []a2a.StreamEvent
	streamErr chan error
}

type sendResult struct {
	task *a2a.Task
	err  error
}

func startInFlight(t *testing.T, s *server.Server, started <-chan string, text string) *inFlight {
	t.Helper()
	f := &inFlight{blocking: make(chan sendResult, 1), stream: make(chan []a2a.StreamEvent, 1), streamErr: make(chan error, 1)}
	go func() {
		resp, err := s.SendMessage(as(t, ""), msgReq(text))
		f.blocking <- sendResult{resp.GetTask(), err}
	}()
	go func() {
		var evs []a2a.StreamEvent
		for ev, err := range s.SendStreamingMessage(as(t, ""), msgReq(text)) {
			if err != nil {
				f.streamErr <- err
				break
			}
			evs = append(evs, ev)
		}
		f.stream <- evs
	}()
	for range 2 {
		select {
		case <-started:
		case <-time.After(guard):
			t.Fatal("the agent was not started twice")
		}
	}
	return f
}

// results waits for both calls and returns the blocking send's task and
// the stream's events.
func (f *inFlight) results(t *testing.T) (*a2a.Task, []a2a.StreamEvent) {
	t.Helper()
	var res sendResult
	select {
	case res = <-f.blocking:
	case <-time.After(guard):
		t.Fatal("the blocking send got no answer")
	}
	if res.err != nil {
		t.Fatalf("blocking send: %v", res.err)
	}
	var evs []a2a.StreamEvent
	select {
	case evs = <-f.stream:
	case <-time.After(guard):
		t.Fatal("the stream did not end")
	}
	select {
	case err := <-f.streamErr:
		t.Fatalf("stream: %v", err)
	default:
	}
	return res.task, evs
}

// lastStatus is the state and status text of a stream's last event, which
// must be a status update.
func lastStatus(t *testing.T, evs []a2a.StreamEvent) (a2a.TaskState, string) {
	t.Helper()
	if len(evs) == 0 {
		t.Fatal("the stream had no event")
	}
	su := evs[len(evs)-1].Response.GetStatusUpdate()
	if su == nil {
		t.Fatalf("the stream's last event is %s, want a status update (all: %v)", describe(evs[len(evs)-1]), describeAll(evs))
	}
	return su.GetStatus().GetState(), a2a.FirstText(su.GetStatus().GetMessage())
}

// TestShutdownDrains: Shutdown lets a blocking send and a stream whose
// tasks are running finish normally (COMPLETED), refuses a new message
// while it waits, still serves other operations, and returns nil.
func TestShutdownDrains(t *testing.T) {
	t.Parallel()
	started := make(chan string, 4)
	s := newServer(t, server.Options{Agent: startedAgent(started)})
	f := startInFlight(t, s, started, "slow 400")

	done := make(chan error, 1)
	begun := time.Now()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), guard)
		defer cancel()
		done <- s.Shutdown(ctx)
	}()

	// A new message during the drain is refused, on both sends; reads
	// go on. The drain may already be over on a slow machine: only a
	// refusal that says why is accepted, and it must come before
	// Shutdown returns for the reads to be meaningful.
	var refused error
	for refused == nil {
		_, refused = s.SendMessage(as(t, ""), msgReq("hello"))
		if refused == nil {
			time.Sleep(5 * time.Millisecond)
		}
	}
	wantShuttingDown(t, "SendMessage during the drain", refused)
	_, err := s.ListTasks(as(t, ""), &a2a.ListTasksRequest{})
	if err != nil {
		t.Errorf("ListTasks during the drain: %v", err)
	}
	for _, err := range s.SendStreamingMessage(as(t, ""), msgReq("hello")) {
		wantShuttingDown(t, "SendStreamingMessage during the drain", err)
		break
	}

	task, evs := f.results(t)
	if state(task) != a2a.TaskState_TASK_STATE_COMPLETED {
		t.Errorf("blocking send: task %s, want COMPLETED", short(state(task)))
	}
	if st, _ := lastStatus(t, evs); st != a2a.TaskState_TASK_STATE_COMPLETED {
		t.Errorf("stream: last status %s, want COMPLETED (all: %v)", short(st), describeAll(evs))
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Shutdown: %v, want nil", err)
		}
	case <-time.After(guard):
		t.Fatal("Shutdown did not return")
	}
	if d := time.Since(begun); d < 300*time.Millisecond {
		t.Errorf("Shutdown returned after %v: it did not wait for the agents (slow 400)", d)
	}
}

// wantShuttingDown checks the refusal of a message during the drain.
func wantShuttingDown(t *testing.T, what string, err error) {
	t.Helper()
	var ae *a2a.Error
	if !errors.As(err, &ae) || ae.Code != a2a.CodeUnavailable || !strings.Contains(ae.Message, "shutting down") {
		t.Errorf("%s: %v, want an UnavailableError saying the server is shutting down", what, err)
	}
}

// TestShutdownPastDeadline: when its context ends first, Shutdown cancels
// the agents; their tasks end FAILED with a status message saying the
// server is shutting down, the blocking send gets that task, the stream
// ends with that status, and Shutdown returns the context's error.
func TestShutdownPastDeadline(t *testing.T) {
	t.Parallel()
	started := make(chan string, 2)
	s := newServer(t, server.Options{Agent: startedAgent(started)})
	f := startInFlight(t, s, started, "slow 60000")

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	begun := time.Now()
	if err := s.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Shutdown: %v, want %v", err, context.DeadlineExceeded)
	}
	if d := time.Since(begun); d > 200*time.Millisecond+server.ShutdownGrace+time.Second {
		t.Errorf("Shutdown took %v", d)
	}
	task, evs := f.results(t)
	if state(task) != a2a.TaskState_TASK_STATE_FAILED || !strings.Contains(a2a.FirstText(task.GetStatus().GetMessage()), "server shutting down") {
		t.Errorf("blocking send: task %s %q, want FAILED saying the server is shutting down",
			short(state(task)), a2a.FirstText(task.GetStatus().GetMessage()))
	}
	st, text := lastStatus(t, evs)
	if st != a2a.TaskState_TASK_STATE_FAILED || !strings.Contains(text, "server shutting down") {
		t.Errorf("stream: last status %s %q, want FAILED saying the server is shutting down (all: %v)", short(st), text, describeAll(evs))
	}
}

// TestShutdownStubbornAgent: an agent that ignores its context's end does
// not hold Shutdown past ShutdownGrace; its task ends FAILED all the same,
// and the blocking send gets it.
func TestShutdownStubbornAgent(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	working := make(chan struct{}, 1)
	agent := server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		if err := em.Status(a2a.TaskState_TASK_STATE_WORKING, nil); err != nil {
			return err
		}
		working <- struct{}{}
		<-release // deaf to ctx
		return nil
	})
	s := newServer(t, server.Options{Agent: agent})
	t.Cleanup(func() { close(release) }) // before newServer's Close
	answer := make(chan sendResult, 1)
	go func() {
		resp, err := s.SendMessage(as(t, ""), msgReq("hi"))
		answer <- sendResult{resp.GetTask(), err}
	}()
	within(t, working, "the agent to start")
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	begun := time.Now()
	if err := s.Shutdown(ctx); err == nil {
		t.Error("Shutdown: nil, want an error (the agent never returned)")
	}
	if d := time.Since(begun); d > 100*time.Millisecond+server.ShutdownGrace+time.Second {
		t.Errorf("Shutdown took %v, want about 100ms + ShutdownGrace", d)
	}
	select {
	case res := <-answer:
		if res.err != nil || state(res.task) != a2a.TaskState_TASK_STATE_FAILED ||
			!strings.Contains(a2a.FirstText(res.task.GetStatus().GetMessage()), "server shutting down") {
			t.Errorf("blocking send: %v %v, want a FAILED task saying the server is shutting down", res.task.GetStatus(), res.err)
		}
	case <-time.After(guard):
		t.Fatal("the blocking send got no answer")
	}
}

// TestShutdownLeavesInterrupted: a task waiting in INPUT_REQUIRED holds no
// execution, so Shutdown does not wait for it, and it stays INPUT_REQUIRED
// (its follow-up may come after the restart).
func TestShutdownLeavesInterrupted(t *testing.T) {
	t.Parallel()
	s := newServer(t, server.Options{})
	task := sendTask(t, s, anon(t), "input-required")
	if state(task) != a2a.TaskState_TASK_STATE_INPUT_REQUIRED {
		t.Fatalf("task %s, want INPUT_REQUIRED", short(state(task)))
	}
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	got, err := s.GetTask(anon(t), &a2a.GetTaskRequest{Id: task.Id})
	if err != nil || state(got) != a2a.TaskState_TASK_STATE_INPUT_REQUIRED {
		t.Errorf("after Shutdown: %v %v, want INPUT_REQUIRED", got.GetStatus(), err)
	}
}
