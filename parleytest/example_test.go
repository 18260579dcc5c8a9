package parleytest_test

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"parley.dev/parley/a2a"
	"parley.dev/parley/parleytest"
	"parley.dev/parley/server"
)

// shout answers every message with a task whose artifact is the message's
// text in capitals.
var shout = server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
	text := strings.ToUpper(a2a.FirstText(req.Message))
	if err := em.Artifact(a2a.TextArtifact("shout", text)); err != nil {
		return err
	}
	return em.Status(a2a.TaskState_TASK_STATE_COMPLETED, nil)
})

// Test an agent over the wire. In a test, parleytest.NewServer(t, shout)
// does what Start and Close do here, and stops the server when the test
// ends.
func Example() {
	srv, err := parleytest.Start(shout)
	if err != nil {
		panic(err)
	}
	defer srv.Close()

	c := srv.Client()
	fmt.Println("over", c.Interface().GetProtocolBinding())
	resp, err := c.SendMessage(context.Background(), &a2a.SendMessageRequest{Message: a2a.UserMessage("hello")})
	if err != nil {
		panic(err)
	}
	task := resp.GetTask()
	fmt.Println(task.GetStatus().GetState())
	fmt.Println(a2a.JoinText(task.GetArtifacts()[0].GetParts()))
	// Output:
	// over JSONRPC
	// TASK_STATE_COMPLETED
	// HELLO
}

// Require a bearer token: an anonymous client is refused, a client
// calling as a principal gets through.
func ExampleWithTokens() {
	srv, err := parleytest.Start(shout, parleytest.WithTokens(map[string]string{"secret-1": "alice"}))
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	ctx := context.Background()
	req := &a2a.SendMessageRequest{Message: a2a.UserMessage("hi")}

	_, err = srv.Client().SendMessage(ctx, req)
	fmt.Println("anonymous:", errors.Is(err, a2a.ErrUnauthenticated))

	resp, err := srv.ClientAs("alice").SendMessage(ctx, req)
	if err != nil {
		panic(err)
	}
	fmt.Println("alice:", resp.GetTask().GetStatus().GetState())
	// Output:
	// anonymous: true
	// alice: TASK_STATE_COMPLETED
}

// Call over one binding: a test can repeat itself over each.
func ExampleServer_ClientFor() {
	srv, err := parleytest.Start(shout)
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	for _, b := range []string{a2a.BindingJSONRPC, a2a.BindingHTTPJSON, a2a.BindingGRPC} {
		c := srv.ClientFor(b)
		resp, err := c.SendMessage(context.Background(), &a2a.SendMessageRequest{Message: a2a.UserMessage("hi")})
		if err != nil {
			panic(err)
		}
		fmt.Println(c.Interface().GetProtocolBinding(), a2a.JoinText(resp.GetTask().GetArtifacts()[0].GetParts()))
	}
	// Output:
	// JSONRPC HI
	// HTTP+JSON HI
	// GRPC HI
}

// List only HTTP+JSON on the card (v1.0, and v0.3 after it): Client then
// calls over it.
func ExampleWithBindings() {
	srv, err := parleytest.Start(shout, parleytest.WithBindings(a2a.BindingHTTPJSON), parleytest.WithName("shouter"))
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	card := srv.Card()
	fmt.Println(card.GetName())
	for _, in := range card.GetSupportedInterfaces() {
		fmt.Println(in.GetProtocolBinding(), in.GetProtocolVersion())
	}
	fmt.Println("client over", srv.Client().Interface().GetProtocolBinding())
	// Output:
	// shouter
	// HTTP+JSON 1.0
	// HTTP+JSON 0.3
	// client over HTTP+JSON
}
