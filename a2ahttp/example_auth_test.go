package a2ahttp_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/a2ahttp"
	"parley.dev/parley/client"
	"parley.dev/parley/server"
)

// ExampleOptions_tokens serves an agent that only known callers may use.
// Options.Tokens maps each bearer token to the principal it stands for;
// once any credential is configured, a call without one is refused before
// its body is read (unless Options.AllowAnonymous is set), and a token not
// in the map is always refused. The card stays public, so a client can
// still resolve it, and it declares an HTTP Bearer scheme and a
// requirement naming it (spec §4.5), so the client learns that it needs
// a token. The agent sees the caller in Request.Principal.
func ExampleOptions_tokens() {
	whoami := server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		if err := em.Artifact(a2a.TextArtifact("whoami", "you are "+req.Principal)); err != nil {
			return err
		}
		return em.Status(a2a.StateCompleted, nil)
	})

	hs := httptest.NewUnstartedServer(nil)
	ifaces, err := a2ahttp.Interfaces("http://" + hs.Listener.Addr().String())
	if err != nil {
		fmt.Println(err)
		return
	}
	card := &a2a.AgentCard{Name: "Who am I", Description: "Tells callers who they are.", Version: "1.0.0",
		SupportedInterfaces: ifaces,
		Capabilities:        &a2a.AgentCapabilities{Streaming: proto.Bool(true)},
		DefaultInputModes:   []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills: []*a2a.AgentSkill{{Id: "whoami", Name: "whoami", Description: "Tells callers who they are.", Tags: []string{"whoami"}}},
	}
	srv, err := server.New(&server.Options{Card: card, Agent: whoami})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close(context.Background())
	h, err := a2ahttp.New(srv, &a2ahttp.Options{
		Card:   card,
		Tokens: map[string]string{"s3cret-alice": "alice"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	hs.Config.Handler = h
	hs.Config.Protocols = new(http.Protocols)
	hs.Config.Protocols.SetHTTP1(true)
	hs.Config.Protocols.SetUnencryptedHTTP2(true) // gRPC on the same port
	hs.Start()
	defer hs.Close()

	ctx := context.Background()
	for _, caller := range []struct{ name, token string }{
		{"no token", ""},
		{"wrong token", "guess"},
		{"alice's token", "s3cret-alice"},
	} {
		c, err := client.New(card, &client.Options{BearerToken: caller.token})
		if err != nil {
			fmt.Println(err)
			return
		}
		resp, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("who am I?")})
		c.Close()
		switch {
		case errors.Is(err, a2a.ErrUnauthenticated):
			fmt.Printf("%s: refused (%v)\n", caller.name, err)
		case err != nil:
			fmt.Printf("%s: %v\n", caller.name, err)
		default:
			task := resp.GetTask()
			fmt.Printf("%s: %s, %q\n", caller.name, task.GetStatus().GetState(), a2a.ArtifactText(task.GetArtifacts()[0]))
		}
	}
	// Output:
	// no token: refused (UnauthenticatedError: authentication required: no credentials were sent)
	// wrong token: refused (UnauthenticatedError: the bearer token was refused)
	// alice's token: TASK_STATE_COMPLETED, "you are alice"
}
