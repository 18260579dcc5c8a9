package client_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/a2ahttp"
	"parley.dev/parley/client"
	"parley.dev/parley/server"
)

// ExampleClient_SendStreamingMessage_answer streams a task that stops to
// ask a question, answers it, and streams the rest. The agent asks which
// city with INPUT_REQUIRED; the answer, a follow-up sent with
// SendStreamingMessage, gets a stream of its own, which begins with a Task
// snapshot that still says INPUT_REQUIRED (the question being answered).
// Only a status update is a new question, so the loop tests Snapshot
// before prompting, and stops at the first Final event. The artifact
// arrives in chunks, which an ArtifactAssembler puts back together.
//
// It is one long function on purpose: godoc shows an example as one program.
func ExampleClient_SendStreamingMessage_answer() {
	forecaster := server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		if req.Task.GetStatus().GetState() != a2a.StateInputRequired {
			return em.StatusText(a2a.StateInputRequired, "Which city?")
		}
		city := a2a.FirstText(req.Message)
		if err := em.Status(a2a.StateWorking, nil); err != nil {
			return err
		}
		// One answer in three chunks, split mid-word as a model would.
		if err := em.StartArtifact(a2a.TextArtifact("forecast", city+": sun")); err != nil {
			return err
		}
		if err := em.AppendArtifact(a2a.TextArtifact("forecast", "ny, 2")); err != nil {
			return err
		}
		if err := em.FinishArtifact(a2a.TextArtifact("forecast", "4 °C")); err != nil {
			return err
		}
		return em.Status(a2a.StateCompleted, nil)
	})

	hs := httptest.NewUnstartedServer(nil)
	ifaces, err := a2ahttp.Interfaces("http://" + hs.Listener.Addr().String())
	if err != nil {
		panic(err)
	}
	card := &a2a.AgentCard{Name: "Forecaster", Description: "Forecasts the weather.", Version: "1.0.0",
		SupportedInterfaces: ifaces,
		Capabilities:        &a2a.AgentCapabilities{Streaming: proto.Bool(true)},
		DefaultInputModes:   []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills: []*a2a.AgentSkill{{Id: "forecast", Name: "forecast", Description: "Forecasts the weather.", Tags: []string{"forecast"}}},
	}
	srv, err := server.New(&server.Options{Card: card, Agent: forecaster})
	if err != nil {
		panic(err)
	}
	defer srv.Close(context.Background())
	h, err := a2ahttp.New(srv, &a2ahttp.Options{Card: card})
	if err != nil {
		panic(err)
	}
	hs.Config.Handler = h
	hs.Config.Protocols = new(http.Protocols)
	hs.Config.Protocols.SetHTTP1(true)
	hs.Config.Protocols.SetUnencryptedHTTP2(true) // gRPC on the same port
	hs.Start()
	defer hs.Close()

	ctx := context.Background()
	c, err := client.New(card, nil)
	if err != nil {
		panic(err)
	}
	defer c.Close()

	answers := map[string]string{"Which city?": "Oslo"} // what the user would type
	var (
		chunks a2a.ArtifactAssembler
		last   a2a.TaskState
		msg    = a2a.UserMessage("weather tomorrow")
	)
	for msg != nil {
		var next *a2a.Message
		for ev, err := range c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: msg}) {
			if err != nil {
				panic(err) // client.ErrStreamEnded: cut off before the task stopped
			}
			chunks.Add(ev)
			switch ev.Kind() {
			case a2a.EventTask:
				fmt.Println("snapshot:", ev.State())
			case a2a.EventStatusUpdate:
				fmt.Println("status:", ev.State())
			case a2a.EventArtifactUpdate:
				fmt.Printf("chunk: %q\n", a2a.ArtifactText(ev.Artifact()))
			}
			if ev.State() == a2a.StateInputRequired {
				if ev.Snapshot() {
					fmt.Println("  (the question already answered: skipped)")
					continue
				}
				q := a2a.FirstText(ev.Message())
				fmt.Println("  question:", q)
				fmt.Println("  answer:", answers[q])
				next = a2a.UserMessageFor(ev.TaskID(), ev.ContextID(), answers[q])
			}
			if ev.Final() {
				last = ev.State()
				break
			}
		}
		msg = next
	}
	fmt.Println("final:", last)
	fmt.Println("forecast:", chunks.Text("forecast"))
	// Output:
	// snapshot: TASK_STATE_SUBMITTED
	// status: TASK_STATE_INPUT_REQUIRED
	//   question: Which city?
	//   answer: Oslo
	// snapshot: TASK_STATE_INPUT_REQUIRED
	//   (the question already answered: skipped)
	// status: TASK_STATE_WORKING
	// chunk: "Oslo: sun"
	// chunk: "ny, 2"
	// chunk: "4 °C"
	// status: TASK_STATE_COMPLETED
	// final: TASK_STATE_COMPLETED
	// forecast: Oslo: sunny, 24 °C
}
