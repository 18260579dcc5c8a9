package server_test

// The conditional send of the A2A 1.1 preview (spec dev-1.1 §3.2.2,
// configuration.ifGenerationMatch), over the wire: on the three bindings
// and every store, a follow-up expecting the task's generation is
// accepted, any other is refused with TaskGenerationMismatchError in each
// binding's shape and leaves the task as it was, N sends racing with the
// same expectation have exactly one winner, a refused messageId can be
// sent again, and the field is ignored on a message that makes a task and
// on a 1.0 call.

import (
	"context"
	"errors"
	"maps"
	"strconv"
	"sync"
	"testing"

	"connectrpc.com/connect"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
	"parley.dev/parley/internal/a2aconnect"
	"parley.dev/parley/internal/testkit"
	pversion "parley.dev/parley/internal/version"
)

// conditional returns a follow-up of task id expecting generation gen.
func conditional(id, msgID, text string, gen int64) *a2a.SendMessageRequest {
	m := a2a.UserMessage(text)
	m.TaskId = id
	if msgID != "" {
		m.MessageId = msgID
	}
	return &a2a.SendMessageRequest{Message: m, Configuration: &a2a.SendMessageConfiguration{IfGenerationMatch: &gen}}
}

// rawWire1_1 is a raw caller of s that asks for A2A 1.1 on every binding.
func rawWire1_1(s *testkit.Server) *wireServer {
	askGRPC := connect.UnaryInterceptorFunc(func(next connect.UnaryFunc) connect.UnaryFunc {
		return func(ctx context.Context, r connect.AnyRequest) (connect.AnyResponse, error) {
			r.Header().Set("A2A-Version", pversion.V11)
			return next(ctx, r)
		}
	})
	return &wireServer{url: s.URL, version: pversion.V11,
		grpc: a2aconnect.NewA2AServiceClient(testkit.H2CClient(), s.URL, connect.WithGRPC(), connect.WithInterceptors(askGRPC))}
}

// awaitingInput makes a task of generationAgent that waits for input at
// generation 5.
func awaitingInput(t *testing.T, ctx context.Context, c *client.Client) string {
	t.Helper()
	gens, id := streamGenerations(t, ctx, c, a2a.UserMessage("stream"))
	if len(gens) != 5 || gens[4] != 5 {
		t.Fatalf("the task's stream: generations %v, want 1…5", gens)
	}
	return id
}

// onEachStoreAndBinding runs fn on each binding, with a 1.1 client of it,
// against a server of generationAgent with the 1.1 preview on, on each
// store, with a guard on its calls.
func onEachStoreAndBinding(t *testing.T, fn func(t *testing.T, ctx context.Context, s *testkit.Server, f client.TransportFactory, c11 *client.Client)) {
	for _, st := range scopeStores {
		t.Run(st.name, func(t *testing.T) {
			s := startGenerationServer(t, st.open(t), true)
			for _, b := range scopeBindings {
				t.Run(b.name, func(t *testing.T) {
					ctx, cancel := context.WithTimeout(context.Background(), guard)
					defer cancel()
					fn(t, ctx, s, b.f(), versionClient(t, s, b.f(), pversion.V11))
				})
			}
		})
	}
}

func TestConditionalSendOverTheWire(t *testing.T) {
	onEachStoreAndBinding(t, func(t *testing.T, ctx context.Context, s *testkit.Server, f client.TransportFactory, c11 *client.Client) {
		w, binding := rawWire1_1(s), f.Binding
		id := awaitingInput(t, ctx, c11)
		before, err := c11.GetTask(ctx, &a2a.GetTaskRequest{Id: id})
		if err != nil {
			t.Fatal(err)
		}

		// A stale expectation: refused in the binding's shape,
		// nothing written.
		o := w.call(t, binding, a2a.MethodSendMessage, conditional(id, "m-"+binding, "go on", 4))
		o.wantCode(t, "stale send", binding, a2a.CodeTaskGenerationMismatch)
		want := map[string]string{"taskId": id, "expectedGeneration": "4", "currentGeneration": "5"}
		if o.reason != "TASK_GENERATION_MISMATCH" || o.domain != a2a.DomainA2A || !maps.Equal(o.meta, want) {
			t.Errorf("stale send: ErrorInfo %q in %q, metadata %v; want TASK_GENERATION_MISMATCH in %s, %v",
				o.reason, o.domain, o.meta, a2a.DomainA2A, want)
		}
		if binding == a2a.BindingHTTPJSON && o.name != "ABORTED 409" {
			t.Errorf("stale send: HTTP+JSON error body status and code %q, want ABORTED 409", o.name)
		}
		after, err := c11.GetTask(ctx, &a2a.GetTaskRequest{Id: id})
		if err != nil || after.GetGeneration() != 5 || len(after.GetHistory()) != len(before.GetHistory()) ||
			after.GetStatus().GetState() != a2a.TaskState_TASK_STATE_INPUT_REQUIRED {
			t.Fatalf("after the refusal: generation %d, %d history messages (was %d), %s, %v; want it unchanged",
				after.GetGeneration(), len(after.GetHistory()), len(before.GetHistory()), after.GetStatus().GetState(), err)
		}

		// The Go client's error: the sentinel and both generations.
		_, err = c11.SendMessage(ctx, conditional(id, "m2-"+binding, "go on", 7))
		if exp, cur, ok := a2a.MismatchedGenerations(err); !errors.Is(err, a2a.ErrTaskGenerationMismatch) || !ok || exp != 7 || cur != 5 {
			t.Errorf("client: %v (%d, %d, %v); want TaskGenerationMismatchError expecting 7 at 5", err, exp, cur, ok)
		}
		// On a stream, the refusal is the stream's error.
		for _, err := range c11.SendStreamingMessage(ctx, conditional(id, "m3-"+binding, "go on", 3)) {
			if !errors.Is(err, a2a.ErrTaskGenerationMismatch) {
				t.Errorf("stream: %v, want TaskGenerationMismatchError", err)
			}
			break
		}

		// The refused messageId, sent again with the current
		// generation, is a new message: accepted. The message is
		// generation 6 (its timeline entry); the agent's WORKING
		// (7), artifact (8) and COMPLETED (9) follow.
		resp, err := c11.SendMessage(ctx, conditional(id, "m-"+binding, "go on", 5))
		if err != nil || resp.GetTask().GetStatus().GetState() != a2a.TaskState_TASK_STATE_COMPLETED || resp.GetTask().GetGeneration() != 9 {
			t.Fatalf("matching send with the refused messageId: %v, %v; want COMPLETED at generation 9", resp, err)
		}
		hist := resp.GetTask().GetHistory()
		if n := len(hist); n != len(before.GetHistory())+1 || hist[n-1].GetMessageId() != "m-"+binding {
			t.Errorf("history after the accepted send: %d messages, last %q; want one more, m-%s", n, hist[n-1].GetMessageId(), binding)
		}

		// A conditional stream: the task as accepted (still
		// INPUT_REQUIRED, with the message at generation 6) first.
		id2 := awaitingInput(t, ctx, c11)
		var first *a2a.StreamResponse
		for ev, err := range c11.SendStreamingMessage(ctx, conditional(id2, "", "go on", 5)) {
			if err != nil {
				t.Fatalf("conditional stream: %v", err)
			}
			if first == nil {
				first = ev.Response
			}
		}
		if tk := first.GetTask(); tk.GetGeneration() != 6 || tk.GetStatus().GetState() != a2a.TaskState_TASK_STATE_INPUT_REQUIRED {
			t.Errorf("conditional stream's first event: %v; want the task INPUT_REQUIRED at generation 6", first)
		}

		// Ignored on a message that makes a task.
		gen := int64(42)
		resp, err = c11.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("stream"),
			Configuration: &a2a.SendMessageConfiguration{IfGenerationMatch: &gen}})
		if err != nil || resp.GetTask().GetGeneration() != 5 {
			t.Errorf("new task with ifGenerationMatch 42: %v, %v; want it made (generation 5)", resp, err)
		}
	})
}

// TestConditionalSendRace: N sends expecting the same generation of one
// task, at once, on one binding each in turn: exactly one is accepted,
// every other is refused with the generation its winner moved the task
// to.
func TestConditionalSendRace(t *testing.T) {
	const n = 8
	onEachStoreAndBinding(t, func(t *testing.T, ctx context.Context, _ *testkit.Server, _ client.TransportFactory, c11 *client.Client) {
		for round := range 3 {
			id := awaitingInput(t, ctx, c11)
			errs := make([]error, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					_, errs[i] = c11.SendMessage(ctx, conditional(id, "", "go on "+strconv.Itoa(i), 5))
				})
			}
			wg.Wait()
			won := 0
			for i, err := range errs {
				switch exp, cur, _ := a2a.MismatchedGenerations(err); {
				case err == nil:
					won++
				case !errors.Is(err, a2a.ErrTaskGenerationMismatch) || exp != 5 || cur < 6:
					t.Errorf("round %d, send %d: %v (expected %d, current %d); want a mismatch past 5", round, i, err, exp, cur)
				}
			}
			if won != 1 {
				t.Errorf("round %d: %d of %d sends accepted, want exactly 1", round, won, n)
			}
			tk, err := c11.GetTask(ctx, &a2a.GetTaskRequest{Id: id})
			if err != nil || tk.GetGeneration() != 9 || len(tk.GetHistory()) != 3 {
				// history: the first message, "more?" (INPUT_REQUIRED's), the winner's message, nothing else
				t.Errorf("round %d: the task at generation %d with %d history messages, %v; want 9 and 3",
					round, tk.GetGeneration(), len(tk.GetHistory()), err)
			}
		}
	})
}

// TestConditionalSendIgnoredIn1_0: a 1.0 caller's ifGenerationMatch is a
// member 1.0 does not know, cleared before the core reads it: a follow-up
// expecting any generation is taken as an ordinary one.
func TestConditionalSendIgnoredIn1_0(t *testing.T) {
	s := startGenerationServer(t, nil, true)
	for _, b := range scopeBindings {
		t.Run(b.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), guard)
			defer cancel()
			c11 := versionClient(t, s, b.f(), pversion.V11)
			c10 := versionClient(t, s, b.f(), a2a.ProtocolVersion)
			id := awaitingInput(t, ctx, c11)
			resp, err := c10.SendMessage(ctx, conditional(id, "", "go on", 999))
			if err != nil || resp.GetTask().GetStatus().GetState() != a2a.TaskState_TASK_STATE_COMPLETED {
				t.Fatalf("1.0 follow-up with ifGenerationMatch 999: %v, %v; want it taken", resp, err)
			}
			// An ordinary follow-up: its message (6), WORKING (7), the
			// artifact (8), COMPLETED (9).
			if tk, err := c11.GetTask(ctx, &a2a.GetTaskRequest{Id: id}); err != nil || tk.GetGeneration() != 9 {
				t.Errorf("after the 1.0 follow-up: generation %d, %v; want 9", tk.GetGeneration(), err)
			}
		})
	}
}
