package parleytest_test

import (
	"context"
	"errors"
	"net"
	"net/url"
	"strings"
	"testing"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
	"parley.dev/parley/parleytest"
	"parley.dev/parley/server"
	"parley.dev/parley/taskstore/memstore"
)

var bindings = []string{a2a.BindingJSONRPC, a2a.BindingHTTPJSON, a2a.BindingGRPC}

// echo answers with a WORKING status, the message's text in two chunks of
// one artifact (two parts once appended), and COMPLETED.
var echo = server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
	if err := em.Status(a2a.TaskState_TASK_STATE_WORKING, nil); err != nil {
		return err
	}
	text := a2a.FirstText(req.Message)
	half := len(text) / 2
	if err := em.Chunk(a2a.TextArtifact("echo", text[:half]), false, false); err != nil {
		return err
	}
	if err := em.Chunk(a2a.TextArtifact("echo", text[half:]), true, true); err != nil {
		return err
	}
	return em.Status(a2a.TaskState_TASK_STATE_COMPLETED, nil)
})

func send(text string) *a2a.SendMessageRequest {
	return &a2a.SendMessageRequest{Message: a2a.UserMessage(text)}
}

func artifactText(task *a2a.Task) string {
	if len(task.GetArtifacts()) != 1 {
		return ""
	}
	var b strings.Builder
	for _, p := range task.GetArtifacts()[0].GetParts() {
		b.WriteString(p.GetText())
	}
	return b.String()
}

// TestEveryBinding: send, stream and get, over each binding of one server.
func TestEveryBinding(t *testing.T) {
	t.Parallel()
	srv := parleytest.NewServer(t, echo)
	for _, b := range bindings {
		t.Run(b, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			c := srv.ClientFor(b)
			if got := c.Interface().GetProtocolBinding(); got != b {
				t.Fatalf("ClientFor(%s).Interface() = %s", b, got)
			}

			resp, err := c.SendMessage(ctx, send("hello "+b))
			if err != nil {
				t.Fatalf("SendMessage: %v", err)
			}
			task := resp.GetTask()
			if st, got := task.GetStatus().GetState(), artifactText(task); st != a2a.TaskState_TASK_STATE_COMPLETED || got != "hello "+b {
				t.Errorf("SendMessage = %v %q, want COMPLETED %q", st, got, "hello "+b)
			}

			var chunks []string
			var last a2a.TaskState
			var id string
			for ev, err := range c.SendStreamingMessage(ctx, send("stream "+b)) {
				if err != nil {
					t.Fatalf("SendStreamingMessage: %v", err)
				}
				r := ev.Response
				if a := r.GetArtifactUpdate(); a != nil {
					chunks = append(chunks, a2a.JoinText(a.GetArtifact().GetParts()))
					id = a.GetTaskId()
				}
				if s := r.GetStatusUpdate(); s != nil {
					last = s.GetStatus().GetState()
				}
			}
			if got := strings.Join(chunks, ""); len(chunks) != 2 || got != "stream "+b || last != a2a.TaskState_TASK_STATE_COMPLETED {
				t.Errorf("SendStreamingMessage: chunks %q, last state %v; want two chunks of %q, COMPLETED", chunks, last, "stream "+b)
			}

			got, err := c.GetTask(ctx, &a2a.GetTaskRequest{Id: id})
			if err != nil {
				t.Fatalf("GetTask(%s): %v", id, err)
			}
			if st, text := got.GetStatus().GetState(), artifactText(got); st != a2a.TaskState_TASK_STATE_COMPLETED || text != "stream "+b {
				t.Errorf("GetTask(%s) = %v %q, want COMPLETED %q", id, st, text, "stream "+b)
			}
		})
	}
}

// TestClientPicksFirstInterface: Client uses the interface the card lists
// first, and WithBindings decides the card's list.
func TestClientPicksFirstInterface(t *testing.T) {
	t.Parallel()
	for _, want := range bindings {
		srv := parleytest.NewServer(t, echo, parleytest.WithBindings(want))
		if got := srv.Client().Interface().GetProtocolBinding(); got != want {
			t.Errorf("WithBindings(%s): Client().Interface() = %s", want, got)
		}
		var v1 []string
		for _, in := range srv.Card().GetSupportedInterfaces() {
			if in.GetProtocolVersion() == a2a.ProtocolVersion {
				v1 = append(v1, in.GetProtocolBinding())
			}
		}
		if len(v1) != 1 || v1[0] != want {
			t.Errorf("WithBindings(%s): v1.0 interfaces on the card %v", want, v1)
		}
	}
	srv := parleytest.NewServer(t, echo)
	if got := srv.Client().Interface().GetProtocolBinding(); got != a2a.BindingJSONRPC {
		t.Errorf("Client().Interface() = %s, want JSONRPC by default", got)
	}
	if _, err := parleytest.Start(echo, parleytest.WithBindings("SOAP")); err == nil {
		t.Error(`Start(WithBindings("SOAP")) succeeded`)
	}
}

// TestTokens: with WithTokens, an anonymous client and a wrong token are
// refused on every binding, a principal's token is accepted, and each
// principal sees only its own tasks.
func TestTokens(t *testing.T) {
	t.Parallel()
	srv := parleytest.NewServer(t, echo, parleytest.WithTokens(map[string]string{"tok-a": "alice", "tok-b": "bob"}))
	ctx := t.Context()
	for _, b := range bindings {
		anon := srv.ClientFor(b)
		if _, err := anon.SendMessage(ctx, send("hi")); !errors.Is(err, a2a.ErrUnauthenticated) {
			t.Errorf("%s: anonymous SendMessage: %v, want UnauthenticatedError", b, err)
		}
		wrong, err := srv.NewClient(&client.Options{BearerToken: "nope", Transports: []client.TransportFactory{transport(b)}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := wrong.SendMessage(ctx, send("hi")); !errors.Is(err, a2a.ErrUnauthenticated) {
			t.Errorf("%s: SendMessage with a wrong token: %v, want UnauthenticatedError", b, err)
		}
	}
	resp, err := srv.ClientAs("alice").SendMessage(ctx, send("mine"))
	if err != nil {
		t.Fatalf("alice's SendMessage: %v", err)
	}
	id := resp.GetTask().GetId()
	if _, err := srv.ClientAs("alice").GetTask(ctx, &a2a.GetTaskRequest{Id: id}); err != nil {
		t.Errorf("alice's GetTask(%s): %v", id, err)
	}
	if _, err := srv.ClientAs("bob").GetTask(ctx, &a2a.GetTaskRequest{Id: id}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("bob's GetTask(%s) of alice's task: %v, want TaskNotFoundError", id, err)
	}
}

func transport(binding string) client.TransportFactory {
	switch binding {
	case a2a.BindingHTTPJSON:
		return client.REST()
	case a2a.BindingGRPC:
		return client.GRPC()
	}
	return client.JSONRPC()
}

// TestStoppedAtCleanup: once the test that made the server has ended, its
// port refuses connections and its clients cannot be had.
func TestStoppedAtCleanup(t *testing.T) {
	t.Parallel()
	var srv *parleytest.Server
	t.Run("inner", func(t *testing.T) {
		srv = parleytest.NewServer(t, echo)
		if _, err := srv.Client().SendMessage(t.Context(), send("hi")); err != nil {
			t.Fatalf("SendMessage: %v", err)
		}
	})
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if conn, err := net.Dial("tcp", u.Host); err == nil {
		conn.Close()
		t.Errorf("Dial(%s) after cleanup succeeded, want refused", u.Host)
	}
	if _, err := srv.NewClient(nil); err == nil {
		t.Error("NewClient after cleanup succeeded")
	}
	if err := srv.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestWithStore: a store given with WithStore stays open after Close, and
// a second server on it finds the first one's tasks.
func TestWithStore(t *testing.T) {
	t.Parallel()
	store := memstore.New()
	t.Cleanup(func() { store.Close() })
	first, err := parleytest.Start(echo, parleytest.WithStore(store))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := first.Client().SendMessage(t.Context(), send("kept"))
	if err != nil {
		t.Fatalf("SendMessage: %v", err)
	}
	if err := first.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	second := parleytest.NewServer(t, echo, parleytest.WithStore(store))
	id := resp.GetTask().GetId()
	task, err := second.Client().GetTask(t.Context(), &a2a.GetTaskRequest{Id: id})
	if err != nil {
		t.Fatalf("GetTask(%s) on the second server: %v", id, err)
	}
	if got := artifactText(task); got != "kept" {
		t.Errorf("GetTask(%s) artifact = %q, want %q", id, got, "kept")
	}
}

// TestWithCardAndServerOptions: the card WithCard adjusts is the one
// served, and WithServerOptions sees it.
func TestWithCardAndServerOptions(t *testing.T) {
	t.Parallel()
	var seen string
	srv := parleytest.NewServer(t, echo,
		parleytest.WithName("shouter"),
		parleytest.WithCard(func(c *a2a.AgentCard) { c.Description = "Shouts." }),
		parleytest.WithServerOptions(func(o *server.Options) { seen = o.Card.GetDescription() }),
	)
	card := srv.Card()
	if card.GetName() != "shouter" || card.GetDescription() != "Shouts." || seen != "Shouts." {
		t.Errorf("card %q %q, server options saw %q; want shouter, Shouts.", card.GetName(), card.GetDescription(), seen)
	}
	if !card.GetCapabilities().GetStreaming() {
		t.Error("the card does not declare streaming")
	}
	card.Name = "changed"
	if srv.Card().GetName() != "shouter" {
		t.Error("Card() returned the server's own card, not a copy")
	}
	if srv.Core() == nil {
		t.Error("Core() = nil")
	}
}
