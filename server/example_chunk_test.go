package server_test

import (
	"context"
	"fmt"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/server"
)

// ExampleEmitter_StartArtifact streams one artifact in three chunks: the
// first starts it, the next is appended, the last finishes it. A streaming
// client sees each chunk as it is emitted; the stored task holds the whole.
func ExampleEmitter_StartArtifact() {
	plan := server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		if err := em.Status(a2a.TaskState_TASK_STATE_WORKING, nil); err != nil {
			return err
		}
		if err := em.StartArtifact(a2a.TextArtifact("plan", "1. read")); err != nil {
			return err
		}
		if err := em.AppendArtifact(a2a.TextArtifact("plan", "2. think")); err != nil {
			return err
		}
		if err := em.FinishArtifact(a2a.TextArtifact("plan", "3. write")); err != nil {
			return err
		}
		return em.Status(a2a.TaskState_TASK_STATE_COMPLETED, nil)
	})
	card := &a2a.AgentCard{Name: "Planner", Description: "Writes a plan in three steps.", Version: "1.0.0",
		SupportedInterfaces: []*a2a.AgentInterface{{Url: "http://localhost:8080/", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.ProtocolVersion}},
		Capabilities:        &a2a.AgentCapabilities{Streaming: proto.Bool(true)}, DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills: []*a2a.AgentSkill{{Id: "plan", Name: "Plan", Description: "Writes a plan.", Tags: []string{"plan"}}}}
	srv, err := server.New(&server.Options{Card: card, Agent: plan})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close(context.Background())

	ctx := a2a.WithCallInfo(context.Background(), &a2a.CallInfo{Version: a2a.ProtocolVersion})
	for ev, err := range srv.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("plan")}) {
		if err != nil {
			fmt.Println(err)
			return
		}
		if u := ev.Response.GetArtifactUpdate(); u != nil {
			fmt.Printf("%q append=%v last=%v\n", a2a.JoinText(u.GetArtifact().GetParts()), u.GetAppend(), u.GetLastChunk())
		}
	}
	// Output:
	// "1. read" append=false last=false
	// "2. think" append=true last=false
	// "3. write" append=true last=true
}
