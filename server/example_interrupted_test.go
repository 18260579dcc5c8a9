package server_test

import (
	"context"
	"errors"
	"fmt"

	"parley.dev/parley/a2a"
	"parley.dev/parley/server"
)

// ExampleTaskHandle_EndInterrupted is an agent whose question waits on
// something outside it (here a channel standing for a human's session).
// It asks, keeps the task's handle and returns: the task waits in
// INPUT_REQUIRED with no execution. When the session is gone before the
// answer came, the agent ends the task FAILED through the handle, and
// whoever watches the task sees it at once; an answer sent afterwards is
// refused, as on any terminal task.
func ExampleTaskHandle_EndInterrupted() {
	handles := make(chan server.TaskHandle, 1)
	agent := server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		if err := em.StatusText(a2a.StateInputRequired, "Which file?"); err != nil {
			return err
		}
		handles <- em.Handle()
		return nil
	})
	card := &a2a.AgentCard{Name: "Opener", Description: "Opens the file it is told.", Version: "1.0.0",
		SupportedInterfaces: []*a2a.AgentInterface{{
			Url: "http://localhost:8080/", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.ProtocolVersion,
		}},
		Capabilities: &a2a.AgentCapabilities{}, DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills: []*a2a.AgentSkill{{Id: "open", Name: "Open", Description: "Opens a file.", Tags: []string{"files"}}}}
	srv, err := server.New(&server.Options{Card: card, Agent: agent})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close(context.Background())
	ctx := context.Background()

	resp, err := srv.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("open a file")})
	if err != nil {
		fmt.Println(err)
		return
	}
	task := resp.GetTask()
	fmt.Println(task.GetStatus().GetState())

	// The session the question waited on is gone.
	h := <-handles
	err = h.EndInterrupted(ctx, a2a.StateFailed, a2a.AgentMessage("the session that asked is gone"))
	fmt.Println("EndInterrupted:", err)

	got, _ := srv.GetTask(ctx, &a2a.GetTaskRequest{Id: task.GetId()})
	fmt.Println(got.GetStatus().GetState(), a2a.FirstText(got.GetStatus().GetMessage()))
	_, err = srv.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.FollowUp(task, "notes.txt")})
	fmt.Println("answer refused:", errors.Is(err, a2a.ErrUnsupportedOperation))
	fmt.Println("again:", h.EndInterrupted(ctx, a2a.StateFailed, nil))
	// Output:
	// TASK_STATE_INPUT_REQUIRED
	// EndInterrupted: <nil>
	// TASK_STATE_FAILED the session that asked is gone
	// answer refused: true
	// again: server: task is in a terminal state
}
