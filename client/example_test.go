package client_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"

	"parley.dev/parley/a2a"
	"parley.dev/parley/a2ahttp"
	"parley.dev/parley/client"
	"parley.dev/parley/internal/agents"
	"parley.dev/parley/server"
)

// serveConformance runs Parley's conformance agent in process, on the
// three bindings, and returns its base URL and a function that stops it.
func serveConformance() (string, func()) {
	hs := httptest.NewUnstartedServer(nil)
	base := "http://" + hs.Listener.Addr().String()
	card, _ := agents.Card("conformance", []*a2a.AgentInterface{
		{Url: base + "/", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.ProtocolVersion},
		{Url: base, ProtocolBinding: a2a.BindingHTTPJSON, ProtocolVersion: a2a.ProtocolVersion},
		{Url: hs.Listener.Addr().String(), ProtocolBinding: a2a.BindingGRPC, ProtocolVersion: a2a.ProtocolVersion},
	})
	srv, err := server.New(&server.Options{Card: card, Agent: agents.Conformance()})
	if err != nil {
		panic(err)
	}
	h, err := a2ahttp.New(srv, &a2ahttp.Options{Card: card})
	if err != nil {
		panic(err)
	}
	hs.Config.Handler = h
	hs.Config.Protocols = new(http.Protocols)
	hs.Config.Protocols.SetHTTP1(true)
	hs.Config.Protocols.SetUnencryptedHTTP2(true) // gRPC on the same port
	hs.Start()
	return base, func() {
		hs.Close()
		srv.Close(context.Background())
	}
}

// Resolve an agent's card, then send it a message.
func Example() {
	base, stop := serveConformance()
	defer stop()
	ctx := context.Background()

	card, err := client.Resolve(ctx, base, nil)
	if err != nil {
		panic(err)
	}
	c, err := client.New(card, nil)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	fmt.Println("talking to", card.GetName(), "over", c.Interface().GetProtocolBinding())

	resp, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("hello")})
	if err != nil {
		panic(err)
	}
	task := resp.GetTask()
	fmt.Println(task.GetStatus().GetState())
	fmt.Println(a2a.JoinText(task.GetArtifacts()[0].GetParts()))

	_, err = c.GetTask(ctx, &a2a.GetTaskRequest{Id: "no-such-task"})
	fmt.Println(errors.Is(err, a2a.ErrTaskNotFound))
	// Output:
	// talking to Parley conformance agent over JSONRPC
	// TASK_STATE_COMPLETED
	// hello
	// true
}

// Stream a task's progress; the loop ends when the task is done.
func ExampleClient_SendStreamingMessage() {
	base, stop := serveConformance()
	defer stop()
	ctx := context.Background()

	card, err := client.Resolve(ctx, base, nil)
	if err != nil {
		panic(err)
	}
	// Only HTTP+JSON: the same calls work on every binding.
	c, err := client.New(card, &client.Options{Transports: []client.TransportFactory{client.REST()}})
	if err != nil {
		panic(err)
	}
	defer c.Close()

	for ev, err := range c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("stream 3")}) {
		if err != nil {
			// errors.Is(err, client.ErrStreamEnded) when the server closed
			// the stream before the task settled.
			panic(err)
		}
		switch r := ev.Response; {
		case r.GetArtifactUpdate() != nil:
			fmt.Println("chunk:", a2a.JoinText(r.GetArtifactUpdate().GetArtifact().GetParts()))
		case r.GetStatusUpdate() != nil:
			fmt.Println("state:", r.GetStatusUpdate().GetStatus().GetState())
		}
	}
	// Output:
	// state: TASK_STATE_WORKING
	// chunk: chunk 0
	// chunk: chunk 1
	// chunk: chunk 2
	// state: TASK_STATE_COMPLETED
}

// Call the agent over gRPC only: the card's GRPC interface is a dial
// target (host:port), called over cleartext HTTP/2 unless the HTTP
// client's transport has a TLS configuration.
func ExampleGRPC() {
	base, stop := serveConformance()
	defer stop()
	ctx := context.Background()

	card, err := client.Resolve(ctx, base, nil)
	if err != nil {
		panic(err)
	}
	c, err := client.New(card, &client.Options{Transports: []client.TransportFactory{client.GRPC()}})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	fmt.Println("over", c.Interface().GetProtocolBinding())

	resp, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("hello")})
	if err != nil {
		panic(err)
	}
	fmt.Println(resp.GetTask().GetStatus().GetState())
	_, err = c.CancelTask(ctx, &a2a.CancelTaskRequest{Id: resp.GetTask().GetId()})
	fmt.Println(errors.Is(err, a2a.ErrTaskNotCancelable))
	// Output:
	// over GRPC
	// TASK_STATE_COMPLETED
	// true
}

// Answer a task's question without waiting for the agent, then follow
// the task to its end. The reply to the follow-up still shows
// INPUT_REQUIRED (accepting a message does not change the task's state);
// WaitForCompletion knows this Client sent the follow-up, and waits for
// the agent's answer to it rather than returning the old question.
func ExampleClient_WaitForCompletion() {
	base, stop := serveConformance()
	defer stop()
	ctx := context.Background()

	card, err := client.Resolve(ctx, base, nil)
	if err != nil {
		panic(err)
	}
	c, err := client.New(card, nil)
	if err != nil {
		panic(err)
	}
	defer c.Close()

	resp, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("input-required")})
	if err != nil {
		panic(err)
	}
	task := resp.GetTask()
	fmt.Println("asked:", task.GetStatus().GetState())

	_, err = c.SendMessage(ctx, &a2a.SendMessageRequest{
		Message:       a2a.FollowUp(task, "yes, go ahead"),
		Configuration: &a2a.SendMessageConfiguration{ReturnImmediately: true},
	})
	if err != nil {
		panic(err)
	}

	task, err = c.WaitForCompletion(ctx, task.GetId())
	if err != nil {
		panic(err)
	}
	fmt.Println("done:", task.GetStatus().GetState())
	fmt.Println(a2a.JoinText(task.GetArtifacts()[0].GetParts()))
	// Output:
	// asked: TASK_STATE_INPUT_REQUIRED
	// done: TASK_STATE_COMPLETED
	// yes, go ahead
}

// Share one CardCache between resolutions: a card is fetched again only
// when its max-age has passed, and then revalidated with its ETag.
func ExampleCardCache() {
	base, stop := serveConformance()
	defer stop()
	ctx := context.Background()

	cache := &client.CardCache{}
	for range 3 {
		card, err := client.Resolve(ctx, base, &client.ResolveOptions{Cache: cache})
		if err != nil {
			panic(err)
		}
		fmt.Println(card.GetName())
	}
	// Output:
	// Parley conformance agent
	// Parley conformance agent
	// Parley conformance agent
}
