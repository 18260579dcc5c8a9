package server_test

// The agent API: what the core does when an agent returns, fails, panics,
// detaches or is canceled; direct replies; artifact chunks
// (docs/decisions.md#b11).

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"parley.dev/parley/internal/testkit"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/agents"
	"parley.dev/parley/server"
)

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
			evs, err := testkit.Collect(s.SendStreamingMessage(shortCtx(t, ""), msgReq(name)))
			if err != nil || len(evs) < 2 || evs[0].Response.GetTask() == nil || describe(evs[len(evs)-1]) != "status:FAILED" {
				t.Errorf("%s: stream = %v, %v; want a task ending FAILED", name, describeAll(evs), err)
			}
			checkSeq(t, evs)
		}
	})
}

// TestAgentErrorAfterInterrupt: the Agent contract says a returned error
// ends the task FAILED, also when the agent parked the task in
// INPUT_REQUIRED before returning the error.
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

// TestDetachedWorkAfterExecuteReturns: once Execute returned after Detach,
// the background half still belongs to the task: new subscribers see its
// events, CancelTask cancels its context, and it can no longer emit once
// the task was canceled.
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
	// The blocking send is still waiting; find its task by listing. The
	// first event is queued (pipe.go): the task is stored once the agent
	// pauses, at once but not before Status returns.
	var res *a2a.ListTasksResponse
	var err error
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		res, err = s.ListTasks(anon(t), &a2a.ListTasksRequest{})
		if err != nil || len(res.Tasks) == 1 || time.Now().After(deadline) {
			break
		}
	}
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
// it": an agent that edits Request.Message leaves the task's stored history
// as it was.
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
	evs, err := testkit.Collect(s.SendStreamingMessage(shortCtx(t, ""), msgReq("chunks")))
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
