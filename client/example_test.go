package client_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/a2ahttp"
	"parley.dev/parley/client"
	"parley.dev/parley/server"
)

// demo is the agent the examples call: "stream N" streams N chunks of
// the artifact "stream" ("stream N every MS": MS milliseconds apart),
// "input-required" asks for more input (and the follow-up completes the
// task with its text), anything else is echoed.
var demo = server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
	text := a2a.FirstText(req.Message)
	if err := em.Status(a2a.TaskState_TASK_STATE_WORKING, nil); err != nil {
		return err
	}
	var n, ms int
	if fmt.Sscanf(text, "stream %d every %d", &n, &ms); n > 1 {
		for i := range n {
			time.Sleep(time.Duration(ms) * time.Millisecond)
			chunk := a2a.TextArtifact("stream", fmt.Sprintf("chunk %d", i))
			var err error
			switch i {
			case 0:
				err = em.StartArtifact(chunk)
			case n - 1:
				err = em.FinishArtifact(chunk)
			default:
				err = em.AppendArtifact(chunk)
			}
			if err != nil {
				return err
			}
		}
		return em.Status(a2a.TaskState_TASK_STATE_COMPLETED, nil)
	}
	if text == "input-required" && req.Task == nil {
		return em.StatusText(a2a.TaskState_TASK_STATE_INPUT_REQUIRED, "go ahead?")
	}
	if err := em.Artifact(a2a.TextArtifact("echo", text)); err != nil {
		return err
	}
	return em.Status(a2a.TaskState_TASK_STATE_COMPLETED, nil)
})

// serveDemo serves demo in process on every binding (gRPC on the same
// port) and returns its base URL and a function that stops it.
func serveDemo() (string, func()) {
	srv, err := a2ahttp.Start(&a2ahttp.ServeConfig{Addr: "127.0.0.1:0", Agent: demo,
		Name: "demo agent", Description: "Streams, asks, echoes.", Version: "1.0.0",
		Skills: []*a2a.AgentSkill{{Id: "demo", Name: "Demo", Description: "Streams, asks, echoes.", Tags: []string{"demo"}}}})
	if err != nil {
		panic(err)
	}
	return srv.URL(), func() { srv.Close() }
}

// Resolve an agent's card, then send it a message.
func Example() {
	base, stop := serveDemo()
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
	// talking to demo agent over JSONRPC
	// TASK_STATE_COMPLETED
	// hello
	// true
}

// Stream a task's progress; the loop ends when the task is done.
func ExampleClient_SendStreamingMessage() {
	base, stop := serveDemo()
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
	base, stop := serveDemo()
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
	base, stop := serveDemo()
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
	base, stop := serveDemo()
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
	// demo agent
	// demo agent
	// demo agent
}
