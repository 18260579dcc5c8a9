package push_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"time"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/a2ahttp"
	"parley.dev/parley/client"
	"parley.dev/parley/push"
	"parley.dev/parley/server"
	"parley.dev/parley/taskstore/memstore"
)

// Example_delivery follows push notifications end to end. An agent asks
// for approval (INPUT_REQUIRED); while the task waits, the client
// registers a webhook for it with CreateTaskPushNotificationConfig and
// then answers. The webhook receives, in order, a snapshot of the task as
// it stood when the configuration was created, then every event of the
// task after it, each POSTed as a StreamResponse with the configuration's
// token in the A2A-Notification-Token header.
//
// It is one long function on purpose: godoc shows an example as one program.
func Example_delivery() {
	// The receiver: what each notification is, and the token it came
	// with, in the order they arrive (the sender has at most one POST in
	// flight per configuration).
	type notification struct{ what, token string }
	got := make(chan notification, 16)
	webhook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var resp a2a.StreamResponse
		if err := a2a.Unmarshal(body, &resp); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		ev := a2a.StreamEvent{Response: &resp}
		what := fmt.Sprint(ev.Kind(), " ", ev.State())
		if ev.Kind() == a2a.EventArtifactUpdate {
			what = fmt.Sprintf("%s %q", ev.Kind(), a2a.ArtifactText(ev.Artifact()))
		}
		got <- notification{what, r.Header.Get("A2A-Notification-Token")}
	}))
	defer webhook.Close()

	approver := server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		if req.Task.GetStatus().GetState() != a2a.StateInputRequired {
			return em.StatusText(a2a.StateInputRequired, "Approve the deployment?")
		}
		if err := em.Status(a2a.StateWorking, nil); err != nil {
			return err
		}
		if err := em.Artifact(a2a.TextArtifact("deploy", "deployed v1.2")); err != nil {
			return err
		}
		return em.Status(a2a.StateCompleted, nil)
	})

	// The sender works from the server's store. The webhook is on
	// loopback, which the SSRF guard refuses unless told otherwise.
	store := memstore.New()
	guard, err := push.NewGuard(&push.GuardOptions{AllowPrivate: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	sender, err := push.New(store, &push.Options{Guard: guard, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sender.Close(context.Background())

	hs := httptest.NewUnstartedServer(nil)
	ifaces, err := a2ahttp.Interfaces("http://" + hs.Listener.Addr().String())
	if err != nil {
		fmt.Println(err)
		return
	}
	card := &a2a.AgentCard{Name: "Approver", Description: "Approves requests.", Version: "1.0.0",
		SupportedInterfaces: ifaces,
		Capabilities:        &a2a.AgentCapabilities{Streaming: proto.Bool(true), PushNotifications: proto.Bool(true) /* backed by Options.Push */},
		DefaultInputModes:   []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills: []*a2a.AgentSkill{{Id: "approve", Name: "approve", Description: "Approves requests.", Tags: []string{"approve"}}},
	}
	srv, err := server.New(&server.Options{Card: card, Agent: approver, Store: store, Push: sender})
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
	hs.Config.Protocols.SetUnencryptedHTTP2(true) // gRPC on the same port
	hs.Start()
	defer hs.Close()

	ctx := context.Background()
	c, err := client.New(card, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	resp, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("deploy v1.2")})
	if err != nil {
		fmt.Println(err)
		return
	}
	task := resp.GetTask()
	fmt.Println("client:", task.GetStatus().GetState(), a2a.FirstText(task.GetStatus().GetMessage()))
	_, err = c.CreateTaskPushNotificationConfig(ctx, &a2a.TaskPushNotificationConfig{
		TaskId: task.GetId(),
		Url:    webhook.URL + "/a2a-events",
		Token:  "tok-42", // echoed in every notification, so the receiver can tell it is ours
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("client: webhook registered, answering")
	if _, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.FollowUp(task, "approved")}); err != nil {
		fmt.Println(err)
		return
	}

	// Print notifications until the one that ends the task.
	timeout := time.After(5 * time.Second)
	tokens := map[string]int{}
	for done := false; !done; {
		select {
		case n := <-got:
			fmt.Println("webhook:", n.what)
			tokens[n.token]++
			done = n.what == "statusUpdate TASK_STATE_COMPLETED"
		case <-timeout:
			fmt.Println("timed out waiting for notifications")
			return
		}
	}
	fmt.Println("webhook: A2A-Notification-Token:", tokens)
	// Output:
	// client: TASK_STATE_INPUT_REQUIRED Approve the deployment?
	// client: webhook registered, answering
	// webhook: task TASK_STATE_INPUT_REQUIRED
	// webhook: statusUpdate TASK_STATE_WORKING
	// webhook: artifactUpdate "deployed v1.2"
	// webhook: statusUpdate TASK_STATE_COMPLETED
	// webhook: A2A-Notification-Token: map[tok-42:4]
}
