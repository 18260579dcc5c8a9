package server_test

// Unit tests of the binding-free core: every test calls the a2a.Service
// methods of a server.Server in-process, with a real store. This file holds
// the helpers the tests share; each other file tests one topic.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"parley.dev/parley/internal/testkit"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/agents"
	"parley.dev/parley/server"
)

// guard bounds every call so a bug shows up as a failure, not a hung test.
// It is never used to wait for something to happen.
const guard = 10 * time.Second

var quiet = slog.New(slog.DiscardHandler)

// as returns a context for one call by principal ("" is anonymous) with
// A2A-Version 1.0. Every call needs its own: the core writes
// CallInfo.Activated.
func as(t testing.TB, principal string, mods ...func(*a2a.CallInfo)) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	t.Cleanup(cancel)
	ci := &a2a.CallInfo{Version: a2a.ProtocolVersion, Principal: principal}
	for _, m := range mods {
		m(ci)
	}
	return a2a.WithCallInfo(ctx, ci)
}

func anon(t testing.TB) context.Context { return as(t, "") }

func version(v string) func(*a2a.CallInfo) { return func(ci *a2a.CallInfo) { ci.Version = v } }

func extensions(uris ...string) func(*a2a.CallInfo) {
	return func(ci *a2a.CallInfo) { ci.Extensions = uris }
}

// testCard is the conformance agent's card with the two capability flags.
func testCard(streaming, push bool) *a2a.AgentCard {
	c, err := agents.Card("conformance", []*a2a.AgentInterface{{
		Url: "http://127.0.0.1:9/a2a", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.ProtocolVersion,
	}})
	if err != nil {
		panic(err)
	}
	c.Capabilities.Streaming = proto.Bool(streaming)
	c.Capabilities.PushNotifications = proto.Bool(push)
	return c
}

// newServer starts a server (conformance agent, memory store, streaming and
// push declared unless o says otherwise; a declared push is served by
// testkit.NoDelivery unless o.Push is set) and closes it when the test ends.
func newServer(t testing.TB, o server.Options) *server.Server {
	t.Helper()
	if o.Card == nil {
		o.Card = testCard(true, true)
	}
	if o.Agent == nil {
		o.Agent = agents.Conformance()
	}
	if o.Logger == nil {
		o.Logger = quiet
	}
	if o.Push == nil && o.Card.GetCapabilities().GetPushNotifications() {
		o.Push = testkit.NoDelivery{}
	}
	s, err := server.New(&o)
	if err != nil {
		t.Fatalf("server.New: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), guard)
		defer cancel()
		if err := s.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// counting wraps an agent and counts its executions.
func counting(a server.Agent, n *atomic.Int32) server.Agent {
	return server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		n.Add(1)
		return a.Execute(ctx, req, em)
	})
}

func msgReq(text string) *a2a.SendMessageRequest {
	return &a2a.SendMessageRequest{Message: a2a.UserMessage(text)}
}

func followReq(taskID, text string) *a2a.SendMessageRequest {
	m := a2a.UserMessage(text)
	m.TaskId = taskID
	return &a2a.SendMessageRequest{Message: m}
}

func withConfig(req *a2a.SendMessageRequest, cfg *a2a.SendMessageConfiguration) *a2a.SendMessageRequest {
	req.Configuration = cfg
	return req
}

func i32(n int32) *int32 { return &n }

// mustTask unwraps a SendMessage result that must be a task.
func mustTask(t testing.TB, resp *a2a.SendMessageResponse, err error) *a2a.Task {
	t.Helper()
	if err != nil {
		t.Fatalf("SendMessage: %v", err)
	}
	task := resp.GetTask()
	if task == nil {
		t.Fatalf("SendMessage returned %v, want a task", resp)
	}
	return task
}

// taskOf is mustTask for a call's two results: taskOf(t)(s.SendMessage(...)).
func taskOf(t testing.TB) func(*a2a.SendMessageResponse, error) *a2a.Task {
	return func(resp *a2a.SendMessageResponse, err error) *a2a.Task {
		t.Helper()
		return mustTask(t, resp, err)
	}
}

// sendTask sends text as a new message and returns the task.
func sendTask(t testing.TB, s a2a.Service, ctx context.Context, text string) *a2a.Task {
	t.Helper()
	resp, err := s.SendMessage(ctx, msgReq(text))
	return mustTask(t, resp, err)
}

// stillWorking reports the refusal the core gives a follow-up while an
// earlier execution is still working on the task. Tests about other things
// retry past it.
func stillWorking(err error) bool {
	return errors.Is(err, a2a.ErrUnsupportedOperation) && strings.Contains(err.Error(), "still working")
}

// followUp sends a follow-up message on a task, retrying while the core
// answers that an earlier execution is still working, so tests about other
// things do not depend on when that execution returns.
func followUp(t testing.TB, s a2a.Service, principal string, req *a2a.SendMessageRequest) (*a2a.SendMessageResponse, error) {
	t.Helper()
	for i := 0; ; i++ {
		resp, err := s.SendMessage(as(t, principal), proto.Clone(req).(*a2a.SendMessageRequest))
		if !stillWorking(err) || i == 10000 {
			return resp, err
		}
	}
}

func state(t *a2a.Task) a2a.TaskState { return t.GetStatus().GetState() }

func short(s a2a.TaskState) string { return strings.TrimPrefix(s.String(), "TASK_STATE_") }

// wantErr checks err matches the sentinel (errors.Is compares codes).
func wantErr(t testing.TB, what string, err error, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("%s: err = %v, want %v", what, err, target)
	}
}

// describe names an event compactly for comparisons and messages.
func describe(ev a2a.StreamEvent) string {
	switch p := ev.Response.GetPayload().(type) {
	case *a2a.StreamResponse_Task:
		return "task:" + short(state(p.Task))
	case *a2a.StreamResponse_Message:
		return "message:" + a2a.FirstText(p.Message)
	case *a2a.StreamResponse_StatusUpdate:
		return "status:" + short(p.StatusUpdate.GetStatus().GetState())
	case *a2a.StreamResponse_ArtifactUpdate:
		u := p.ArtifactUpdate
		return fmt.Sprintf("artifact:%s:%s:append=%t:last=%t", u.GetArtifact().GetArtifactId(),
			a2a.JoinText(u.GetArtifact().GetParts()), u.GetAppend(), u.GetLastChunk())
	}
	return "?"
}

func describeAll(evs []a2a.StreamEvent) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = describe(ev)
	}
	return out
}

// checkSeq checks the sequence numbers of a task stream increase by one.
func checkSeq(t testing.TB, evs []a2a.StreamEvent) {
	t.Helper()
	for i := 1; i < len(evs); i++ {
		if evs[i].Seq != evs[i-1].Seq+1 {
			t.Errorf("event %d (%s) has seq %d after seq %d; want +1 (all: %v)", i, describe(evs[i]), evs[i].Seq, evs[i-1].Seq, seqs(evs))
			return
		}
	}
}

func seqs(evs []a2a.StreamEvent) []uint64 {
	out := make([]uint64, len(evs))
	for i, ev := range evs {
		out[i] = ev.Seq
	}
	return out
}

func historyTexts(t *a2a.Task) []string {
	var out []string
	for _, m := range t.GetHistory() {
		out = append(out, a2a.FirstText(m))
	}
	return out
}

// op is one of the eleven operations, bound to a task (and push config) id.
type op struct {
	name string
	call func(ctx context.Context) error
}

// operations returns the eleven operations aimed at taskID / configID.
func operations(s a2a.Service, taskID, configID string) []op {
	return []op{
		{"SendMessage", func(ctx context.Context) error {
			_, err := s.SendMessage(ctx, msgReq("hello"))
			return err
		}},
		{"SendMessage(taskId)", func(ctx context.Context) error {
			_, err := s.SendMessage(ctx, followReq(taskID, "more"))
			return err
		}},
		{"SendStreamingMessage", func(ctx context.Context) error {
			_, err := testkit.Collect(s.SendStreamingMessage(ctx, msgReq("hello")))
			return err
		}},
		{"SendStreamingMessage(taskId)", func(ctx context.Context) error {
			_, err := testkit.Collect(s.SendStreamingMessage(ctx, followReq(taskID, "more")))
			return err
		}},
		{"GetTask", func(ctx context.Context) error {
			_, err := s.GetTask(ctx, &a2a.GetTaskRequest{Id: taskID})
			return err
		}},
		{"ListTasks", func(ctx context.Context) error {
			_, err := s.ListTasks(ctx, &a2a.ListTasksRequest{})
			return err
		}},
		{"CancelTask", func(ctx context.Context) error {
			_, err := s.CancelTask(ctx, &a2a.CancelTaskRequest{Id: taskID})
			return err
		}},
		{"SubscribeToTask", func(ctx context.Context) error {
			for _, err := range s.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{Id: taskID}) {
				return err // the first item decides
			}
			return nil
		}},
		{"CreateTaskPushNotificationConfig", func(ctx context.Context) error {
			_, err := s.CreateTaskPushNotificationConfig(ctx, &a2a.TaskPushNotificationConfig{TaskId: taskID, Url: "https://hooks.example/x"})
			return err
		}},
		{"GetTaskPushNotificationConfig", func(ctx context.Context) error {
			_, err := s.GetTaskPushNotificationConfig(ctx, &a2a.GetTaskPushNotificationConfigRequest{TaskId: taskID, Id: configID})
			return err
		}},
		{"ListTaskPushNotificationConfigs", func(ctx context.Context) error {
			_, err := s.ListTaskPushNotificationConfigs(ctx, &a2a.ListTaskPushNotificationConfigsRequest{TaskId: taskID})
			return err
		}},
		{"DeleteTaskPushNotificationConfig", func(ctx context.Context) error {
			return s.DeleteTaskPushNotificationConfig(ctx, &a2a.DeleteTaskPushNotificationConfigRequest{TaskId: taskID, Id: configID})
		}},
		{"GetExtendedAgentCard", func(ctx context.Context) error {
			_, err := s.GetExtendedAgentCard(ctx, &a2a.GetExtendedAgentCardRequest{})
			return err
		}},
	}
}

// failGuard is how long a test waits for something that should already
// have happened before it declares failure. Only failing runs wait it out.
const failGuard = 3 * time.Second

// within waits for ch or fails the test after failGuard.
func within(t testing.TB, ch <-chan struct{}, what string) bool {
	t.Helper()
	select {
	case <-ch:
		return true
	case <-time.After(failGuard):
		t.Errorf("timed out waiting for %s", what)
		return false
	}
}

// shortCtx is a call context whose deadline is failGuard: a stream that
// should have ended but did not ends there and the test reports it.
func shortCtx(t testing.TB, principal string) context.Context {
	ctx, cancel := context.WithTimeout(as(t, principal), failGuard)
	t.Cleanup(cancel)
	return ctx
}

// settle lets the goroutines that ran Execute finish their bookkeeping: it
// subscribes (and leaves) until the snapshot shows the task was reloaded
// from the store (Seq 0), or gives up after many tries. Spinning on an
// observable is the only handle the API offers.
func settle(t testing.TB, s a2a.Service, principal, id string) {
	for range 20000 {
		for ev, err := range s.SubscribeToTask(as(t, principal), &a2a.SubscribeToTaskRequest{Id: id}) {
			if err == nil && ev.Seq == 0 {
				return
			}
			break
		}
		runtime.Gosched()
	}
}
