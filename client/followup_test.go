package client_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
	"parley.dev/parley/internal/agents"
	"parley.dev/parley/internal/testkit"
	"parley.dev/parley/server"
)

// slowFollowUps is the conformance agent, except that it answers a
// follow-up on an interrupted task only after a pause, without reporting
// WORKING first, so the task keeps its old status while the agent thinks.
// The follow-up's text is "VERB MS": "done" completes with the echo,
// "again" asks for more input with a new status message, "bare" asks with
// no status message.
func slowFollowUps(ctx context.Context, req *server.Request, em *server.Emitter) error {
	if req.Task == nil || !a2a.IsInterrupted(req.Task.GetStatus().GetState()) {
		return agents.Conformance().Execute(ctx, req, em)
	}
	verb, arg, _ := strings.Cut(a2a.FirstText(req.Message), " ")
	ms, _ := strconv.Atoi(arg)
	select {
	case <-ctx.Done():
		return nil
	case <-time.After(time.Duration(ms) * time.Millisecond):
	}
	switch verb {
	case "again":
		return em.StatusText(a2a.TaskState_TASK_STATE_INPUT_REQUIRED, "and one more thing?")
	case "bare":
		return em.Status(a2a.TaskState_TASK_STATE_INPUT_REQUIRED, nil)
	}
	if err := em.Artifact(a2a.TextArtifact("echo", verb)); err != nil {
		return err
	}
	return em.Status(a2a.TaskState_TASK_STATE_COMPLETED, nil)
}

// followUpCase is one way of answering a follow-up, and what
// WaitForCompletion must return for it.
type followUpCase struct {
	name     string
	text     string
	state    a2a.TaskState
	question string // the status message WaitForCompletion's task must carry ("" for none)
	slow     bool   // the agent pauses: WaitForCompletion must wait
}

var followUpCases = []followUpCase{
	{name: "completes after 300ms", text: "done 300", state: a2a.TaskState_TASK_STATE_COMPLETED, slow: true},
	{name: "completes at once", text: "done 0", state: a2a.TaskState_TASK_STATE_COMPLETED},
	{name: "asks again after 300ms", text: "again 300", state: a2a.TaskState_TASK_STATE_INPUT_REQUIRED, question: "and one more thing?", slow: true},
	{name: "asks again at once", text: "again 0", state: a2a.TaskState_TASK_STATE_INPUT_REQUIRED, question: "and one more thing?"},
	{name: "asks bare after 300ms", text: "bare 300", state: a2a.TaskState_TASK_STATE_INPUT_REQUIRED, slow: true},
}

// TestWaitAfterFollowUp: after a follow-up sent with returnImmediately (or
// a follow-up stream left after its first event), WaitForCompletion
// returns the agent's answer, never the INPUT_REQUIRED that asked for it;
// on every binding, streaming and polling.
func TestWaitAfterFollowUp(t *testing.T) {
	t.Parallel()
	noStream := func(card *a2a.AgentCard, _ *server.Options) { card.Capabilities.Streaming = ptr(false) }
	modes := []struct {
		name   string
		mutate func(*a2a.AgentCard, *server.Options)
		stream bool // the follow-up is sent with SendStreamingMessage
	}{
		{name: "subscribe"},
		{name: "poll", mutate: noStream},
		{name: "follow-up stream", stream: true},
	}
	for _, b := range bindings {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			for _, mode := range modes {
				t.Run(mode.name, func(t *testing.T) {
					t.Parallel()
					s := testkit.StartServer(t, &testkit.Options{Agent: server.AgentFunc(slowFollowUps), Mutate: mode.mutate, Quiet: true})
					e := &env{t: t, url: s.URL, card: s.Card, srv: s.Core}
					for _, tc := range followUpCases {
						t.Run(tc.name, func(t *testing.T) {
							t.Parallel()
							c := e.client(b, &client.Options{PollInterval: 20 * time.Millisecond})
							checkWaitAfterFollowUp(t, c, tc, mode.stream)
						})
					}
				})
			}
		})
	}
}

// checkWaitAfterFollowUp parks a task in INPUT_REQUIRED, sends the
// follow-up tc.text without waiting for it, and checks what
// WaitForCompletion returns.
func checkWaitAfterFollowUp(t *testing.T, c *client.Client, tc followUpCase, stream bool) {
	ctx, cancel := context.WithTimeout(testCtx(t), 10*time.Second)
	defer cancel()
	asked := send(t, c, "input-required", nil)
	if asked.GetStatus().GetState() != a2a.TaskState_TASK_STATE_INPUT_REQUIRED {
		t.Fatalf("SendMessage(input-required) = %v, want INPUT_REQUIRED", asked.GetStatus())
	}
	m := a2a.UserMessage(tc.text)
	m.TaskId = asked.Id
	sent := time.Now()
	var first *a2a.Task
	if stream {
		// The naive consumer: it stops at the first event, which still
		// says INPUT_REQUIRED.
		for ev, err := range c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: m}) {
			if err != nil {
				t.Fatalf("SendStreamingMessage(%q) = %v", tc.text, err)
			}
			first = ev.Response.GetTask()
			break
		}
	} else {
		resp, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: m,
			Configuration: &a2a.SendMessageConfiguration{ReturnImmediately: true}})
		if err != nil {
			t.Fatalf("SendMessage(%q) = %v", tc.text, err)
		}
		first = resp.GetTask()
	}
	if tc.slow && first.GetStatus().GetState() != a2a.TaskState_TASK_STATE_INPUT_REQUIRED {
		t.Fatalf("follow-up answered with %v, want the task still INPUT_REQUIRED (the agent is pausing)", first.GetStatus())
	}
	got, err := c.WaitForCompletion(ctx, asked.Id)
	if err != nil || got.GetStatus().GetState() != tc.state {
		t.Fatalf("WaitForCompletion = %v, %v; want %v", got.GetStatus(), err, tc.state)
	}
	if tc.slow && time.Since(sent) < 250*time.Millisecond {
		t.Errorf("WaitForCompletion returned %v after %v, before the agent answered", got.GetStatus(), time.Since(sent))
	}
	if q := a2a.FirstText(got.GetStatus().GetMessage()); tc.question != "" && q != tc.question {
		t.Errorf("WaitForCompletion status message = %q, want %q", q, tc.question)
	}
	// The answer is a later status than the question: a later timestamp
	// or, within the same millisecond (the timestamps' precision), a new
	// status message.
	gotAt, askedAt := got.GetStatus().GetTimestamp().AsTime(), asked.GetStatus().GetTimestamp().AsTime()
	newMessage := got.GetStatus().GetMessage().GetMessageId() != asked.GetStatus().GetMessage().GetMessageId()
	if !gotAt.After(askedAt) && !(gotAt.Equal(askedAt) && newMessage) {
		t.Errorf("WaitForCompletion status at %v (message %q), not after the question at %v (message %q)",
			gotAt, got.GetStatus().GetMessage().GetMessageId(), askedAt, asked.GetStatus().GetMessage().GetMessageId())
	}
}

// TestWaitForCompletionRepeats: once the answer to a follow-up was seen,
// waiting again returns at once.
func TestWaitForCompletionRepeats(t *testing.T) {
	t.Parallel()
	s := testkit.StartServer(t, &testkit.Options{Agent: server.AgentFunc(slowFollowUps), Quiet: true})
	e := &env{t: t, url: s.URL, card: s.Card, srv: s.Core}
	c := e.client(bindings[0], nil)
	checkWaitAfterFollowUp(t, c, followUpCase{text: "again 100", state: a2a.TaskState_TASK_STATE_INPUT_REQUIRED, question: "and one more thing?", slow: false}, false)
	ctx, cancel := context.WithTimeout(testCtx(t), time.Second)
	defer cancel()
	tasks, err := c.ListTasks(ctx, &a2a.ListTasksRequest{})
	if err != nil || len(tasks.GetTasks()) != 1 {
		t.Fatalf("ListTasks = %v, %v; want one task", tasks, err)
	}
	got, err := c.WaitForCompletion(ctx, tasks.GetTasks()[0].GetId())
	if err != nil || got.GetStatus().GetState() != a2a.TaskState_TASK_STATE_INPUT_REQUIRED {
		t.Fatalf("WaitForCompletion again = %v, %v; want INPUT_REQUIRED at once", got.GetStatus(), err)
	}
}

// TestFollowUpStreamEnds: a follow-up stream that ends right after its
// first event, the task still in the INPUT_REQUIRED that asked for the
// follow-up, ended too early; one that ends after a new INPUT_REQUIRED
// ended properly.
func TestFollowUpStreamEnds(t *testing.T) {
	t.Parallel()
	const (
		asking = `{"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_INPUT_REQUIRED"}}}`
	)
	cases := []struct {
		name   string
		events []string
		ended  bool
	}{
		{name: "snapshot only", events: []string{asking}, ended: true},
		{name: "asked again", events: []string{asking, inputStatus}},
		{name: "completed", events: []string{asking, doneStatus}},
	}
	for _, b := range bindings[:2] { // SSE framing
		for _, tc := range cases {
			t.Run(b.name+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				c := fakeClient(t, b, fake{rpc: b.name == a2a.BindingJSONRPC, events: tc.events})
				m := a2a.UserMessage("yes")
				m.TaskId = "t1"
				evs, err := testkit.Collect(c.SendStreamingMessage(testCtx(t), &a2a.SendMessageRequest{Message: m}))
				if got := errors.Is(err, client.ErrStreamEnded); got != tc.ended || len(evs) != len(tc.events) {
					t.Fatalf("follow-up stream = %d events, %v; want %d events, ended early %v", len(evs), err, len(tc.events), tc.ended)
				}
			})
		}
	}
}
