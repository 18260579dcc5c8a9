package a2ahttp_test

import (
	"context"
	"fmt"
	"net"
	"strings"

	"parley.dev/parley/a2a"
	"parley.dev/parley/a2ahttp"
	"parley.dev/parley/client"
	"parley.dev/parley/server"
)

// Serve an agent on every binding of one port, call it with package
// client, and stop it by ending the context.
func ExampleServe() {
	shout := server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		return em.Reply(a2a.AgentMessage(strings.ToUpper(a2a.FirstText(req.Message))))
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0") // or ServeConfig.Addr
	if err != nil {
		panic(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error)
	go func() {
		served <- a2ahttp.Serve(ctx, &a2ahttp.ServeConfig{
			Listener: ln, Agent: shout,
			Name: "shouter", Description: "Repeats what it hears, louder.", Version: "1.0.0",
			Skills: []*a2a.AgentSkill{{Id: "shout", Name: "Shout", Description: "Upper-cases the text.", Tags: []string{"text"}}},
		})
	}()

	card, err := client.Resolve(ctx, "http://"+ln.Addr().String(), nil)
	if err != nil {
		panic(err)
	}
	c, err := client.New(card, nil)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	resp, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("hello")})
	if err != nil {
		panic(err)
	}
	fmt.Println(a2a.FirstText(resp.GetMessage()))

	stop()
	fmt.Println("stopped:", <-served)
	// Output:
	// HELLO
	// stopped: <nil>
}
