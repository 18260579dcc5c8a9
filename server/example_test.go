package server_test

import (
	"context"
	"fmt"
	"strings"

	"parley.dev/parley/a2a"
	"parley.dev/parley/server"
)

// Example writes an agent as a plain function, serves it in-process and
// sends it a message. A binding (JSON-RPC, REST, gRPC) would call the same
// server.Server methods for a remote client.
func Example() {
	// The agent: report progress, produce one artifact, finish. Returning
	// without a terminal or interrupted state would make the task FAILED.
	shout := server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		if err := em.Status(a2a.TaskState_TASK_STATE_WORKING, nil); err != nil {
			return err
		}
		loud := strings.ToUpper(a2a.FirstText(req.Message)) + "!"
		if err := em.Artifact(a2a.TextArtifact("shout", loud)); err != nil {
			return err
		}
		return em.Status(a2a.TaskState_TASK_STATE_COMPLETED, nil)
	})

	// Its public agent card: what it is and which capabilities it has.
	card := &a2a.AgentCard{
		Name:        "Shouter",
		Description: "Repeats what it is told, louder.",
		Version:     "1.0.0",
		SupportedInterfaces: []*a2a.AgentInterface{{
			Url: "http://localhost:8080/", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.ProtocolVersion,
		}},
		Capabilities:       &a2a.AgentCapabilities{},
		DefaultInputModes:  []string{"text/plain"},
		DefaultOutputModes: []string{"text/plain"},
		Skills: []*a2a.AgentSkill{{
			Id: "shout", Name: "Shout", Description: "Upper-cases the message.", Tags: []string{"text"},
		}},
	}

	srv, err := server.New(&server.Options{Card: card, Agent: shout})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close(context.Background())

	// A binding puts what it learned from the transport into the context:
	// at least the protocol version the client speaks.
	ctx := a2a.WithCallInfo(context.Background(), &a2a.CallInfo{Version: a2a.ProtocolVersion})

	// A blocking send returns once the task is finished (or needs input).
	resp, err := srv.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("hello, parley")})
	if err != nil {
		fmt.Println(err)
		return
	}
	task := resp.GetTask()
	fmt.Println(task.GetStatus().GetState())
	for _, a := range task.GetArtifacts() {
		fmt.Printf("%s: %s\n", a.GetArtifactId(), a2a.JoinText(a.GetParts()))
	}
	// Output:
	// TASK_STATE_COMPLETED
	// shout: HELLO, PARLEY!
}
