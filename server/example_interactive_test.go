package server_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"parley.dev/parley/a2a"
	"parley.dev/parley/a2ahttp"
	"parley.dev/parley/client"
	"parley.dev/parley/server"
)

// Example_interactive is an agent that needs a yes or no before it acts.
// Its first run asks the question as the message of an INPUT_REQUIRED
// status and returns: the task waits, and Execute runs again when the
// client sends a follow-up on the same task (req.Task is then the task as
// it was). "yes" completes the task with an artifact, "no" cancels it,
// anything else asks again. The agent is served with a2ahttp on a loopback
// port and called with package client; one task is answered "yes", the
// other "no".
//
// It is one long function on purpose: godoc shows an example as one program.
func Example_interactive() {
	const question = "Delete the 3 files in /tmp/build? (yes/no)"
	cleaner := server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		if req.Task.GetStatus().GetState() != a2a.StateInputRequired {
			// A new task: ask, and stop until the answer arrives.
			return em.StatusText(a2a.StateInputRequired, question)
		}
		switch strings.ToLower(strings.TrimSpace(a2a.FirstText(req.Message))) {
		case "yes":
			if err := em.Status(a2a.StateWorking, nil); err != nil {
				return err
			}
			if err := em.Artifact(a2a.TextArtifact("report", "deleted 3 files")); err != nil {
				return err
			}
			return em.Status(a2a.StateCompleted, nil)
		case "no":
			return em.StatusText(a2a.StateCanceled, "nothing was deleted")
		default:
			return em.StatusText(a2a.StateInputRequired, "Please answer yes or no. "+question)
		}
	})

	// Serve it on 127.0.0.1 with a card whose three interfaces derive from
	// the one base URL; cleartext HTTP/2 lets the gRPC interface work too.
	hs := httptest.NewUnstartedServer(nil)
	base := "http://" + hs.Listener.Addr().String()
	ifaces, err := a2ahttp.Interfaces(base)
	if err != nil {
		fmt.Println(err)
		return
	}
	card := &a2a.AgentCard{Name: "Cleaner", Description: "Deletes build files once the user agrees.", Version: "1.0.0",
		SupportedInterfaces: ifaces, Capabilities: &a2a.AgentCapabilities{},
		DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills: []*a2a.AgentSkill{{Id: "clean", Name: "Clean", Description: "Deletes build files.", Tags: []string{"files"}}}}
	srv, err := server.New(&server.Options{Card: card, Agent: cleaner})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close(context.Background())
	h, err := a2ahttp.New(srv, &a2ahttp.Options{Card: card})
	if err != nil {
		fmt.Println(err)
		return
	}
	hs.Config.Handler = h
	hs.Config.Protocols = new(http.Protocols)
	hs.Config.Protocols.SetHTTP1(true)
	hs.Config.Protocols.SetUnencryptedHTTP2(true)
	hs.Start()
	defer hs.Close() // runs before srv.Close: no call is left open

	ctx := context.Background()
	c, err := client.New(card, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	show := func(t *a2a.Task) {
		fmt.Print(t.GetStatus().GetState())
		if m := t.GetStatus().GetMessage(); m != nil {
			fmt.Print(": ", a2a.FirstText(m))
		}
		fmt.Println()
		for _, a := range t.GetArtifacts() {
			fmt.Printf("  artifact %s: %s\n", a.GetArtifactId(), a2a.ArtifactText(a))
		}
	}
	for _, answer := range []string{"yes", "no"} {
		// A blocking send returns when the task stops: here at the question.
		resp, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("clean up")})
		if err != nil {
			fmt.Println(err)
			return
		}
		task := resp.GetTask()
		show(task)

		// FollowUp addresses the answer to the task (its id and contextId).
		fmt.Println("answer:", answer)
		resp, err = c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.FollowUp(task, answer)})
		if err != nil {
			fmt.Println(err)
			return
		}
		show(resp.GetTask())
	}
	// Output:
	// TASK_STATE_INPUT_REQUIRED: Delete the 3 files in /tmp/build? (yes/no)
	// answer: yes
	// TASK_STATE_COMPLETED
	//   artifact report: deleted 3 files
	// TASK_STATE_INPUT_REQUIRED: Delete the 3 files in /tmp/build? (yes/no)
	// answer: no
	// TASK_STATE_CANCELED: nothing was deleted
}
