package execagent_test

import (
	"context"
	"fmt"
	"log/slog"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/agents/execagent"
	"parley.dev/parley/server"
)

// Example makes tr an agent: each message runs it once, the message's text
// on its standard input, its output streamed as the artifact "output".
func Example() {
	words, err := execagent.SplitWords(`tr a-z A-Z`)
	if err != nil {
		fmt.Println(err)
		return
	}
	o := execagent.Options{Command: words, Logger: slog.New(slog.DiscardHandler)}
	agent, err := execagent.New(o)
	if err != nil {
		fmt.Println(err)
		return
	}
	card := execagent.Card(o, []*a2a.AgentInterface{{
		Url: "http://localhost:8080/", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.ProtocolVersion,
	}})
	srv, err := server.New(&server.Options{Card: card, Agent: agent, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close(context.Background())

	ctx := a2a.WithCallInfo(context.Background(), &a2a.CallInfo{Version: a2a.ProtocolVersion})
	resp, err := srv.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("hello")})
	if err != nil {
		fmt.Println(err)
		return
	}
	task := resp.GetTask()
	fmt.Println(task.GetStatus().GetState())
	fmt.Printf("%q\n", a2a.ArtifactText(task.GetArtifacts()[0]))
	// Output:
	// TASK_STATE_COMPLETED
	// "HELLO\n"
}
