package server_test

// Answers share what does not change (a2a.CallInfo.Decoded): a call that
// came through a binding gets a finished task's status, artifacts and
// history shared with the store's task or the run's, so trimming the
// history or showing the generation for one caller must reach no other.

import (
	"context"
	"testing"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
	"parley.dev/parley/internal/testkit"
)

func TestSharedAnswersStayApart(t *testing.T) {
	onEachStoreAndBinding(t, func(t *testing.T, ctx context.Context, s *testkit.Server, f client.TransportFactory, c11 *client.Client) {
		c10 := versionClient(t, s, f, a2a.ProtocolVersion)
		none, one := int32(0), int32(1)

		// "stream" ends INPUT_REQUIRED; the follow-up completes the task,
		// answered (1.1, no history) with the run's finished task.
		res, err := c11.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("stream")})
		if err != nil {
			t.Fatal(err)
		}
		id := res.GetTask().GetId()
		follow := a2a.UserMessage("go on")
		follow.TaskId = id
		res, err = c11.SendMessage(ctx, &a2a.SendMessageRequest{Message: follow,
			Configuration: &a2a.SendMessageConfiguration{HistoryLength: &none}})
		if err != nil {
			t.Fatal(err)
		}
		if tk := res.GetTask(); tk.GetStatus().GetState() != a2a.TaskState_TASK_STATE_COMPLETED || len(tk.GetHistory()) != 0 || tk.GetGeneration() == 0 {
			t.Fatalf("1.1 follow-up with historyLength 0: %v; want COMPLETED, no history, a generation", tk)
		}

		full, err := c10.GetTask(ctx, &a2a.GetTaskRequest{Id: id})
		if err != nil {
			t.Fatal(err)
		}
		if len(full.GetHistory()) < 2 || full.GetGeneration() != 0 || len(full.GetArtifacts()) != 2 {
			t.Fatalf("1.0 GetTask after the follow-up: %v; want the whole history, two artifacts, no generation", full)
		}
		for range 3 { // the first reads fill the stores' caches; the last share what they keep
			tk, err := c11.GetTask(ctx, &a2a.GetTaskRequest{Id: id, HistoryLength: &one})
			if err != nil || len(tk.GetHistory()) != 1 || tk.GetGeneration() == 0 {
				t.Fatalf("1.1 GetTask with historyLength 1: %v, %v; want one message and a generation", tk, err)
			}
		}
		for range 2 {
			again, err := c10.GetTask(ctx, &a2a.GetTaskRequest{Id: id})
			if err != nil || !proto.Equal(again, full) {
				t.Fatalf("1.0 GetTask after 1.1 reads:\n got %v, %v\nwant %v", again, err, full)
			}
		}
		if _, err := c10.CancelTask(ctx, &a2a.CancelTaskRequest{Id: id}); err == nil {
			t.Fatal("CancelTask of a COMPLETED task succeeded")
		}
	})
}
