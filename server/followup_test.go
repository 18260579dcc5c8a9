package server_test

// Follow-up messages to an existing task (spec §3.4; decisions B6, B9, B10 in
// docs/decisions.md).

import (
	"context"
	"slices"
	"sync"
	"testing"

	"parley.dev/parley/internal/testkit"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/agents"
	"parley.dev/parley/server"
)

// followUpFixture is a server whose agent records the Request of every
// follow-up it gets in seen, by the follow-up's text.
type followUpFixture struct {
	s    *server.Server
	seen *sync.Map // follow-up text -> *server.Request
}

func TestFollowUps(t *testing.T) {
	t.Parallel()
	f := &followUpFixture{seen: &sync.Map{}}
	agent := server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		if req.Task != nil {
			f.seen.Store(a2a.FirstText(req.Message), req)
		}
		return agents.Conformance().Execute(ctx, req, em)
	})
	f.s = newServer(t, server.Options{Agent: agent})

	t.Run("unknown task", f.unknownTask)
	t.Run("context inferred", f.contextInferred)
	t.Run("matching context accepted", f.matchingContext)
	t.Run("mismatched context", f.mismatchedContext)
	t.Run("terminal task", f.terminalTask)
	t.Run("input required then completed", f.inputRequiredThenCompleted)
	t.Run("streaming follow-up", f.streamingFollowUp)
}

func (f *followUpFixture) unknownTask(t *testing.T) {
	t.Parallel()
	s := f.s
	_, err := s.SendMessage(anon(t), followReq("no-such-task", "more"))
	wantErr(t, "SendMessage", err, a2a.ErrTaskNotFound)
	_, err = testkit.Collect(s.SendStreamingMessage(anon(t), followReq("no-such-task", "more")))
	wantErr(t, "SendStreamingMessage", err, a2a.ErrTaskNotFound)
}

func (f *followUpFixture) contextInferred(t *testing.T) {
	t.Parallel()
	s, seen := f.s, f.seen
	parked := sendTask(t, s, anon(t), "input-required")
	text := "inferred " + a2a.NewID()
	fr := followReq(parked.Id, text)
	done := taskOf(t)(followUp(t, s, "", fr))
	if state(done) != a2a.TaskState_TASK_STATE_COMPLETED {
		t.Errorf("follow-up ended %s", short(state(done)))
	}
	v, ok := seen.Load(text)
	if !ok {
		t.Fatal("the agent did not see the follow-up")
	}
	req := v.(*server.Request)
	if req.ContextID != parked.ContextId || req.Message.ContextId != parked.ContextId || req.TaskID != parked.Id || req.Message.TaskId != parked.Id {
		t.Errorf("agent got ContextID %q, message contextId %q, TaskID %q; want %q / %q", req.ContextID, req.Message.ContextId, req.TaskID, parked.ContextId, parked.Id)
	}
	if req.Task == nil || req.Task.Id != parked.Id || state(req.Task) != a2a.TaskState_TASK_STATE_INPUT_REQUIRED {
		t.Errorf("agent got Task %v, want the parked task", req.Task)
	}
	got, _ := s.GetTask(anon(t), &a2a.GetTaskRequest{Id: parked.Id})
	var stored *a2a.Message
	for _, m := range got.History {
		if m.MessageId == fr.Message.MessageId {
			stored = m
		}
	}
	if stored == nil || stored.ContextId != parked.ContextId || stored.TaskId != parked.Id {
		t.Errorf("stored follow-up message = %v; want contextId %q stamped", stored, parked.ContextId)
	}
}

func (f *followUpFixture) matchingContext(t *testing.T) {
	t.Parallel()
	s := f.s
	parked := sendTask(t, s, anon(t), "input-required")
	fr := followReq(parked.Id, "matching")
	fr.Message.ContextId = parked.ContextId
	if done := taskOf(t)(followUp(t, s, "", fr)); state(done) != a2a.TaskState_TASK_STATE_COMPLETED {
		t.Errorf("ended %s", short(state(done)))
	}
}

func (f *followUpFixture) mismatchedContext(t *testing.T) {
	t.Parallel()
	s := f.s
	for _, text := range []string{"input-required", "hello", "fail"} { // interrupted, then terminal ones (B10 before B6)
		task := sendTask(t, s, anon(t), text)
		fr := followReq(task.Id, "more")
		fr.Message.ContextId = "some-other-context"
		_, err := followUp(t, s, "", fr)
		wantErr(t, "SendMessage on a "+short(state(task))+" task", err, a2a.ErrInvalidParams)
		_, err = testkit.Collect(s.SendStreamingMessage(anon(t), fr))
		wantErr(t, "SendStreamingMessage on a "+short(state(task))+" task", err, a2a.ErrInvalidParams)
		if got, _ := s.GetTask(anon(t), &a2a.GetTaskRequest{Id: task.Id}); len(got.History) != len(task.History) {
			t.Errorf("refused message appended: %q", historyTexts(got))
		}
	}
}

func (f *followUpFixture) terminalTask(t *testing.T) {
	t.Parallel()
	s, seen := f.s, f.seen
	for _, text := range []string{"hello", "fail", "reject"} {
		task := sendTask(t, s, anon(t), text)
		// The agent may not run: count this task's follow-ups only.
		fr := followReq(task.Id, "terminal "+a2a.NewID())
		_, err := s.SendMessage(anon(t), fr)
		wantErr(t, "SendMessage to a "+short(state(task))+" task", err, a2a.ErrUnsupportedOperation)
		_, err = testkit.Collect(s.SendStreamingMessage(anon(t), fr))
		wantErr(t, "SendStreamingMessage to a "+short(state(task))+" task", err, a2a.ErrUnsupportedOperation)
		if _, ran := seen.Load(a2a.FirstText(fr.Message)); ran {
			t.Errorf("the agent ran for a message to a %s task", short(state(task)))
		}
		if got, _ := s.GetTask(anon(t), &a2a.GetTaskRequest{Id: task.Id}); !proto.Equal(got, task) {
			t.Errorf("terminal task changed: %v", got)
		}
	}
	// A canceled one too.
	parked := sendTask(t, s, anon(t), "input-required")
	if _, err := s.CancelTask(anon(t), &a2a.CancelTaskRequest{Id: parked.Id}); err != nil {
		t.Fatal(err)
	}
	_, err := s.SendMessage(anon(t), followReq(parked.Id, "after cancel"))
	wantErr(t, "SendMessage to a CANCELED task", err, a2a.ErrUnsupportedOperation)
}

func (f *followUpFixture) inputRequiredThenCompleted(t *testing.T) {
	t.Parallel()
	s := f.s
	parked := sendTask(t, s, anon(t), "input-required")
	if state(parked) != a2a.TaskState_TASK_STATE_INPUT_REQUIRED || parked.Status.Message == nil {
		t.Fatalf("parked = %v", parked)
	}
	done := taskOf(t)(followUp(t, s, "", followReq(parked.Id, "the answer")))
	if state(done) != a2a.TaskState_TASK_STATE_COMPLETED || done.Id != parked.Id || done.ContextId != parked.ContextId {
		t.Errorf("follow-up = %v", done)
	}
	if len(done.Artifacts) != 1 || a2a.JoinText(done.Artifacts[0].Parts) != "the answer" {
		t.Errorf("artifacts = %v, want an echo of the follow-up", done.Artifacts)
	}
	want := []string{"input-required", a2a.FirstText(parked.Status.Message), "the answer"}
	if got := historyTexts(done); !slices.Equal(got, want) {
		t.Errorf("history = %q, want %q", got, want)
	}
}

func (f *followUpFixture) streamingFollowUp(t *testing.T) {
	t.Parallel()
	s := f.s
	parked := sendTask(t, s, anon(t), "input-required")
	var evs []a2a.StreamEvent
	var err error
	for range 10000 {
		evs, err = testkit.Collect(s.SendStreamingMessage(anon(t), followReq(parked.Id, "streamed answer")))
		if !stillWorking(err) {
			break
		}
	}
	want := []string{"task:INPUT_REQUIRED", "status:WORKING", "artifact:echo:streamed answer:append=false:last=true", "status:COMPLETED"}
	if got := describeAll(evs); err != nil || !slices.Equal(got, want) {
		t.Errorf("follow-up stream = %v, %v; want %v", got, err, want)
	}
	checkSeq(t, evs)
}

// TestFollowUpRightAfterInterrupt: a blocking SendMessage returns as soon as
// the task is INPUT_REQUIRED (as it must), and the client answers at once.
// The answer is accepted even when the agent's Execute has not returned
// yet, since the task asked for input. The window is small, hence 500
// tries.
func TestFollowUpRightAfterInterrupt(t *testing.T) {
	t.Parallel()
	s := newServer(t, server.Options{})
	refused := 0
	for range 500 {
		resp, err := s.SendMessage(anon(t), msgReq("input-required"))
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.SendMessage(anon(t), followReq(resp.GetTask().GetId(), "answer"))
		if stillWorking(err) {
			refused++
		} else if err != nil {
			t.Fatal(err)
		}
	}
	if refused > 0 {
		t.Errorf("%d of 500 immediate answers to INPUT_REQUIRED were refused as \"still working on an earlier message\"", refused)
	}
}

// TestRequestTaskHistory: Request.Task is the task as it was before the
// follow-up arrived, so its history does not hold the follow-up; that comes
// as Request.Message, with the task's contextId.
func TestRequestTaskHistory(t *testing.T) {
	t.Parallel()
	got := make(chan *server.Request, 1)
	agent := server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		if req.Task != nil {
			got <- req
			return em.Status(a2a.TaskState_TASK_STATE_COMPLETED, nil)
		}
		return em.Status(a2a.TaskState_TASK_STATE_INPUT_REQUIRED, nil)
	})
	s := newServer(t, server.Options{Agent: agent})
	parked := sendTask(t, s, anon(t), "start")
	f := followReq(parked.Id, "answer")
	if _, err := followUp(t, s, "", f); err != nil {
		t.Fatal(err)
	}
	req := <-got
	// Request.Task is the task as it was before the message arrived.
	for _, m := range req.Task.GetHistory() {
		if m.GetMessageId() == f.Message.MessageId {
			t.Errorf("Request.Task history = %q; documented to be the task before the new message", historyTexts(req.Task))
		}
	}
	if req.Message.GetMessageId() != f.Message.MessageId || req.Message.GetContextId() != parked.ContextId {
		t.Errorf("Request.Message = %v; want the follow-up with the task's contextId", req.Message)
	}
}
