package client_test

import (
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
	"parley.dev/parley/internal/testkit"
)

// TestResume: a task stream broken after its first event goes on as a
// SubscribeToTask after the last event received, on every binding, and the
// caller sees every event of the log once, in order, whatever way the
// stream broke.
func TestResume(t *testing.T) {
	t.Parallel()
	for _, b := range bindings {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			for _, tc := range []struct {
				name  string
				f     *resumeFake
				sub   bool // SubscribeToTask instead of SendStreamingMessage
				calls []string
			}{
				{name: "cut every 3 events", f: &resumeFake{per: 3},
					calls: []string{"SendStreamingMessage", "SubscribeToTask@3", "SubscribeToTask@6", "SubscribeToTask@9"}},
				{name: "cut every event", f: &resumeFake{per: 1},
					calls: subscribes("SendStreamingMessage", 1, 12)},
				{name: "server repeats events", f: &resumeFake{per: 4, overlap: 2},
					calls: []string{"SendStreamingMessage", "SubscribeToTask@4", "SubscribeToTask@6", "SubscribeToTask@8", "SubscribeToTask@10"}},
				{name: "ended early, unavailable", f: &resumeFake{per: 5, ended: "UNAVAILABLE"},
					calls: []string{"SendStreamingMessage", "SubscribeToTask@5", "SubscribeToTask@10"}},
				{name: "ended early, internal (older servers)", f: &resumeFake{per: 5, ended: "INTERNAL"},
					calls: []string{"SendStreamingMessage", "SubscribeToTask@5", "SubscribeToTask@10"}},
				{name: "subscription", sub: true, f: &resumeFake{per: 4},
					calls: subscribes("SubscribeToTask@0", 4, 12)},
			} {
				t.Run(tc.name, func(t *testing.T) {
					t.Parallel()
					f := tc.f
					f.log = chunkLog(10, a2a.TaskState_TASK_STATE_COMPLETED)
					var resumes atomic.Int64
					c := resumeClient(t, b, f, client.Options{OnResume: func(id string, after uint64, cause error) {
						if id != "t1" || after == 0 || cause == nil {
							t.Errorf("OnResume(%q, %d, %v), want task t1, a position and a cause", id, after, cause)
						}
						resumes.Add(1)
					}})
					ctx := testCtx(t)
					seq := c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("x")})
					if tc.sub {
						seq = c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{Id: "t1"})
					}
					evs, err := testkit.Collect(seq)
					if err != nil {
						t.Fatalf("stream error = %v, want none", err)
					}
					checkWholeLog(t, evs, len(f.log))
					if got := f.requests(); !slices.Equal(got, tc.calls) {
						t.Errorf("calls = %q, want %q", got, tc.calls)
					}
					if int(resumes.Load()) != len(tc.calls)-1 {
						t.Errorf("OnResume called %d times, want %d", resumes.Load(), len(tc.calls)-1)
					}
				})
			}
		})
	}
}

// subscribes returns first, then SubscribeToTask calls resuming after
// step, 2*step, ... below end.
func subscribes(first string, step, end int) []string {
	calls := []string{first}
	for n := step; n < end; n += step {
		calls = append(calls, fmt.Sprintf("SubscribeToTask@%d", n))
	}
	return calls
}

// checkWholeLog checks that evs are events 1..n of the log, each once, in
// order, and that the artifact's chunks reassemble to the whole text.
func checkWholeLog(t *testing.T, evs []a2a.StreamEvent, n int) {
	t.Helper()
	if len(evs) != n {
		t.Fatalf("%d events (%q), want %d", len(evs), testkit.Kinds(evs), n)
	}
	var asm a2a.ArtifactAssembler
	for i, ev := range evs {
		if ev.Seq != uint64(i+1) {
			t.Fatalf("event %d has Seq %d, want %d (kinds %q)", i, ev.Seq, i+1, testkit.Kinds(evs))
		}
		asm.Add(ev)
	}
	var want string
	for i := range n - 2 {
		want += fmt.Sprintf("chunk %d", i)
	}
	if got := asm.Text("out"); got != want || !asm.Done("out") {
		t.Errorf("artifact text = %q (done %v), want %q, done", got, asm.Done("out"), want)
	}
}

// TestResumeLimits: what is not resumed, and how a stream that cannot be
// resumed ends.
func TestResumeLimits(t *testing.T) {
	t.Parallel()
	for _, b := range bindings {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			t.Run("disabled", func(t *testing.T) {
				t.Parallel()
				f := &resumeFake{log: chunkLog(5, a2a.TaskState_TASK_STATE_COMPLETED), per: 3}
				c := resumeClient(t, b, f, client.Options{Resumes: -1})
				evs, err := testkit.Collect(c.SendStreamingMessage(testCtx(t), &a2a.SendMessageRequest{Message: a2a.UserMessage("x")}))
				checkCut(t, evs, err, 3, a2a.TaskState_TASK_STATE_WORKING)
				if got := f.requests(); len(got) != 1 {
					t.Errorf("calls = %q, want only the send", got)
				}
			})
			t.Run("break before any event", func(t *testing.T) {
				t.Parallel()
				f := &resumeFake{log: chunkLog(5, a2a.TaskState_TASK_STATE_COMPLETED), per: 0}
				c := resumeClient(t, b, f, client.Options{Retries: -1})
				evs, err := testkit.Collect(c.SendStreamingMessage(testCtx(t), &a2a.SendMessageRequest{Message: a2a.UserMessage("x")}))
				var te *client.TransportError
				if len(evs) != 0 || !errors.As(err, &te) || errors.Is(err, client.ErrStreamEnded) {
					t.Errorf("%d events, error %v; want none and the TransportError itself", len(evs), err)
				}
				if got := f.requests(); len(got) != 1 {
					t.Errorf("calls = %q, want only the send", got)
				}
			})
			t.Run("attempts bounded", func(t *testing.T) {
				t.Parallel()
				// Every resumed call breaks before its first event: no
				// progress, so the attempts run out.
				f := &resumeFake{log: chunkLog(5, a2a.TaskState_TASK_STATE_COMPLETED), per: 2, drop: true}
				var resumes atomic.Int64
				c := resumeClient(t, b, f, client.Options{Resumes: 3, OnResume: func(string, uint64, error) { resumes.Add(1) }})
				evs, err := testkit.Collect(c.SendStreamingMessage(testCtx(t), &a2a.SendMessageRequest{Message: a2a.UserMessage("x")}))
				checkCut(t, evs, err, 2, a2a.TaskState_TASK_STATE_WORKING)
				want := []string{"SendStreamingMessage", "SubscribeToTask@2", "SubscribeToTask@2", "SubscribeToTask@2"}
				if got := f.requests(); !slices.Equal(got, want) || resumes.Load() != 3 {
					t.Errorf("calls = %q, OnResume %d times; want %q, 3 times", got, resumes.Load(), want)
				}
			})
			t.Run("server without resume", func(t *testing.T) {
				t.Parallel()
				// It answers the resume with a fresh subscription, starting
				// over: the client cannot go on without a gap, and says so.
				f := &resumeFake{log: chunkLog(5, a2a.TaskState_TASK_STATE_COMPLETED), per: 3, restart: true}
				c := resumeClient(t, b, f, client.Options{})
				evs, err := testkit.Collect(c.SendStreamingMessage(testCtx(t), &a2a.SendMessageRequest{Message: a2a.UserMessage("x")}))
				var se *client.StreamEndedError
				if len(evs) != 3 || !errors.As(err, &se) || se.TaskID != "t1" {
					t.Errorf("%d events, error %v; want 3, then a StreamEndedError", len(evs), err)
				}
				if got := f.requests(); len(got) != 2 {
					t.Errorf("calls = %q, want the send and one resume", got)
				}
			})
			t.Run("interrupted task not resumed", func(t *testing.T) {
				t.Parallel()
				log := chunkLog(1, a2a.TaskState_TASK_STATE_INPUT_REQUIRED)
				log = append(log, log[0]) // a later event the cut keeps from the client
				f := &resumeFake{log: log, per: 3}
				c := resumeClient(t, b, f, client.Options{})
				evs, err := testkit.Collect(c.SubscribeToTask(testCtx(t), &a2a.SubscribeToTaskRequest{Id: "t1"}))
				checkCut(t, evs, err, 3, a2a.TaskState_TASK_STATE_INPUT_REQUIRED)
				if got := f.requests(); len(got) != 1 {
					t.Errorf("calls = %q, want only the subscription", got)
				}
			})
			t.Run("resume refused", func(t *testing.T) {
				t.Parallel()
				f := &resumeFake{log: chunkLog(5, a2a.TaskState_TASK_STATE_COMPLETED), per: 2,
					refuse: a2a.NewError(a2a.CodeTaskNotFound, "gone")}
				c := resumeClient(t, b, f, client.Options{})
				evs, err := testkit.Collect(c.SendStreamingMessage(testCtx(t), &a2a.SendMessageRequest{Message: a2a.UserMessage("x")}))
				if len(evs) != 2 || !isA2AError(err, a2a.CodeTaskNotFound) {
					t.Errorf("%d events, error %v; want 2, then TaskNotFoundError", len(evs), err)
				}
				if got, want := f.requests(), []string{"SendStreamingMessage", "SubscribeToTask@2"}; !slices.Equal(got, want) {
					t.Errorf("calls = %q, want %q", got, want)
				}
			})
			t.Run("ids that are not sequence numbers", func(t *testing.T) {
				t.Parallel()
				if b.name == a2a.BindingGRPC {
					t.Skip("gRPC events are numbered by the transport, from first-event-id")
				}
				// Another server's SSE ids: nothing is dropped, and a break
				// is not resumed.
				working := `{"statusUpdate":{"taskId":"t1","contextId":"c1","status":{"state":"TASK_STATE_WORKING"}}}`
				f := fake{rpc: b.name == a2a.BindingJSONRPC, abort: true, events: []string{
					"!id: 7\ndata: " + rpcWrap(b, workingTask) + "\n\n",
					"!id: 3\ndata: " + rpcWrap(b, working) + "\n\n"}}
				var resumes atomic.Int64
				c := fakeClientOpts(t, b, f, client.Options{OnResume: func(string, uint64, error) { resumes.Add(1) }})
				evs, err := testkit.Collect(c.SubscribeToTask(testCtx(t), &a2a.SubscribeToTaskRequest{Id: "t1"}))
				var se *client.StreamEndedError
				if len(evs) != 2 || !errors.As(err, &se) || resumes.Load() != 0 {
					t.Errorf("%d events, error %v, %d resumes; want 2, a StreamEndedError, none", len(evs), err, resumes.Load())
				}
			})
			t.Run("cut after the task settled", func(t *testing.T) {
				t.Parallel()
				// Every event arrived; only the stream's close was lost.
				f := &resumeFake{log: chunkLog(2, a2a.TaskState_TASK_STATE_COMPLETED), per: 10, cutAtEnd: true}
				c := resumeClient(t, b, f, client.Options{})
				evs, err := testkit.Collect(c.SendStreamingMessage(testCtx(t), &a2a.SendMessageRequest{Message: a2a.UserMessage("x")}))
				if err != nil || len(evs) != 4 {
					t.Errorf("%d events, error %v; want 4, no error", len(evs), err)
				}
				if got := f.requests(); len(got) != 1 {
					t.Errorf("calls = %q, want only the send", got)
				}
			})
			t.Run("resumed subscription cut after the task settled", func(t *testing.T) {
				t.Parallel()
				// The subscription breaks after the task's first event and
				// its first chunk; the one that carries it on delivers the
				// rest, COMPLETED included, and then breaks too: only its
				// close was lost, and the caller sees every event and no
				// error, not a broken stream. (A resumed send stops at
				// COMPLETED by itself, see below.)
				f := &resumeFake{log: chunkLog(2, a2a.TaskState_TASK_STATE_COMPLETED), per: 2, cutAtEnd: true}
				c := resumeClient(t, b, f, client.Options{})
				evs, err := testkit.Collect(c.SubscribeToTask(testCtx(t), &a2a.SubscribeToTaskRequest{Id: "t1"}))
				if err != nil || len(evs) != 4 || evs[3].State() != a2a.TaskState_TASK_STATE_COMPLETED {
					t.Errorf("%d events (%q), error %v; want 4 ending at COMPLETED, no error", len(evs), testkit.Kinds(evs), err)
				}
				if got, want := f.requests(), []string{a2a.MethodSubscribeToTask + "@0", a2a.MethodSubscribeToTask + "@2"}; !slices.Equal(got, want) {
					t.Errorf("calls = %q, want %q", got, want)
				}
			})
			t.Run("resumed send ends at input required", func(t *testing.T) {
				t.Parallel()
				// The subscription that carries the send on stays open at
				// INPUT_REQUIRED; the send would have closed: so does the
				// client.
				f := &resumeFake{log: chunkLog(3, a2a.TaskState_TASK_STATE_INPUT_REQUIRED), per: 2, hold: true}
				c := resumeClient(t, b, f, client.Options{})
				evs, err := testkit.Collect(c.SendStreamingMessage(testCtx(t), &a2a.SendMessageRequest{Message: a2a.UserMessage("x")}))
				if err != nil || len(evs) != 5 || evs[4].State() != a2a.TaskState_TASK_STATE_INPUT_REQUIRED {
					t.Errorf("%d events (%q), error %v; want 5 ending at INPUT_REQUIRED, no error", len(evs), testkit.Kinds(evs), err)
				}
			})
		})
	}
}

// checkCut checks that a stream yielded n events and then ended with a
// *StreamEndedError in state st wrapping a transport failure.
func checkCut(t *testing.T, evs []a2a.StreamEvent, err error, n int, st a2a.TaskState) {
	t.Helper()
	var se *client.StreamEndedError
	var te *client.TransportError
	if len(evs) != n || !errors.As(err, &se) || se.State != st || se.TaskID != "t1" || !errors.As(err, &te) {
		t.Errorf("%d events, error %v; want %d, then a cut StreamEndedError in %s", len(evs), err, n, st)
	}
}

// TestResumeByHand: SubscribeToTask with client.WithResumeAfter against a
// Parley server, on every binding: the events after the position, numbered
// as the server numbers them; at the end of a finished task, an empty
// stream and no error; a position beyond the task's end, InvalidParams.
func TestResumeByHand(t *testing.T) {
	t.Parallel()
	for _, b := range bindings {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			e := start(t, config{})
			c := e.client(b, nil)
			ctx := testCtx(t)
			all, err := testkit.Collect(c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("stream 3")}))
			if err != nil || len(all) != 6 {
				t.Fatalf("SendStreamingMessage(stream 3) = %d events, %v; want 6", len(all), err)
			}
			id, last := all[0].TaskID(), all[len(all)-1].Seq
			sub := func(after uint64) ([]a2a.StreamEvent, error) {
				return testkit.Collect(c.SubscribeToTask(client.WithResumeAfter(ctx, after), &a2a.SubscribeToTaskRequest{Id: id}))
			}
			evs, err := sub(2)
			if err != nil || len(evs) != 4 || evs[0].Seq != 3 || evs[3].Seq != last || evs[3].State() != a2a.TaskState_TASK_STATE_COMPLETED {
				t.Errorf("resume after 2: %q (first Seq %v), %v; want events 3..%d ending COMPLETED", testkit.Kinds(evs), seqs(evs), err, last)
			}
			if evs, err := sub(last); err != nil || len(evs) != 0 {
				t.Errorf("resume after the last event: %q, %v; want nothing, no error", testkit.Kinds(evs), err)
			}
			if _, err := sub(last + 5); !isA2AError(err, a2a.CodeInvalidParams) {
				t.Errorf("resume after %d (beyond the end): %v, want InvalidParamsError", last+5, err)
			}
		})
	}
}

// seqs returns the events' sequence numbers.
func seqs(evs []a2a.StreamEvent) []uint64 {
	out := make([]uint64, len(evs))
	for i, ev := range evs {
		out[i] = ev.Seq
	}
	return out
}

// rpcWrap wraps a stream event in a JSON-RPC response on that binding.
func rpcWrap(b binding, ev string) string {
	if b.name != a2a.BindingJSONRPC {
		return ev
	}
	return `{"jsonrpc":"2.0","id":1,"result":` + ev + `}`
}
