package agents_test

// Tests of the conformance agent's "stream N every MS" through the server
// core.

import (
	"context"
	"fmt"
	"testing"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/agents"
	"parley.dev/parley/internal/testkit"
	"parley.dev/parley/server"
)

// TestStreamEvery: "stream N every MS" sends the chunks of "stream N",
// at least MS milliseconds apart; malformed forms are echoed.
func TestStreamEvery(t *testing.T) {
	s := newCore(t)
	start := time.Now()
	evs, err := testkit.Collect(s.SendStreamingMessage(call(t), &a2a.SendMessageRequest{Message: a2a.UserMessage("stream 4 every 30")}))
	if err != nil {
		t.Fatalf("SendStreamingMessage: %v", err)
	}
	if d := time.Since(start); d < 3*30*time.Millisecond {
		t.Errorf("4 chunks 30 ms apart took %v, want at least 90 ms", d)
	}
	want := []string{"status:TASK_STATE_WORKING", "artifact:chunk 0", "artifact:chunk 1", "artifact:chunk 2", "artifact:chunk 3", "status:TASK_STATE_COMPLETED"}
	got := testkit.Kinds(evs)
	if len(got) != len(want)+1 || fmt.Sprint(got[1:]) != fmt.Sprint(want) {
		t.Fatalf("events %q, want the task, then %q", got, want)
	}
	for _, text := range []string{"stream 3 every", "stream 3 each 5", "stream 3 every -1", "stream 3 every x", "stream -1 every 5"} {
		resp, err := s.SendMessage(call(t), &a2a.SendMessageRequest{Message: a2a.UserMessage(text)})
		if err != nil {
			t.Fatalf("SendMessage(%q): %v", text, err)
		}
		if arts := resp.GetTask().GetArtifacts(); len(arts) != 1 || arts[0].GetArtifactId() != "echo" || a2a.ArtifactText(arts[0]) != text {
			t.Errorf("SendMessage(%q) = %v, want the echo", text, resp)
		}
	}
}

// TestStreamEveryCancel: canceling a task of "stream N every MS" ends the
// agent's run at once, not after the remaining pauses.
func TestStreamEveryCancel(t *testing.T) {
	returned := make(chan struct{}, 1)
	inner := agents.Conformance()
	agent := server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		defer func() { returned <- struct{}{} }()
		return inner.Execute(ctx, req, em)
	})
	s, _ := testkit.NewCore(t, testkit.Interfaces("http://127.0.0.1:9"), &testkit.Options{Agent: agent, Quiet: true})
	resp, err := s.SendMessage(call(t), &a2a.SendMessageRequest{Message: a2a.UserMessage("stream 1000 every 60000"),
		Configuration: &a2a.SendMessageConfiguration{ReturnImmediately: true}})
	if err != nil {
		t.Fatalf("SendMessage: %v", err)
	}
	id := resp.GetTask().GetId()
	for deadline := time.Now().Add(guard); ; {
		task, err := s.GetTask(call(t), &a2a.GetTaskRequest{Id: id})
		if err != nil {
			t.Fatalf("GetTask: %v", err)
		}
		if len(task.GetArtifacts()) > 0 {
			break // the first chunk is out: the agent is in its pause
		}
		if time.Now().After(deadline) {
			t.Fatalf("no chunk after %v", guard)
		}
		time.Sleep(5 * time.Millisecond)
	}
	task, err := s.CancelTask(call(t), &a2a.CancelTaskRequest{Id: id})
	if err != nil || task.GetStatus().GetState() != a2a.TaskState_TASK_STATE_CANCELED {
		t.Fatalf("CancelTask = %v, %v; want CANCELED", task, err)
	}
	select {
	case <-returned:
	case <-time.After(guard / 2):
		t.Fatalf("the agent still runs %v after the cancel (its pause is 60 s)", guard/2)
	}
}
