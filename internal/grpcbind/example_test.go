package grpcbind_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"connectrpc.com/connect"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/a2aconnect"
	"parley.dev/parley/internal/agents"
	"parley.dev/parley/internal/grpcbind"
	"parley.dev/parley/server"
)

// Serve an agent over gRPC on cleartext HTTP/2 and call it with the
// generated client: a blocking SendMessage, then a stream.
func Example() {
	shout := server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		if err := em.Artifact(a2a.TextArtifact("shout", strings.ToUpper(a2a.FirstText(req.Message)))); err != nil {
			return err
		}
		return em.Status(a2a.TaskState_TASK_STATE_COMPLETED, nil)
	})
	hs := httptest.NewUnstartedServer(nil)
	card, _ := agents.Card("echo", []*a2a.AgentInterface{
		{Url: hs.Listener.Addr().String(), ProtocolBinding: a2a.BindingGRPC, ProtocolVersion: a2a.ProtocolVersion},
	})
	srv, err := server.New(&server.Options{Card: card, Agent: shout})
	if err != nil {
		panic(err)
	}
	defer srv.Close(context.Background())

	// The binding is a plain http.Handler; gRPC needs HTTP/2 (here h2c).
	hs.Config.Handler = grpcbind.NewHandler(srv, nil)
	hs.Config.Protocols = new(http.Protocols)
	hs.Config.Protocols.SetUnencryptedHTTP2(true)
	hs.Start()
	defer hs.Close()

	h2c := new(http.Protocols)
	h2c.SetUnencryptedHTTP2(true)
	client := a2aconnect.NewA2AServiceClient(&http.Client{Transport: &http.Transport{Protocols: h2c}},
		"http://"+card.SupportedInterfaces[0].Url, connect.WithGRPC())

	req := connect.NewRequest(&a2a.SendMessageRequest{Message: a2a.UserMessage("hello")})
	req.Header().Set("A2A-Version", "1.0") // the a2a-version metadata
	res, err := client.SendMessage(context.Background(), req)
	if err != nil {
		panic(err)
	}
	task := res.Msg.GetTask()
	fmt.Println(task.GetStatus().GetState(), a2a.JoinText(task.GetArtifacts()[0].GetParts()))

	req = connect.NewRequest(&a2a.SendMessageRequest{Message: a2a.UserMessage("stream me")})
	req.Header().Set("A2A-Version", "1.0")
	stream, err := client.SendStreamingMessage(context.Background(), req)
	if err != nil {
		panic(err)
	}
	for stream.Receive() {
		switch ev := stream.Msg(); {
		case ev.GetTask() != nil:
			fmt.Println("task", ev.GetTask().GetStatus().GetState())
		case ev.GetArtifactUpdate() != nil:
			fmt.Println("artifact", a2a.JoinText(ev.GetArtifactUpdate().GetArtifact().GetParts()))
		case ev.GetStatusUpdate() != nil:
			fmt.Println("status", ev.GetStatusUpdate().GetStatus().GetState())
		}
	}
	fmt.Println("end:", stream.Err())

	// Errors carry the gRPC code of the spec and a google.rpc.ErrorInfo.
	get := connect.NewRequest(&a2a.GetTaskRequest{Id: "no-such-task"})
	get.Header().Set("A2A-Version", "1.0")
	_, err = client.GetTask(context.Background(), get)
	fmt.Println(connect.CodeOf(err))
	// Output:
	// TASK_STATE_COMPLETED HELLO
	// task TASK_STATE_SUBMITTED
	// artifact STREAM ME
	// status TASK_STATE_COMPLETED
	// end: <nil>
	// not_found
}
