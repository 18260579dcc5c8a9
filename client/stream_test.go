package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
	"parley.dev/parley/internal/agents"
	"parley.dev/parley/internal/testkit"
)

// TestStreams runs both streaming operations against Parley on both
// bindings.
func TestStreams(t *testing.T) {
	t.Parallel()
	for _, b := range bindings {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			e := start(t, config{})
			c := e.client(b, nil)

			for _, tc := range []struct {
				name string
				run  func(t *testing.T, b binding, c *client.Client)
			}{
				{"chunks", streamChunks},
				{"message", streamMessage},
				{"input required", streamInputRequired},
				{"break", streamBreak},
				{"subscribe", streamSubscribe},
				{"cancel", streamCancel},
				{"context canceled", streamContextCanceled},
			} {
				t.Run(tc.name, func(t *testing.T) {
					t.Parallel()
					tc.run(t, b, c)
				})
			}
		})
	}
}

// streamChunks: a stream of artifact chunks arrives whole, in order,
// numbered from 1 on every binding.
func streamChunks(t *testing.T, b binding, c *client.Client) {
	evs, err := testkit.Collect(c.SendStreamingMessage(testCtx(t), &a2a.SendMessageRequest{Message: a2a.UserMessage("stream 3")}))
	if err != nil {
		t.Fatalf("SendStreamingMessage(stream 3) error = %v", err)
	}
	got := testkit.Kinds(evs)
	want := []string{"artifact:chunk 0", "artifact:chunk 1", "artifact:chunk 2", "status:TASK_STATE_COMPLETED"}
	if len(got) < 5 || !strings.HasPrefix(got[0], "task:") || !slices.Equal(got[len(got)-4:], want) {
		t.Fatalf("events = %q, want a task, ..., then %q", got, want)
	}
	// Every binding numbers the events: SSE by id:, gRPC by the
	// first-event-id response metadata.
	for i := range evs {
		if evs[i].Seq != uint64(i+1) {
			t.Fatalf("event %d has sequence number %d, want %d", i, evs[i].Seq, i+1)
		}
	}
	a := evs[len(evs)-2].Response.GetArtifactUpdate()
	if !a.GetAppend() || !a.GetLastChunk() || a.GetArtifact().GetArtifactId() != "stream" {
		t.Errorf("last chunk = %v, want append and lastChunk on artifact stream", a)
	}
}

// streamMessage: a direct reply is a stream of one message.
func streamMessage(t *testing.T, b binding, c *client.Client) {
	evs, err := testkit.Collect(c.SendStreamingMessage(testCtx(t), &a2a.SendMessageRequest{Message: a2a.UserMessage("message")}))
	if err != nil || !slices.Equal(testkit.Kinds(evs), []string{"message:pong"}) {
		t.Fatalf("SendStreamingMessage(message) = %q, %v; want one message pong", testkit.Kinds(evs), err)
	}
}

// streamInputRequired: a stream ends properly at INPUT_REQUIRED, and a
// follow-up on the same task completes it.
func streamInputRequired(t *testing.T, b binding, c *client.Client) {
	ctx := testCtx(t)
	evs, err := testkit.Collect(c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("input-required")}))
	if err != nil {
		t.Fatalf("SendStreamingMessage(input-required) error = %v, want a proper end", err)
	}
	got := testkit.Kinds(evs)
	if got[len(got)-1] != "status:TASK_STATE_INPUT_REQUIRED" {
		t.Fatalf("events = %q, want to end at INPUT_REQUIRED", got)
	}
	// The follow-up on the same task completes it.
	m := a2a.UserMessage("more")
	m.TaskId = evs[0].Response.GetTask().GetId()
	evs, err = testkit.Collect(c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: m}))
	got = testkit.Kinds(evs)
	if err != nil || got[len(got)-1] != "status:TASK_STATE_COMPLETED" || !slices.Contains(got, "artifact:more") {
		t.Fatalf("follow-up stream = %q, %v; want the echo and COMPLETED", got, err)
	}
}

// streamBreak: the consumer stops a stream that stays open by breaking out
// of the loop.
func streamBreak(t *testing.T, b binding, c *client.Client) {
	// Parley keeps a stream open through AUTH_REQUIRED
	// (docs/decisions.md#b2); the consumer stops it by breaking out of
	// the loop.
	var got []string
	for ev, err := range c.SendStreamingMessage(testCtx(t), &a2a.SendMessageRequest{Message: a2a.UserMessage("auth-required")}) {
		if err != nil {
			t.Fatalf("error = %v", err)
		}
		got = append(got, testkit.Kinds([]a2a.StreamEvent{ev})...)
		if ev.Response.GetStatusUpdate().GetStatus().GetState() == a2a.TaskState_TASK_STATE_AUTH_REQUIRED {
			break
		}
	}
	if got[len(got)-1] != "status:TASK_STATE_AUTH_REQUIRED" {
		t.Fatalf("events = %q", got)
	}
}

// streamSubscribe: a subscription to a running task goes from its snapshot
// to COMPLETED.
func streamSubscribe(t *testing.T, b binding, c *client.Client) {
	task := send(t, c, "slow 300", &a2a.SendMessageConfiguration{ReturnImmediately: true})
	evs, err := testkit.Collect(c.SubscribeToTask(testCtx(t), &a2a.SubscribeToTaskRequest{Id: task.Id}))
	got := testkit.Kinds(evs)
	if err != nil || len(got) < 2 || got[0] != "task:TASK_STATE_WORKING" || got[len(got)-1] != "status:TASK_STATE_COMPLETED" {
		t.Fatalf("SubscribeToTask = %q, %v; want a WORKING snapshot ... COMPLETED", got, err)
	}
}

// streamCancel: canceling the task ends its subscription at CANCELED.
func streamCancel(t *testing.T, b binding, c *client.Client) {
	ctx := testCtx(t)
	task := send(t, c, "slow 10000", &a2a.SendMessageConfiguration{ReturnImmediately: true})
	var got []string
	for ev, err := range c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{Id: task.Id}) {
		if err != nil {
			t.Fatalf("SubscribeToTask error = %v", err)
		}
		got = append(got, testkit.Kinds([]a2a.StreamEvent{ev})...)
		if ev.Response.GetTask() != nil {
			if _, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{Id: task.Id}); err != nil {
				t.Fatalf("CancelTask = %v", err)
			}
		}
	}
	if got[len(got)-1] != "status:TASK_STATE_CANCELED" {
		t.Fatalf("events = %q, want to end at CANCELED", got)
	}
}

// streamContextCanceled: canceling the context stops a subscription at
// once, with context.Canceled.
func streamContextCanceled(t *testing.T, b binding, c *client.Client) {
	task := send(t, c, "slow 10000", &a2a.SendMessageConfiguration{ReturnImmediately: true})
	ctx, cancel := context.WithCancel(testCtx(t))
	defer cancel()
	n := 0
	var last error
	start := time.Now()
	for _, err := range c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{Id: task.Id}) {
		n++
		last = err
		cancel()
	}
	if n != 2 || !errors.Is(last, context.Canceled) {
		t.Fatalf("got %d items, last error %v; want the snapshot then context.Canceled", n, last)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the stream took %v to stop", d)
	}
}

// fake is a hand-written server for one binding that answers every
// streaming call with the given SSE body (events are StreamResponse JSON,
// or "!" followed by a raw SSE block). abort cuts the connection after
// writing the body.
type fake struct {
	rpc    bool
	events []string
	abort  bool
}

func (f fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var env struct {
		ID json.RawMessage `json:"id"`
	}
	body, _ := io.ReadAll(r.Body)
	json.Unmarshal(body, &env)
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(200)
	for i, ev := range f.events {
		if raw, ok := strings.CutPrefix(ev, "!"); ok {
			io.WriteString(w, raw)
			continue
		}
		if f.rpc {
			ev = `{"jsonrpc":"2.0","id":` + string(env.ID) + `,"result":` + ev + `}`
		}
		fmt.Fprintf(w, ": keep-alive\n\nid: %d\nevent: message\ndata: %s\n\n", i+1, ev)
	}
	w.(http.Flusher).Flush()
	if f.abort {
		panic(http.ErrAbortHandler)
	}
}

// fakeClient returns a client for one binding of a fake server, which
// neither retries nor resumes.
func fakeClient(t *testing.T, b binding, h http.Handler) *client.Client {
	t.Helper()
	return fakeClientOpts(t, b, h, client.Options{Retries: -1, Resumes: -1})
}

// fakeClientOpts is fakeClient with options.
func fakeClientOpts(t *testing.T, b binding, h http.Handler, o client.Options) *client.Client {
	t.Helper()
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	card, _ := agents.Card("echo", []*a2a.AgentInterface{{Url: hs.URL, ProtocolBinding: b.name, ProtocolVersion: "1.0"}})
	c, err := client.New(card, &o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

const (
	workingTask = `{"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_WORKING"}}}`
	inputStatus = `{"statusUpdate":{"taskId":"t1","contextId":"c1","status":{"state":"TASK_STATE_INPUT_REQUIRED"}}}`
	authStatus  = `{"statusUpdate":{"taskId":"t1","contextId":"c1","status":{"state":"TASK_STATE_AUTH_REQUIRED"}}}`
	doneStatus  = `{"statusUpdate":{"taskId":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED"}}}`
)

// TestStreamEnds checks how streams that end early or break are reported.
func TestStreamEnds(t *testing.T) {
	t.Parallel()
	for _, b := range bindings[:2] { // SSE framing; gRPC: TestGRPCStreamEnds
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			for _, tc := range streamEndCases() {
				if (tc.restOnly && b.name != a2a.BindingHTTPJSON) || (tc.rpcOnly && b.name != a2a.BindingJSONRPC) {
					continue
				}
				t.Run(tc.name, func(t *testing.T) {
					t.Parallel()
					checkStreamEnd(t, b, tc)
				})
			}
		})
	}
}

// streamEnd is how a stream ended, as the client reported it.
type streamEnd struct {
	events int
	ended  bool // a *StreamEndedError
	state  a2a.TaskState
	cut    bool // ... wrapping a TransportError
	code   a2a.Code
}

// streamEndCase is a stream a fake server sends, and how it must end.
type streamEndCase struct {
	name      string
	subscribe bool
	events    []string
	restOnly  bool
	rpcOnly   bool
	abort     bool
	want      streamEnd
}

// streamEndCases are streams that end properly, early or broken.
func streamEndCases() []streamEndCase {
	return []streamEndCase{
		{name: "send closed while working", events: []string{workingTask},
			want: streamEnd{events: 1, ended: true, state: a2a.TaskState_TASK_STATE_WORKING}},
		{name: "send closed with no event",
			want: streamEnd{ended: true}},
		{name: "send at input required", events: []string{workingTask, inputStatus},
			want: streamEnd{events: 2}},
		{name: "send at auth required", events: []string{workingTask, authStatus},
			want: streamEnd{events: 2}},
		{name: "send completed", events: []string{workingTask, doneStatus},
			want: streamEnd{events: 2}},
		{name: "subscribe at input required", subscribe: true, events: []string{workingTask, inputStatus},
			want: streamEnd{events: 2, ended: true, state: a2a.TaskState_TASK_STATE_INPUT_REQUIRED}},
		{name: "subscribe completed", subscribe: true, events: []string{workingTask, doneStatus},
			want: streamEnd{events: 2}},
		{name: "connection cut", events: []string{workingTask}, abort: true,
			want: streamEnd{events: 1, ended: true, cut: true, state: a2a.TaskState_TASK_STATE_WORKING}},
		{name: "REST error event", restOnly: true, events: []string{workingTask,
			"!event: error\ndata: {\"error\":{\"code\":404,\"status\":\"NOT_FOUND\",\"message\":\"gone\",\"details\":[{\"@type\":\"type.googleapis.com/google.rpc.ErrorInfo\",\"reason\":\"TASK_NOT_FOUND\",\"domain\":\"a2a-protocol.org\"}]}}\n\n"},
			want: streamEnd{events: 1, code: a2a.CodeTaskNotFound}},
		{name: "REST error without event name", restOnly: true, events: []string{workingTask,
			"!data: {\"error\":{\"code\":500,\"status\":\"INTERNAL\",\"message\":\"boom\"}}\n\n"},
			want: streamEnd{events: 1, code: a2a.CodeInternal}},
		{name: "JSON-RPC error envelope", rpcOnly: true, events: []string{workingTask,
			"!data: {\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32001,\"message\":\"gone\"}}\n\n"},
			want: streamEnd{events: 1, code: a2a.CodeTaskNotFound}},
		{name: "multi-line data and CRLF", events: []string{
			"!data: {\"task\":{\"id\":\"t1\",\"contextId\":\"c1\",\r\ndata: \"status\":{\"state\":\"TASK_STATE_COMPLETED\"}}}\r\n\r\n"},
			restOnly: true, want: streamEnd{events: 1}},
	}
}

// checkStreamEnd streams tc's events from a fake server of binding b and
// checks how the client reports the end.
func checkStreamEnd(t *testing.T, b binding, tc streamEndCase) {
	c := fakeClient(t, b, fake{rpc: b.name == a2a.BindingJSONRPC, events: tc.events, abort: tc.abort})
	ctx := testCtx(t)
	seq := c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("x")})
	if tc.subscribe {
		seq = c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{Id: "t1"})
	}
	evs, err := testkit.Collect(seq)
	var got streamEnd
	got.events = len(evs)
	var se *client.StreamEndedError
	if errors.As(err, &se) {
		got.ended, got.state = true, se.State
		if !errors.Is(err, client.ErrStreamEnded) {
			t.Errorf("errors.Is(%v, ErrStreamEnded) = false", err)
		}
		if tc.want.events > 0 && se.TaskID != "t1" {
			t.Errorf("TaskID = %q, want t1", se.TaskID)
		}
		var te *client.TransportError
		got.cut = errors.As(err, &te)
	} else if err != nil {
		var ae *a2a.Error
		if !errors.As(err, &ae) {
			t.Fatalf("error = %v (%T)", err, err)
		}
		got.code = ae.Code
	}
	if got != tc.want {
		t.Fatalf("got %+v (err %v), want %+v", got, err, tc.want)
	}
}
