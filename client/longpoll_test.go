package client_test

// Client.WaitForChange and GetTask's long poll (A2A 1.1, spec §3.2.7)
// against a Parley server with the 1.1 preview on, on the three bindings.

import (
	"context"
	"errors"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/a2ahttp"
	"parley.dev/parley/client"
	"parley.dev/parley/internal/testkit"
	pversion "parley.dev/parley/internal/version"
	"parley.dev/parley/server"
)

// longPollServer serves the conformance agent with the 1.1 preview on
// (or off), holds ending at timeout. polled receives the
// currentGeneration of every GetTask that sets one, as the server gets
// it.
func longPollServer(t *testing.T, preview bool, timeout time.Duration) (s *testkit.Server, polled <-chan int64) {
	seen := make(chan int64, 64)
	s = testkit.StartServer(t, &testkit.Options{Quiet: true,
		Mutate: func(card *a2a.AgentCard, o *server.Options) {
			if preview {
				o.ProtocolVersions = []string{pversion.V11, a2a.ProtocolVersion, pversion.V03}
			}
			o.LongPollTimeout = timeout
		},
		HTTP: func(o *a2ahttp.Options) {
			o.Middleware = append(o.Middleware, func(next a2a.Invoker) a2a.Invoker {
				return a2a.InvokerFuncs{Next: next, CallFunc: func(ctx context.Context, m *a2a.Method, req proto.Message) (proto.Message, error) {
					if r, ok := req.(*a2a.GetTaskRequest); ok && r.CurrentGeneration != nil {
						select {
						case seen <- r.GetCurrentGeneration():
						default:
						}
					}
					return next.Call(ctx, m, req)
				}}
			})
		}})
	return s, seen
}

// waitingTask returns a client of s on binding b, made from the card as
// served (with the preview on, a 1.1 interface beside each 1.0 one), and
// a task it made that waits for input.
func waitingTask(t *testing.T, ctx context.Context, s *testkit.Server, b binding) (*client.Client, string) {
	t.Helper()
	c, err := client.New(s.Handler.Card(), &client.Options{Transports: []client.TransportFactory{b.factory}, Retries: -1,
		PollInterval: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	resp, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("input-required")})
	if err != nil {
		t.Fatal(err)
	}
	return c, resp.GetTask().GetId()
}

// changed is what WaitForChange returned.
type changed struct {
	task *a2a.Task
	err  error
}

func TestWaitForChange(t *testing.T) {
	for _, holds := range []bool{true, false} {
		timeout := time.Hour
		if !holds {
			timeout = -1 // the server answers at once: the client paces its polls
		}
		s, polled := longPollServer(t, true, timeout)
		for _, b := range bindings {
			t.Run(map[bool]string{true: "held/", false: "paced/"}[holds]+b.name, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				c, id := waitingTask(t, ctx, s, b)
				// Sent as a 1.1 call: the answer carries the generation.
				now, err := c.GetTask(ctx, &a2a.GetTaskRequest{Id: id, CurrentGeneration: proto.Int64(0)})
				if err != nil || now.GetGeneration() == 0 {
					t.Fatalf("GetTask with currentGeneration: %v, %v; want the task with its generation", now, err)
				}
				for len(polled) > 0 {
					<-polled
				}

				got := make(chan changed, 1)
				go func() {
					tk, err := c.WaitForChange(ctx, &a2a.GetTaskRequest{Id: id})
					got <- changed{tk, err}
				}()
				// The wait read the generation, then polls past it.
				for gen := int64(0); gen != now.GetGeneration(); {
					select {
					case gen = <-polled:
					case r := <-got:
						t.Fatalf("WaitForChange returned before any change: %v, %v", r.task, r.err)
					case <-ctx.Done():
						t.Fatal("WaitForChange never polled past the task's generation")
					}
				}
				follow := a2a.UserMessage("done")
				follow.TaskId = id
				if _, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: follow}); err != nil {
					t.Fatalf("follow-up: %v", err)
				}
				r := <-got
				if r.err != nil || r.task.GetGeneration() <= now.GetGeneration() {
					t.Fatalf("WaitForChange: %v, %v; want the task past generation %d", r.task, r.err, now.GetGeneration())
				}

				// A terminal task will not change: it is returned as it is.
				done, err := c.WaitForCompletion(ctx, id)
				if err != nil || !a2a.IsTerminal(done.GetStatus().GetState()) {
					t.Fatalf("WaitForCompletion: %v, %v", done, err)
				}
				if tk, err := c.WaitForChange(ctx, &a2a.GetTaskRequest{Id: id}); err != nil || tk.GetStatus().GetState() != done.GetStatus().GetState() ||
					tk.GetGeneration() < r.task.GetGeneration() {
					t.Errorf("WaitForChange of a terminal task: %v, %v; want it at once", tk, err)
				}
			})
		}
	}
}

// TestWaitForChangeWithout11: an agent whose card declares no 1.1
// interface takes no long polls: WaitForChange says so at once, and a
// GetTask that sets currentGeneration is sent as a 1.0 call, answered at
// once without a generation.
func TestWaitForChangeWithout11(t *testing.T) {
	s, _ := longPollServer(t, false, time.Hour)
	for _, b := range bindings {
		t.Run(b.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			c, id := waitingTask(t, ctx, s, b)
			if _, err := c.WaitForChange(ctx, &a2a.GetTaskRequest{Id: id}); !errors.Is(err, client.ErrNoGeneration) {
				t.Errorf("WaitForChange: %v; want ErrNoGeneration", err)
			}
			if tk, err := c.GetTask(ctx, &a2a.GetTaskRequest{Id: id, CurrentGeneration: proto.Int64(1000)}); err != nil || tk.GetGeneration() != 0 {
				t.Errorf("GetTask with currentGeneration: %v, %v; want the task at once", tk, err)
			}
		})
	}
}
