package server_test

// Tests of the agent API and the task lifecycle: what the core does when an
// agent returns, fails, panics, detaches or is canceled; when blocking sends
// return; how streams and subscriptions start, order and end; artifact
// chunks; restarts and retention.

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/agents"
	"parley.dev/parley/server"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/memstore"
	"parley.dev/parley/taskstore/sqlitestore"
)

// failGuard is how long a test waits for something that should already
// have happened before it declares failure. Only failing runs wait it out.
const failGuard = 3 * time.Second

// within waits for ch or fails the test after failGuard.
func within(t testing.TB, ch <-chan struct{}, what string) bool {
	t.Helper()
	select {
	case <-ch:
		return true
	case <-time.After(failGuard):
		t.Errorf("timed out waiting for %s", what)
		return false
	}
}

// shortCtx is a call context whose deadline is failGuard: a stream that
// should have ended but did not ends there and the test reports it.
func shortCtx(t testing.TB, principal string) context.Context {
	ctx, cancel := context.WithTimeout(as(t, principal), failGuard)
	t.Cleanup(cancel)
	return ctx
}

// ---------------------------------------------------------------------------
// What the core does when Execute ends

func TestAgentMustSettle(t *testing.T) {
	t.Parallel()
	behaviours := map[string]func(ctx context.Context, em *server.Emitter) error{
		"returns while working": func(ctx context.Context, em *server.Emitter) error {
			return em.Status(a2a.TaskState_TASK_STATE_WORKING, nil)
		},
		"returns while submitted": func(ctx context.Context, em *server.Emitter) error {
			return em.Status(a2a.TaskState_TASK_STATE_SUBMITTED, nil)
		},
		"returns after an artifact": func(ctx context.Context, em *server.Emitter) error {
			return em.Artifact(a2a.TextArtifact("a", "partial"))
		},
		"returns an error": func(ctx context.Context, em *server.Emitter) error {
			if err := em.Status(a2a.TaskState_TASK_STATE_WORKING, nil); err != nil {
				return err
			}
			return errors.New("the model is down")
		},
		"returns an error at once": func(ctx context.Context, em *server.Emitter) error {
			return errors.New("the model is down")
		},
		"panics": func(ctx context.Context, em *server.Emitter) error {
			if err := em.Status(a2a.TaskState_TASK_STATE_WORKING, nil); err != nil {
				return err
			}
			panic("agent bug")
		},
		"panics at once": func(ctx context.Context, em *server.Emitter) error {
			var m map[string]int
			m["boom"]++ // a runtime panic
			return nil
		},
		"emits nothing": func(ctx context.Context, em *server.Emitter) error {
			return nil
		},
	}
	agent := server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		if b, ok := behaviours[a2a.FirstText(req.Message)]; ok {
			return b(ctx, em)
		}
		return agents.Conformance().Execute(ctx, req, em)
	})
	s := newServer(t, server.Options{Agent: agent})
	for name := range behaviours {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			task := sendTask(t, s, anon(t), name)
			if state(task) != a2a.TaskState_TASK_STATE_FAILED {
				t.Fatalf("task ended %s, want FAILED", short(state(task)))
			}
			msg := task.GetStatus().GetMessage()
			if a2a.FirstText(msg) == "" || msg.GetRole() != a2a.Role_ROLE_AGENT || msg.GetTaskId() != task.Id || msg.GetContextId() != task.ContextId {
				t.Errorf("FAILED status message = %v; want an agent message saying why, with the task's ids", msg)
			}
			got, err := s.GetTask(anon(t), &a2a.GetTaskRequest{Id: task.Id})
			if err != nil || !proto.Equal(got, task) {
				t.Errorf("GetTask = %v, %v; want %v", got, err, task)
			}
			// The server keeps working.
			if ok := sendTask(t, s, anon(t), "still alive"); state(ok) != a2a.TaskState_TASK_STATE_COMPLETED {
				t.Errorf("a normal task afterwards ended %s", short(state(ok)))
			}
		})
	}
	t.Run("streaming", func(t *testing.T) {
		t.Parallel()
		for _, name := range []string{"panics", "emits nothing", "returns while working"} {
			evs, err := collect(s.SendStreamingMessage(shortCtx(t, ""), msgReq(name)))
			if err != nil || len(evs) < 2 || evs[0].Response.GetTask() == nil || describe(evs[len(evs)-1]) != "status:FAILED" {
				t.Errorf("%s: stream = %v, %v; want a task ending FAILED", name, describeAll(evs), err)
			}
			checkSeq(t, evs)
		}
	})
}

// TestAgentErrorAfterInterrupt: the Agent contract says a returned error
// ends the task FAILED. An agent that parks the task in INPUT_REQUIRED and
// then returns an error leaves it INPUT_REQUIRED: run.returned only fails a
// task that is not "settled", whatever the error.
func TestAgentErrorAfterInterrupt(t *testing.T) {
	t.Parallel()
	proceed := make(chan struct{})
	agent := server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		if err := em.StatusText(a2a.TaskState_TASK_STATE_INPUT_REQUIRED, "which one?"); err != nil {
			return err
		}
		select {
		case <-proceed:
		case <-ctx.Done():
		}
		return errors.New("lost the connection to the model")
	})
	s := newServer(t, server.Options{Agent: agent})
	task := sendTask(t, s, anon(t), "hi")
	if state(task) != a2a.TaskState_TASK_STATE_INPUT_REQUIRED {
		t.Fatalf("task is %s", short(state(task)))
	}
	var evs []a2a.StreamEvent
	for ev, err := range s.SubscribeToTask(shortCtx(t, ""), &a2a.SubscribeToTaskRequest{Id: task.Id}) {
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
		if len(evs) == 1 {
			close(proceed) // the agent now returns its error
		}
	}
	got, _ := s.GetTask(anon(t), &a2a.GetTaskRequest{Id: task.Id})
	if state(got) != a2a.TaskState_TASK_STATE_FAILED {
		t.Errorf("after the agent returned an error the task is %s (events %v); want FAILED", short(state(got)), describeAll(evs))
	}
}

func TestDetachCompletesLater(t *testing.T) {
	t.Parallel()
	returned, release := make(chan struct{}), make(chan struct{})
	agent := server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		if err := em.Status(a2a.TaskState_TASK_STATE_WORKING, nil); err != nil {
			return err
		}
		em.Detach()
		go func() {
			select {
			case <-release:
			case <-ctx.Done():
				return
			}
			if err := em.Artifact(a2a.TextArtifact("late", "background result")); err != nil {
				t.Errorf("detached Artifact: %v", err)
			}
			if err := em.Status(a2a.TaskState_TASK_STATE_COMPLETED, nil); err != nil {
				t.Errorf("detached Status: %v", err)
			}
			// The task is terminal: the emitter is done.
			if err := em.StatusText(a2a.TaskState_TASK_STATE_WORKING, "again"); err == nil {
				t.Error("emitting after COMPLETED succeeded")
			}
		}()
		close(returned)
		return nil
	})
	s := newServer(t, server.Options{Agent: agent})
	type result struct {
		task *a2a.Task
		err  error
	}
	res := make(chan result, 1)
	go func() {
		resp, err := s.SendMessage(anon(t), msgReq("work in the background"))
		res <- result{resp.GetTask(), err}
	}()
	if !within(t, returned, "Execute to return") {
		return
	}
	close(release) // only now can the task complete
	r := <-res
	if r.err != nil || state(r.task) != a2a.TaskState_TASK_STATE_COMPLETED {
		t.Fatalf("blocking SendMessage = %v, %v; want it to wait for COMPLETED", r.task, r.err)
	}
	if len(r.task.Artifacts) != 1 || a2a.JoinText(r.task.Artifacts[0].Parts) != "background result" {
		t.Errorf("artifacts = %v", r.task.Artifacts)
	}
}

// detachedAgent parks WORKING, detaches and returns; its background half
// waits for finish (or its context), then completes the task and reports
// what it saw.
type detachedAgent struct {
	returned chan struct{}
	finish   chan struct{}
	canceled chan error // the context's cause, if it was canceled
	emitted  chan error // the result of the background Status(COMPLETED)
}

func newDetachedAgent() *detachedAgent {
	return &detachedAgent{make(chan struct{}), make(chan struct{}), make(chan error, 1), make(chan error, 1)}
}

func (d *detachedAgent) Execute(ctx context.Context, req *server.Request, em *server.Emitter) error {
	if err := em.Status(a2a.TaskState_TASK_STATE_WORKING, nil); err != nil {
		return err
	}
	em.Detach()
	go func() {
		select {
		case <-d.finish:
		case <-ctx.Done():
			d.canceled <- context.Cause(ctx)
			<-d.finish
		}
		if err := em.Artifact(a2a.TextArtifact("late", "done")); err != nil {
			d.emitted <- err
			return
		}
		d.emitted <- em.Status(a2a.TaskState_TASK_STATE_COMPLETED, nil)
	}()
	close(d.returned)
	return nil
}

// settle lets the goroutines that ran Execute finish their bookkeeping: it
// subscribes (and leaves) until the snapshot shows the task was reloaded
// from the store (Seq 0), or gives up after many tries. Spinning on an
// observable is the only handle the API offers.
func settle(t testing.TB, s a2a.Service, principal, id string) {
	for range 20000 {
		for ev, err := range s.SubscribeToTask(as(t, principal), &a2a.SubscribeToTaskRequest{Id: id}) {
			if err == nil && ev.Seq == 0 {
				return
			}
			break
		}
		runtime.Gosched()
	}
}

// TestDetachedWorkAfterExecuteReturns: once Execute returned after Detach,
// the core drops its in-memory state of the task as soon as nothing else
// refers to it (run.start releases its reference when Execute returns,
// detached or not). The background half keeps emitting into that orphan:
// new subscribers never see its events, CancelTask does not cancel its
// context, and its late COMPLETED overwrites a CANCELED task in the store.
func TestDetachedWorkAfterExecuteReturns(t *testing.T) {
	t.Parallel()
	start := func(t *testing.T) (*server.Server, *detachedAgent, *a2a.Task) {
		d := newDetachedAgent()
		s := newServer(t, server.Options{Agent: d})
		task := taskOf(t)(s.SendMessage(anon(t), withConfig(msgReq("go on alone"), &a2a.SendMessageConfiguration{ReturnImmediately: true})))
		if !within(t, d.returned, "Execute to return") {
			t.FailNow()
		}
		settle(t, s, "", task.Id)
		t.Cleanup(func() {
			select {
			case <-d.finish:
			default:
				close(d.finish)
			}
		})
		return s, d, task
	}
	t.Run("subscriber sees the late events", func(t *testing.T) {
		t.Parallel()
		s, d, task := start(t)
		var evs []a2a.StreamEvent
		var err error
		for ev, e := range s.SubscribeToTask(shortCtx(t, ""), &a2a.SubscribeToTaskRequest{Id: task.Id}) {
			if e != nil {
				err = e
				break
			}
			evs = append(evs, ev)
			if len(evs) == 1 {
				close(d.finish)
			}
		}
		if got := describeAll(evs); err != nil || !slices.Equal(got, []string{"task:WORKING", "artifact:late:done:append=false:last=true", "status:COMPLETED"}) {
			t.Errorf("subscription = %v, %v; want the snapshot, the artifact and COMPLETED", got, err)
		}
	})
	t.Run("cancel reaches it", func(t *testing.T) {
		t.Parallel()
		s, d, task := start(t)
		got, err := s.CancelTask(anon(t), &a2a.CancelTaskRequest{Id: task.Id})
		if err != nil || state(got) != a2a.TaskState_TASK_STATE_CANCELED {
			t.Fatalf("CancelTask = %v, %v", got, err)
		}
		select {
		case c := <-d.canceled:
			if !errors.Is(c, server.ErrCanceled) {
				t.Errorf("context cause = %v, want ErrCanceled", c)
			}
		case <-time.After(failGuard):
			t.Error("CancelTask did not cancel the detached agent's context")
		}
		close(d.finish)
		if err := <-d.emitted; err == nil {
			t.Error("the detached agent emitted after its task was canceled")
		}
		if got, _ := s.GetTask(anon(t), &a2a.GetTaskRequest{Id: task.Id}); state(got) != a2a.TaskState_TASK_STATE_CANCELED {
			t.Errorf("canceled task is now %s", short(state(got)))
		}
	})
}

// TestEmitAfterCancel: after CancelTask the agent's context ends with cause
// ErrCanceled and emitting returns ErrTaskClosed, as the Emitter's errors
// document ("the task is already terminal (for example it was canceled)").
func TestEmitAfterCancel(t *testing.T) {
	t.Parallel()
	started := make(chan struct{})
	cause, emitted := make(chan error, 1), make(chan error, 1)
	agent := server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		if err := em.Status(a2a.TaskState_TASK_STATE_WORKING, nil); err != nil {
			return err
		}
		close(started)
		<-ctx.Done()
		cause <- context.Cause(ctx)
		emitted <- em.Status(a2a.TaskState_TASK_STATE_COMPLETED, nil)
		return nil
	})
	s := newServer(t, server.Options{Agent: agent})
	type result struct {
		task *a2a.Task
		err  error
	}
	blocked := make(chan result, 1)
	req := msgReq("long job")
	go func() {
		resp, err := s.SendMessage(anon(t), proto.Clone(req).(*a2a.SendMessageRequest))
		blocked <- result{resp.GetTask(), err}
	}()
	if !within(t, started, "the agent to start") {
		return
	}
	// The blocking send is still waiting; find its task by listing.
	res, err := s.ListTasks(anon(t), &a2a.ListTasksRequest{})
	if err != nil || len(res.Tasks) != 1 {
		t.Fatalf("ListTasks = %v, %v", res, err)
	}
	id := res.Tasks[0].Id
	canceled, err := s.CancelTask(anon(t), &a2a.CancelTaskRequest{Id: id})
	if err != nil || state(canceled) != a2a.TaskState_TASK_STATE_CANCELED {
		t.Fatalf("CancelTask = %v, %v", canceled, err)
	}
	if c := <-cause; !errors.Is(c, server.ErrCanceled) {
		t.Errorf("context.Cause = %v, want server.ErrCanceled", c)
	}
	if err := <-emitted; !errors.Is(err, server.ErrTaskClosed) {
		t.Errorf("Status after cancel = %v, want server.ErrTaskClosed", err)
	}
	if r := <-blocked; r.err != nil || state(r.task) != a2a.TaskState_TASK_STATE_CANCELED {
		t.Errorf("the blocking SendMessage returned %v, %v; want the CANCELED task", r.task, r.err)
	}
	if got, _ := s.GetTask(anon(t), &a2a.GetTaskRequest{Id: id}); state(got) != a2a.TaskState_TASK_STATE_CANCELED {
		t.Errorf("task is %s after the late emit", short(state(got)))
	}
}

func TestReplyRules(t *testing.T) {
	t.Parallel()
	type report struct{ first, second error }
	reports := make(chan report, 3)
	agent := server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		var r report
		switch a2a.FirstText(req.Message) {
		case "status then reply":
			r.first = em.Status(a2a.TaskState_TASK_STATE_WORKING, nil)
			r.second = em.Reply(a2a.AgentMessage("too late"))
			_ = em.Status(a2a.TaskState_TASK_STATE_COMPLETED, nil)
		case "reply then status":
			r.first = em.Reply(a2a.AgentMessage("the answer"))
			r.second = em.Status(a2a.TaskState_TASK_STATE_WORKING, nil)
		case "reply twice":
			r.first = em.Reply(a2a.AgentMessage("the answer"))
			r.second = em.Reply(a2a.AgentMessage("another"))
		}
		reports <- r
		return nil
	})
	s := newServer(t, server.Options{Agent: agent})

	resp, err := s.SendMessage(anon(t), msgReq("status then reply"))
	r := <-reports
	if r.first != nil || !errors.Is(r.second, server.ErrReplyNotFirst) {
		t.Errorf("Reply after Status = %v, want ErrReplyNotFirst", r.second)
	}
	if task := resp.GetTask(); err != nil || state(task) != a2a.TaskState_TASK_STATE_COMPLETED {
		t.Errorf("status then reply: %v, %v; want the COMPLETED task", resp, err)
	}

	for _, text := range []string{"reply then status", "reply twice"} {
		req := msgReq(text)
		resp, err := s.SendMessage(anon(t), req)
		r := <-reports
		if r.first != nil || r.second == nil {
			t.Errorf("%s: errors %v, %v; want the second call refused", text, r.first, r.second)
		}
		m := resp.GetMessage()
		if err != nil || a2a.FirstText(m) != "the answer" || m.GetRole() != a2a.Role_ROLE_AGENT || m.GetMessageId() == "" || m.GetContextId() == "" || m.GetTaskId() != "" {
			t.Errorf("%s: SendMessage = %v, %v; want the reply, with a contextId and no taskId", text, resp, err)
		}
		if res, _ := s.ListTasks(anon(t), &a2a.ListTasksRequest{ContextId: m.GetContextId()}); len(res.GetTasks()) != 0 {
			t.Errorf("%s: a direct reply created a task", text)
		}
	}
}

// TestRequestIsTheAgents: Request says "The agent owns it and may keep
// it", but Request.Message is the very message the core keeps in the task's
// history, so an agent that edits it rewrites the stored history (and races
// with every reader of the task).
func TestRequestIsTheAgents(t *testing.T) {
	t.Parallel()
	agent := server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		if err := em.Status(a2a.TaskState_TASK_STATE_WORKING, nil); err != nil {
			return err
		}
		req.Message.Parts[0] = a2a.TextPart("edited by the agent")
		req.Message.ReferenceTaskIds = append(req.Message.ReferenceTaskIds, "scribble")
		return em.Status(a2a.TaskState_TASK_STATE_COMPLETED, nil)
	})
	s := newServer(t, server.Options{Agent: agent})
	task := sendTask(t, s, anon(t), "original text")
	got, _ := s.GetTask(anon(t), &a2a.GetTaskRequest{Id: task.Id})
	if h := historyTexts(got); len(h) == 0 || h[0] != "original text" || len(got.History[0].ReferenceTaskIds) != 0 {
		t.Errorf("stored history = %q (%v); the agent's edit of its Request leaked into the task", h, got.History[0].GetReferenceTaskIds())
	}
}

// ---------------------------------------------------------------------------
// When a blocking SendMessage returns

func TestBlockingSendReturnsWhenSettled(t *testing.T) {
	t.Parallel()
	hold := make(chan struct{})
	t.Cleanup(func() { close(hold) })
	agent := server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		st := a2a.TaskState(a2a.TaskState_value[a2a.FirstText(req.Message)])
		if err := em.Status(a2a.TaskState_TASK_STATE_WORKING, nil); err != nil {
			return err
		}
		for _, id := range []string{"a1", "a2"} {
			if err := em.Artifact(a2a.TextArtifact(id, "content of "+id)); err != nil {
				return err
			}
		}
		if err := em.StatusText(st, "now "+short(st)); err != nil {
			return err
		}
		if a2a.IsInterrupted(st) {
			// Still inside Execute: the blocking call must not wait for it.
			select {
			case <-hold:
			case <-ctx.Done():
			}
		}
		return nil
	})
	s := newServer(t, server.Options{Agent: agent})
	for _, st := range []a2a.TaskState{
		a2a.TaskState_TASK_STATE_COMPLETED, a2a.TaskState_TASK_STATE_FAILED,
		a2a.TaskState_TASK_STATE_CANCELED, a2a.TaskState_TASK_STATE_REJECTED,
		a2a.TaskState_TASK_STATE_INPUT_REQUIRED, a2a.TaskState_TASK_STATE_AUTH_REQUIRED,
	} {
		t.Run(short(st), func(t *testing.T) {
			t.Parallel()
			task := taskOf(t)(s.SendMessage(shortCtx(t, ""), msgReq(st.String())))
			if state(task) != st {
				t.Errorf("returned in %s, want %s", short(state(task)), short(st))
			}
			if len(task.Artifacts) != 2 || task.Artifacts[0].ArtifactId != "a1" || task.Artifacts[1].ArtifactId != "a2" {
				t.Errorf("artifacts = %v, want a1 and a2", task.Artifacts)
			}
			if a2a.FirstText(task.Status.GetMessage()) != "now "+short(st) {
				t.Errorf("status message = %v", task.Status.GetMessage())
			}
		})
	}
}

func TestReturnImmediately(t *testing.T) {
	t.Parallel()
	release, done := make(chan struct{}), make(chan struct{})
	agent := server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		defer close(done)
		if err := em.Status(a2a.TaskState_TASK_STATE_WORKING, nil); err != nil {
			return err
		}
		select {
		case <-release:
		case <-ctx.Done():
			return nil
		}
		if err := em.Artifact(a2a.TextArtifact("r", "result")); err != nil {
			return err
		}
		return em.Status(a2a.TaskState_TASK_STATE_COMPLETED, nil)
	})
	s := newServer(t, server.Options{Agent: agent})
	task := taskOf(t)(s.SendMessage(shortCtx(t, ""), withConfig(msgReq("job"), &a2a.SendMessageConfiguration{ReturnImmediately: true})))
	if st := state(task); st != a2a.TaskState_TASK_STATE_SUBMITTED && st != a2a.TaskState_TASK_STATE_WORKING {
		t.Errorf("returnImmediately gave a %s task, want SUBMITTED or WORKING", short(st))
	}
	if task.Id == "" || task.ContextId == "" || len(task.History) != 1 {
		t.Errorf("task = %v", task)
	}
	close(release)
	if !within(t, done, "the agent to finish") {
		return
	}
	got, _ := s.GetTask(anon(t), &a2a.GetTaskRequest{Id: task.Id})
	if state(got) != a2a.TaskState_TASK_STATE_COMPLETED || len(got.Artifacts) != 1 {
		t.Errorf("task afterwards = %v", got)
	}
}

// TestBlockingSendWithSmallBuffer: the blocking SendMessage follows the task
// through an internal subscriber with the same bounded buffer as a stream
// reader. When a fast agent overflows it, the subscriber is cut off and
// SendMessage treats the closed channel as "done" and returns the task
// while still WORKING, breaking "MUST wait until the task reaches a
// terminal or interrupted state". (With the default buffer of 256 the same
// happens to any agent that emits a few hundred events in a burst.)
func TestBlockingSendWithSmallBuffer(t *testing.T) {
	t.Parallel()
	const chunks = 300
	agent := server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		if err := em.Status(a2a.TaskState_TASK_STATE_WORKING, nil); err != nil {
			return err
		}
		for i := range chunks {
			if err := em.Chunk(a2a.TextArtifact("big", fmt.Sprint(i)), i > 0, i == chunks-1); err != nil {
				return err
			}
		}
		return em.Status(a2a.TaskState_TASK_STATE_COMPLETED, nil)
	})
	s := newServer(t, server.Options{Agent: agent, SubscriberBuffer: 2})
	bad := 0
	for range 5 {
		resp, err := s.SendMessage(anon(t), msgReq("burst"))
		if err != nil || state(resp.GetTask()) != a2a.TaskState_TASK_STATE_COMPLETED || len(resp.GetTask().GetArtifacts()[0].GetParts()) != chunks {
			bad++
			if bad == 1 {
				t.Errorf("SendMessage returned %s with %d parts (err %v); want COMPLETED with %d", short(state(resp.GetTask())),
					len(resp.GetTask().GetArtifacts()[0].GetParts()), err, chunks)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of 5 blocking sends returned early", bad)
	}
}

// ---------------------------------------------------------------------------
// Streams (B2)

func TestSendStreamingMessage(t *testing.T) {
	t.Parallel()
	s := newServer(t, server.Options{})
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"stream 3", []string{"task:SUBMITTED", "status:WORKING",
			"artifact:stream:chunk 0:append=false:last=false", "artifact:stream:chunk 1:append=true:last=false",
			"artifact:stream:chunk 2:append=true:last=true", "status:COMPLETED"}},
		{"hello", []string{"task:SUBMITTED", "status:WORKING", "artifact:echo:hello:append=false:last=true", "status:COMPLETED"}},
		{"fail", []string{"task:SUBMITTED", "status:FAILED"}},
		{"reject", []string{"task:SUBMITTED", "status:REJECTED"}},
		{"input-required", []string{"task:SUBMITTED", "status:INPUT_REQUIRED"}},
		{"message", []string{"message:pong"}},
	} {
		t.Run(tc.text, func(t *testing.T) {
			t.Parallel()
			ctx := shortCtx(t, "")
			evs, err := collect(s.SendStreamingMessage(ctx, msgReq(tc.text)))
			if err != nil || ctx.Err() != nil {
				t.Fatalf("stream ended with %v (ctx %v) after %v", err, ctx.Err(), describeAll(evs))
			}
			if got := describeAll(evs); !slices.Equal(got, tc.want) {
				t.Errorf("events = %v\nwant %v", got, tc.want)
			}
			if tc.text == "message" {
				if evs[0].Seq != 0 {
					t.Errorf("a direct reply has seq %d, want 0", evs[0].Seq)
				}
				return
			}
			if evs[0].Seq != 1 {
				t.Errorf("first event has seq %d, want 1", evs[0].Seq)
			}
			checkSeq(t, evs)
			task := evs[0].Response.GetTask()
			for _, ev := range evs[1:] {
				su, au := ev.Response.GetStatusUpdate(), ev.Response.GetArtifactUpdate()
				if (su != nil && (su.TaskId != task.Id || su.ContextId != task.ContextId)) || (au != nil && (au.TaskId != task.Id || au.ContextId != task.ContextId)) {
					t.Errorf("event %s carries other ids than task %s/%s", describe(ev), task.Id, task.ContextId)
				}
			}
			// The stream's end is the task's state.
			got, _ := s.GetTask(anon(t), &a2a.GetTaskRequest{Id: task.Id})
			if last := describe(evs[len(evs)-1]); last != "status:"+short(state(got)) {
				t.Errorf("last event %s, stored state %s", last, short(state(got)))
			}
		})
	}
}

// TestStreamStaysOpenThroughAuthRequired: the stream closes after
// INPUT_REQUIRED but not after AUTH_REQUIRED (DESIGN B2).
func TestStreamStaysOpenThroughAuthRequired(t *testing.T) {
	t.Parallel()
	authorized := make(chan struct{})
	agent := server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		if err := em.StatusText(a2a.TaskState_TASK_STATE_AUTH_REQUIRED, "sign in at https://idp.example/"); err != nil {
			return err
		}
		em.Detach()
		go func() {
			select {
			case <-authorized:
			case <-ctx.Done():
				return
			}
			if err := em.Status(a2a.TaskState_TASK_STATE_WORKING, nil); err != nil {
				t.Error(err)
			}
			if err := em.Artifact(a2a.TextArtifact("secret", "the protected data")); err != nil {
				t.Error(err)
			}
			if err := em.Status(a2a.TaskState_TASK_STATE_COMPLETED, nil); err != nil {
				t.Error(err)
			}
		}()
		return nil
	})
	s := newServer(t, server.Options{Agent: agent})
	ctx := shortCtx(t, "")
	var evs []a2a.StreamEvent
	for ev, err := range s.SendStreamingMessage(ctx, msgReq("get the data")) {
		if err != nil {
			t.Fatalf("stream error after %v: %v", describeAll(evs), err)
		}
		evs = append(evs, ev)
		if describe(ev) == "status:AUTH_REQUIRED" {
			close(authorized) // the user signs in out of band
		}
	}
	want := []string{"task:SUBMITTED", "status:AUTH_REQUIRED", "status:WORKING", "artifact:secret:the protected data:append=false:last=true", "status:COMPLETED"}
	if got := describeAll(evs); !slices.Equal(got, want) || ctx.Err() != nil {
		t.Errorf("events = %v (ctx %v)\nwant %v", got, ctx.Err(), want)
	}
	checkSeq(t, evs)
}

func TestSubscribeToTask(t *testing.T) {
	t.Parallel()
	const chunks = 10
	goAhead := make(chan struct{})
	agent := server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		if req.Task != nil {
			return agents.Conformance().Execute(ctx, req, em)
		}
		if a2a.FirstText(req.Message) != "steps" {
			return agents.Conformance().Execute(ctx, req, em)
		}
		if err := em.Status(a2a.TaskState_TASK_STATE_WORKING, nil); err != nil {
			return err
		}
		select {
		case <-goAhead:
		case <-ctx.Done():
			return nil
		}
		for i := range chunks {
			if err := em.Chunk(a2a.TextArtifact("s", fmt.Sprint(i)), i > 0, i == chunks-1); err != nil {
				return err
			}
		}
		return em.Status(a2a.TaskState_TASK_STATE_COMPLETED, nil)
	})
	s := newServer(t, server.Options{Agent: agent})
	task := taskOf(t)(s.SendMessage(anon(t), withConfig(msgReq("steps"), &a2a.SendMessageConfiguration{ReturnImmediately: true})))

	const full = 4
	type outcome struct {
		evs []a2a.StreamEvent
		err error
	}
	var subscribed sync.WaitGroup
	results := make([]outcome, full+1)
	var done sync.WaitGroup
	for i := range full + 1 {
		subscribed.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			for ev, err := range s.SubscribeToTask(shortCtx(t, ""), &a2a.SubscribeToTaskRequest{Id: task.Id}) {
				if err != nil {
					results[i].err = err
					break
				}
				results[i].evs = append(results[i].evs, ev)
				if len(results[i].evs) == 1 {
					subscribed.Done()
				}
				if i == full && len(results[i].evs) == 2 {
					break // this one leaves early
				}
			}
		}()
	}
	subscribed.Wait()
	close(goAhead)
	done.Wait()

	want := []string{"task:WORKING"}
	for i := range chunks {
		want = append(want, fmt.Sprintf("artifact:s:%d:append=%t:last=%t", i, i > 0, i == chunks-1))
	}
	want = append(want, "status:COMPLETED")
	for i := range full {
		r := results[i]
		if got := describeAll(r.evs); r.err != nil || !slices.Equal(got, want) {
			t.Errorf("subscriber %d: %v, %v\nwant %v", i, got, r.err, want)
			continue
		}
		checkSeq(t, r.evs)
		if !slices.Equal(seqs(r.evs), seqs(results[0].evs)) {
			t.Errorf("subscriber %d seqs %v, subscriber 0 %v", i, seqs(r.evs), seqs(results[0].evs))
		}
		for j := range r.evs {
			if !proto.Equal(r.evs[j].Response, results[0].evs[j].Response) {
				t.Errorf("subscriber %d event %d differs from subscriber 0's", i, j)
			}
		}
	}
	if q := results[full]; q.err != nil || len(q.evs) != 2 {
		t.Errorf("the early leaver got %v, %v", describeAll(q.evs), q.err)
	}
	got, _ := s.GetTask(anon(t), &a2a.GetTaskRequest{Id: task.Id})
	if state(got) != a2a.TaskState_TASK_STATE_COMPLETED || len(got.Artifacts) != 1 || len(got.Artifacts[0].Parts) != chunks {
		t.Errorf("task = %s with %v", short(state(got)), got.Artifacts)
	}

	t.Run("terminal task refused", func(t *testing.T) {
		for _, text := range []string{"hello", "fail", "reject"} {
			done := sendTask(t, s, anon(t), text)
			evs, err := collect(s.SubscribeToTask(anon(t), &a2a.SubscribeToTaskRequest{Id: done.Id}))
			if len(evs) != 0 || !errors.Is(err, a2a.ErrUnsupportedOperation) {
				t.Errorf("subscribe to a %s task: %v, %v; want UnsupportedOperationError", short(state(done)), describeAll(evs), err)
			}
		}
		evs, err := collect(s.SubscribeToTask(anon(t), &a2a.SubscribeToTaskRequest{Id: task.Id}))
		if len(evs) != 0 || !errors.Is(err, a2a.ErrUnsupportedOperation) {
			t.Errorf("subscribe to the completed task: %v, %v", describeAll(evs), err)
		}
	})
	t.Run("unknown task", func(t *testing.T) {
		_, err := collect(s.SubscribeToTask(anon(t), &a2a.SubscribeToTaskRequest{Id: "no-such-task"}))
		wantErr(t, "SubscribeToTask", err, a2a.ErrTaskNotFound)
		_, err = collect(s.SubscribeToTask(anon(t), &a2a.SubscribeToTaskRequest{}))
		wantErr(t, "SubscribeToTask without id", err, a2a.ErrInvalidParams)
	})
	t.Run("open through input-required", func(t *testing.T) {
		// A subscription closes only at a terminal state: it sees the
		// follow-up's execution through to COMPLETED.
		parked := sendTask(t, s, anon(t), "input-required")
		ctx := shortCtx(t, "")
		var evs []a2a.StreamEvent
		var err error
		for ev, e := range s.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{Id: parked.Id}) {
			if e != nil {
				err = e
				break
			}
			evs = append(evs, ev)
			if len(evs) == 1 {
				if _, e := followUp(t, s, "", followReq(parked.Id, "answer")); e != nil {
					t.Fatal(e)
				}
			}
		}
		want := []string{"task:INPUT_REQUIRED", "status:WORKING", "artifact:echo:answer:append=false:last=true", "status:COMPLETED"}
		if got := describeAll(evs); err != nil || ctx.Err() != nil || !slices.Equal(got, want) {
			t.Errorf("subscription = %v, %v (ctx %v)\nwant %v", got, err, ctx.Err(), want)
		}
	})
}

// TestSlowSubscriber: a reader that stops reading is cut off with an error
// once its buffer is full; a reader that keeps up gets every event; the
// agent is never held back by the slow one.
func TestSlowSubscriber(t *testing.T) {
	t.Parallel()
	const events = 40
	goAhead, agentDone := make(chan struct{}), make(chan struct{})
	ack := make(chan struct{})
	agent := server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		defer close(agentDone)
		if err := em.Status(a2a.TaskState_TASK_STATE_WORKING, nil); err != nil {
			return err
		}
		select {
		case <-goAhead:
		case <-ctx.Done():
			return nil
		}
		for i := range events {
			if err := em.Chunk(a2a.TextArtifact("s", fmt.Sprint(i)), i > 0, false); err != nil {
				return err
			}
			// Pace on the fast reader only, so it never falls behind.
			select {
			case <-ack:
			case <-ctx.Done():
				return nil
			}
		}
		return em.Status(a2a.TaskState_TASK_STATE_COMPLETED, nil)
	})
	s := newServer(t, server.Options{Agent: agent, SubscriberBuffer: 4})
	task := taskOf(t)(s.SendMessage(anon(t), withConfig(msgReq("go"), &a2a.SendMessageConfiguration{ReturnImmediately: true})))

	fastReady, slowReady, unblockSlow := make(chan struct{}), make(chan struct{}), make(chan struct{})
	var fastEvs, slowEvs []a2a.StreamEvent
	var fastErr, slowErr error
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // fast
		defer wg.Done()
		for ev, err := range s.SubscribeToTask(shortCtx(t, ""), &a2a.SubscribeToTaskRequest{Id: task.Id}) {
			if err != nil {
				fastErr = err
				return
			}
			fastEvs = append(fastEvs, ev)
			if len(fastEvs) == 1 {
				close(fastReady)
				continue
			}
			if ev.Response.GetArtifactUpdate() != nil {
				ack <- struct{}{}
			}
		}
	}()
	go func() { // slow: stops reading after the snapshot
		defer wg.Done()
		for ev, err := range s.SubscribeToTask(shortCtx(t, ""), &a2a.SubscribeToTaskRequest{Id: task.Id}) {
			if err != nil {
				slowErr = err
				return
			}
			slowEvs = append(slowEvs, ev)
			if len(slowEvs) == 1 {
				close(slowReady)
				<-unblockSlow
			}
		}
	}()
	<-fastReady
	<-slowReady
	close(goAhead)
	finished := within(t, agentDone, "the agent to finish while a reader is stuck")
	close(unblockSlow)
	wg.Wait()
	if !finished {
		return
	}

	if fastErr != nil || len(fastEvs) != events+2 || describe(fastEvs[len(fastEvs)-1]) != "status:COMPLETED" {
		t.Errorf("fast reader: %d events ending %v, err %v; want all %d", len(fastEvs), describe(fastEvs[len(fastEvs)-1]), fastErr, events+2)
	}
	checkSeq(t, fastEvs)
	if slowErr == nil {
		t.Errorf("slow reader got %d events and no error; want it cut off", len(slowEvs))
	}
	if len(slowEvs) > 1+4 {
		t.Errorf("slow reader got %d events after its buffer of 4 was full", len(slowEvs)-1)
	}
	checkSeq(t, slowEvs)
	if got, _ := s.GetTask(anon(t), &a2a.GetTaskRequest{Id: task.Id}); state(got) != a2a.TaskState_TASK_STATE_COMPLETED {
		t.Errorf("task is %s", short(state(got)))
	}
	// A cut-off reader can come back: the task is terminal now, so it reads it.
	if got, err := s.GetTask(anon(t), &a2a.GetTaskRequest{Id: task.Id}); err != nil || len(got.Artifacts[0].Parts) != events {
		t.Errorf("GetTask after the cut: %v", err)
	}
}

// TestSeqContinuesAcrossExecutions: StreamEvent.Seq is documented as "1 for
// the first event a task ever produced, then increasing by one". The core
// counts in its in-memory run, which it drops when nothing refers to the
// task, so the events of a follow-up start again at 1 and reuse numbers the
// task already gave out.
func TestSeqContinuesAcrossExecutions(t *testing.T) {
	t.Parallel()
	s := newServer(t, server.Options{})
	first, err := collect(s.SendStreamingMessage(shortCtx(t, ""), msgReq("input-required")))
	if err != nil || len(first) != 2 {
		t.Fatalf("first stream: %v, %v", describeAll(first), err)
	}
	last := first[len(first)-1].Seq
	id := first[0].Response.GetTask().GetId()
	settle(t, s, "", id)
	var evs []a2a.StreamEvent
	for range 10000 {
		evs, err = collect(s.SendStreamingMessage(shortCtx(t, ""), followReq(id, "answer")))
		if !stillWorking(err) {
			break
		}
	}
	if err != nil || len(evs) != 4 {
		t.Fatalf("follow-up stream: %v, %v", describeAll(evs), err)
	}
	if snap := evs[0].Seq; snap != 0 && snap != last {
		t.Errorf("follow-up snapshot seq %d; want %d (or 0, unknown)", snap, last)
	}
	for i, ev := range evs[1:] {
		if want := last + 1 + uint64(i); ev.Seq != want {
			t.Errorf("follow-up event %s has seq %d, want %d (first stream: %v, follow-up: %v)", describe(ev), ev.Seq, want, seqs(first), seqs(evs))
			break
		}
	}
}

// ---------------------------------------------------------------------------
// B11: artifact chunks

func TestArtifactChunks(t *testing.T) {
	t.Parallel()
	agent := server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		if a2a.FirstText(req.Message) != "chunks" {
			return agents.Conformance().Execute(ctx, req, em)
		}
		steps := []struct {
			a       *a2a.Artifact
			app, lc bool
		}{
			{&a2a.Artifact{ArtifactId: "a", Name: "first", Parts: []*a2a.Part{a2a.TextPart("1")}}, false, false},
			{a2a.TextArtifact("a", "2"), true, false},
			{&a2a.Artifact{ArtifactId: "a", Name: "renamed", Parts: []*a2a.Part{a2a.TextPart("3"), a2a.TextPart("4")}}, true, true},
			{a2a.TextArtifact("b", "started by an append"), true, false},
			{a2a.TextArtifact("c", "old"), false, false},
			{a2a.TextArtifact("c", "new"), false, true},
		}
		for _, st := range steps {
			if err := em.Chunk(st.a, st.app, st.lc); err != nil {
				return err
			}
		}
		if err := em.Chunk(&a2a.Artifact{ArtifactId: "bad"}, false, false); err == nil {
			t.Error("an artifact without parts was accepted")
		}
		return em.Status(a2a.TaskState_TASK_STATE_COMPLETED, nil)
	})
	s := newServer(t, server.Options{Agent: agent})
	evs, err := collect(s.SendStreamingMessage(shortCtx(t, ""), msgReq("chunks")))
	if err != nil {
		t.Fatal(err)
	}
	// Each event carries only its own chunk.
	want := []string{"task:SUBMITTED", "artifact:a:1:append=false:last=false", "artifact:a:2:append=true:last=false",
		"artifact:a:3\n4:append=true:last=true", "artifact:b:started by an append:append=true:last=false",
		"artifact:c:old:append=false:last=false", "artifact:c:new:append=false:last=true", "status:COMPLETED"}
	if got := describeAll(evs); !slices.Equal(got, want) {
		t.Errorf("events = %v\nwant %v", got, want)
	}
	task, _ := s.GetTask(anon(t), &a2a.GetTaskRequest{Id: evs[0].Response.GetTask().GetId()})
	got := map[string][]string{}
	var order []string
	for _, a := range task.GetArtifacts() {
		order = append(order, a.ArtifactId)
		for _, p := range a.Parts {
			got[a.ArtifactId] = append(got[a.ArtifactId], p.GetText())
		}
	}
	if !slices.Equal(order, []string{"a", "b", "c"}) || !slices.Equal(got["a"], []string{"1", "2", "3", "4"}) ||
		!slices.Equal(got["b"], []string{"started by an append"}) || !slices.Equal(got["c"], []string{"new"}) {
		t.Errorf("stored artifacts = %v (order %v)", got, order)
	}
	if a := task.GetArtifacts()[0]; a.Name != "renamed" {
		t.Errorf("artifact a name = %q, want the latest chunk's", a.Name)
	}

	// The conformance agent's append-unknown keeps its chunk.
	done := sendTask(t, s, anon(t), "append-unknown")
	if len(done.Artifacts) != 1 || done.Artifacts[0].ArtifactId != "never-sent" || a2a.JoinText(done.Artifacts[0].Parts) != "appended" {
		t.Errorf("append-unknown artifacts = %v", done.Artifacts)
	}
}

// ---------------------------------------------------------------------------
// Restart, retention, shutdown

// TestRestartFailsLostTasks: server.New fails tasks left SUBMITTED or
// WORKING in a durable store (their execution died with the process) and
// leaves interrupted and terminal tasks alone.
func TestRestartFailsLostTasks(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "tasks.db")
	ts := a2a.Timestamp(time.Now().Add(-time.Minute))
	scope := taskstore.Scope{Owner: "alice"}
	mk := func(id string, st a2a.TaskState) *a2a.Task {
		m := a2a.UserMessage("work " + id)
		m.TaskId, m.ContextId = id, "ctx-"+id
		return &a2a.Task{Id: id, ContextId: "ctx-" + id, History: []*a2a.Message{m},
			Status: &a2a.TaskStatus{State: st, Timestamp: ts}}
	}
	before := map[string]*a2a.Task{
		"working":   mk("working", a2a.TaskState_TASK_STATE_WORKING),
		"submitted": mk("submitted", a2a.TaskState_TASK_STATE_SUBMITTED),
		"input":     mk("input", a2a.TaskState_TASK_STATE_INPUT_REQUIRED),
		"auth":      mk("auth", a2a.TaskState_TASK_STATE_AUTH_REQUIRED),
		"completed": mk("completed", a2a.TaskState_TASK_STATE_COMPLETED),
	}
	st, err := sqlitestore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range before {
		if err := st.CreateTask(context.Background(), scope, tk, taskstore.Event{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	st, err = sqlitestore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	s := newServer(t, server.Options{Store: st, RequireAuth: true})
	for id, old := range before {
		got, err := s.GetTask(as(t, "alice"), &a2a.GetTaskRequest{Id: id})
		if err != nil {
			t.Errorf("%s: %v", id, err)
			continue
		}
		switch id {
		case "working", "submitted":
			msg := got.GetStatus().GetMessage()
			if state(got) != a2a.TaskState_TASK_STATE_FAILED || a2a.FirstText(msg) == "" || msg.GetTaskId() != id {
				t.Errorf("%s after restart: %s, status message %v; want FAILED saying why", id, short(state(got)), msg)
			}
			if !got.Status.Timestamp.AsTime().After(ts.AsTime()) {
				t.Errorf("%s: status timestamp not updated", id)
			}
		default:
			if !proto.Equal(got, old) {
				t.Errorf("%s changed in the restart: %v", id, got)
			}
		}
	}
	// The interrupted one can still be continued.
	done := taskOf(t)(followUp(t, s, "alice", followReq("input", "answer")))
	if state(done) != a2a.TaskState_TASK_STATE_COMPLETED {
		t.Errorf("follow-up after restart ended %s", short(state(done)))
	}
}

// TestRestartWithRunningAgent: a first server is still running an agent
// when a second server opens the same database, as after a crash; the
// second fails the task at start-up.
func TestRestartWithRunningAgent(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "tasks.db")
	started := make(chan struct{})
	blocking := server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		if err := em.Status(a2a.TaskState_TASK_STATE_WORKING, nil); err != nil {
			return err
		}
		close(started)
		<-ctx.Done()
		return nil
	})
	st1, err := sqlitestore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st1.Close() })
	s1 := newServer(t, server.Options{Store: st1, Agent: blocking})
	task := taskOf(t)(s1.SendMessage(anon(t), withConfig(msgReq("long"), &a2a.SendMessageConfiguration{ReturnImmediately: true})))
	<-started

	st2, err := sqlitestore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st2.Close() })
	s2 := newServer(t, server.Options{Store: st2})
	got, err := s2.GetTask(anon(t), &a2a.GetTaskRequest{Id: task.Id})
	if err != nil || state(got) != a2a.TaskState_TASK_STATE_FAILED || got.Status.GetMessage() == nil {
		t.Errorf("task on the second server = %v, %v; want FAILED with a status message", got, err)
	}
}

// TestIdempotencySurvivesRestart: a resend after a restart on a durable
// store returns the original task without running the agent again.
func TestIdempotencySurvivesRestart(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "tasks.db")
	req := msgReq("hello")
	var calls atomic.Int32
	var first *a2a.Task
	for round := range 2 {
		st, err := sqlitestore.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		s, err := server.New(&server.Options{Card: testCard(true, true), Agent: counting(agents.Conformance(), &calls), Store: st, Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		task := taskOf(t)(s.SendMessage(anon(t), proto.Clone(req).(*a2a.SendMessageRequest)))
		if round == 0 {
			first = task
		} else if !proto.Equal(task, first) {
			t.Errorf("resend after restart = %v, want %v", task, first)
		}
		if err := s.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		st.Close()
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("agent ran %d times, want once", n)
	}
}

// TestRetention: terminal tasks older than Options.Retention disappear;
// others stay. The sweep runs every max(Retention/10, 1s) (up to a minute)
// with no way to trigger it, so this test needs about a second and polls.
func TestRetention(t *testing.T) {
	t.Parallel()
	var now atomic.Int64
	now.Store(time.Date(2030, 6, 1, 12, 0, 0, 0, time.UTC).UnixNano())
	clock := func() time.Time { return time.Unix(0, now.Load()).UTC() }
	s := newServer(t, server.Options{Retention: time.Second, Now: clock})
	old := sendTask(t, s, anon(t), "hello")
	oldFailed := sendTask(t, s, anon(t), "fail")
	parked := sendTask(t, s, anon(t), "input-required")
	now.Add(int64(time.Hour))
	fresh := sendTask(t, s, anon(t), "hello")

	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err1 := s.GetTask(anon(t), &a2a.GetTaskRequest{Id: old.Id})
		_, err2 := s.GetTask(anon(t), &a2a.GetTaskRequest{Id: oldFailed.Id})
		if errors.Is(err1, a2a.ErrTaskNotFound) && errors.Is(err2, a2a.ErrTaskNotFound) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("old terminal tasks still there after 5 s: %v, %v", err1, err2)
		}
		time.Sleep(20 * time.Millisecond) // polling: the sweep has no hook
	}
	for _, tk := range []*a2a.Task{parked, fresh} {
		if _, err := s.GetTask(anon(t), &a2a.GetTaskRequest{Id: tk.Id}); err != nil {
			t.Errorf("task %s (%s) removed: %v", tk.Id, short(state(tk)), err)
		}
	}
	res, _ := s.ListTasks(anon(t), &a2a.ListTasksRequest{})
	if res.GetTotalSize() != 2 {
		t.Errorf("%d tasks listed, want 2", res.GetTotalSize())
	}
}

func TestCloseFailsRunningTasks(t *testing.T) {
	t.Parallel()
	t.Run("running", func(t *testing.T) {
		t.Parallel()
		started := make(chan struct{})
		agent := server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
			if err := em.Status(a2a.TaskState_TASK_STATE_WORKING, nil); err != nil {
				return err
			}
			close(started)
			<-ctx.Done()
			if !errors.Is(context.Cause(ctx), server.ErrShutdown) {
				t.Errorf("cause = %v, want ErrShutdown", context.Cause(ctx))
			}
			return nil
		})
		store := memstore.New()
		s := newServer(t, server.Options{Agent: agent, Store: store})
		task := taskOf(t)(s.SendMessage(anon(t), withConfig(msgReq("x"), &a2a.SendMessageConfiguration{ReturnImmediately: true})))
		<-started
		if err := s.Close(anon(t)); err != nil {
			t.Fatal(err)
		}
		got, err := store.GetTask(context.Background(), taskstore.Scope{}, task.Id)
		if err != nil || state(got) != a2a.TaskState_TASK_STATE_FAILED || !strings.Contains(a2a.FirstText(got.Status.GetMessage()), "shut down") {
			t.Errorf("after Close: %v, %v; want FAILED saying the server shut down", got, err)
		}
	})
	// A detached agent that ignores its canceled context leaves the task
	// WORKING after Close, although Close says unfinished tasks end FAILED
	// and the design says no task stays WORKING because an agent forgot it.
	t.Run("detached", func(t *testing.T) {
		t.Parallel()
		sawShutdown := make(chan struct{})
		agent := server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
			if err := em.Status(a2a.TaskState_TASK_STATE_WORKING, nil); err != nil {
				return err
			}
			em.Detach()
			go func() {
				<-ctx.Done()
				close(sawShutdown)
			}()
			return nil
		})
		store := memstore.New()
		s := newServer(t, server.Options{Agent: agent, Store: store})
		task := taskOf(t)(s.SendMessage(anon(t), withConfig(msgReq("x"), &a2a.SendMessageConfiguration{ReturnImmediately: true})))
		if err := s.Close(anon(t)); err != nil {
			t.Fatal(err)
		}
		within(t, sawShutdown, "the detached agent's context to end")
		got, err := store.GetTask(context.Background(), taskstore.Scope{}, task.Id)
		if err != nil || state(got) != a2a.TaskState_TASK_STATE_FAILED {
			t.Errorf("detached task after Close is %s, %v; want FAILED", short(state(got)), err)
		}
	})
}
