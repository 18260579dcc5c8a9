package push_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/push"
	"parley.dev/parley/server"
	"parley.dev/parley/taskstore/memstore"
)

// A server with push delivery: the client registers a webhook inline in
// SendMessage and receives every event of the task there.
func Example() {
	got := make(chan string, 10)
	webhook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		ev := new(a2a.StreamResponse)
		if err := a2a.Unmarshal(body, ev); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		switch {
		case ev.GetTask() != nil:
			got <- "task " + ev.GetTask().GetStatus().GetState().String()
		case ev.GetStatusUpdate() != nil:
			got <- "status " + ev.GetStatusUpdate().GetStatus().GetState().String()
		case ev.GetArtifactUpdate() != nil:
			got <- "artifact " + ev.GetArtifactUpdate().GetArtifact().GetArtifactId()
		}
	}))
	defer webhook.Close()

	store := memstore.New()
	// The webhook runs on loopback, which the SSRF guard refuses by default.
	guard, _ := push.NewGuard(&push.GuardOptions{AllowPrivate: true})
	sender, _ := push.New(store, &push.Options{Guard: guard, Logger: slog.New(slog.DiscardHandler)})
	defer sender.Close(context.Background())

	card := &a2a.AgentCard{Name: "Greeter", Description: "Greets.", Version: "1.0.0",
		SupportedInterfaces: []*a2a.AgentInterface{{Url: "http://127.0.0.1:8080/", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.ProtocolVersion}},
		Capabilities:        &a2a.AgentCapabilities{PushNotifications: proto.Bool(true)}, // served: Options.Push is the sender
		DefaultInputModes:   []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills: []*a2a.AgentSkill{{Id: "greet", Name: "Greet", Description: "Greets.", Tags: []string{"greet"}}},
	}
	greeter := server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		if err := em.Status(a2a.StateWorking, nil); err != nil {
			return err
		}
		if err := em.Artifact(a2a.TextArtifact("greeting", "hello to you too")); err != nil {
			return err
		}
		return em.Status(a2a.StateCompleted, nil)
	})
	srv, _ := server.New(&server.Options{Card: card, Agent: greeter, Store: store, Push: sender})
	defer srv.Close(context.Background())

	ctx := a2a.WithCallInfo(context.Background(), &a2a.CallInfo{Version: a2a.ProtocolVersion})
	_, err := srv.SendMessage(ctx, &a2a.SendMessageRequest{
		Message: a2a.UserMessage("hello"),
		Configuration: &a2a.SendMessageConfiguration{TaskPushNotificationConfig: &a2a.TaskPushNotificationConfig{
			Url:            webhook.URL + "/a2a-events",
			Authentication: &a2a.AuthenticationInfo{Scheme: "Bearer", Credentials: "client-secret"},
		}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for range 4 {
		fmt.Println(<-got)
	}
	// Output:
	// task TASK_STATE_SUBMITTED
	// status TASK_STATE_WORKING
	// artifact greeting
	// status TASK_STATE_COMPLETED
}
