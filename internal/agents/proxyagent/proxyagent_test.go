package proxyagent_test

// Tests of the proxy agent over the wire: an upstream Parley server runs
// the conformance agent, a second Parley server proxies it, and Parley's
// client calls the proxy.

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/a2ahttp"
	"parley.dev/parley/client"
	"parley.dev/parley/internal/agents/proxyagent"
	"parley.dev/parley/internal/testkit"
	"parley.dev/parley/server"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/memstore"
)

const guard = 20 * time.Second

// pair is an upstream, a proxy in front of it, and clients of both.
type pair struct {
	up          *testkit.Server
	upC, proxyC *client.Client
}

// startPair starts an upstream conformance agent (adjusted by upMutate,
// which may be nil) and a proxy in front of it.
func startPair(t *testing.T, upMutate func(*a2a.AgentCard, *server.Options)) *pair {
	return startPairOn(t, upMutate, nil)
}

// startPairOn is startPair with the proxy's store (nil: a new one).
func startPairOn(t *testing.T, upMutate func(*a2a.AgentCard, *server.Options), store taskstore.Store) *pair {
	t.Helper()
	up := testkit.StartServer(t, &testkit.Options{Quiet: true, Mutate: upMutate})
	p := &pair{up: up, upC: newClient(t, up.Card)}
	p.proxyC = startProxy(t, up, store)
	return p
}

// startProxy starts a proxy of up on store (nil: a new one) and returns a
// client of it.
func startProxy(t *testing.T, up *testkit.Server, store taskstore.Store) *client.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	card, err := client.Resolve(ctx, up.URL, nil)
	if err != nil {
		t.Fatalf("Resolve upstream: %v", err)
	}
	fwd, err := client.New(card, &client.Options{HTTPClient: testkit.H2CClient()})
	if err != nil {
		t.Fatal(err)
	}
	a, err := proxyagent.New(proxyagent.Options{Client: fwd, Logger: testkit.DiscardLogger})
	if err != nil {
		t.Fatal(err)
	}
	proxy := testkit.StartServer(t, &testkit.Options{Agent: a, Quiet: true, Store: store,
		Mutate: func(c *a2a.AgentCard, _ *server.Options) {
			ifaces := c.SupportedInterfaces
			proto.Reset(c)
			proto.Merge(c, proxyagent.Card(card, ifaces))
		},
		HTTP: func(o *a2ahttp.Options) { o.Middleware = append(o.Middleware, a.Middleware()) },
	})
	return newClient(t, proxy.Card)
}

func newClient(t *testing.T, card *a2a.AgentCard) *client.Client {
	t.Helper()
	c, err := client.New(card, &client.Options{HTTPClient: testkit.H2CClient(), PollInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	t.Cleanup(cancel)
	return ctx
}

// upstreamTasks lists the upstream's tasks.
func (p *pair) upstreamTasks(t *testing.T, ctx context.Context) []*a2a.Task {
	t.Helper()
	resp, err := p.upC.ListTasks(ctx, &a2a.ListTasksRequest{})
	if err != nil {
		t.Fatal(err)
	}
	return resp.GetTasks()
}

func TestProxyCard(t *testing.T) {
	p := startPair(t, nil)
	if p.proxyC.Card().GetName() != p.up.Card.GetName() || len(p.proxyC.Card().GetSkills()) != 1 ||
		p.proxyC.Card().GetSkills()[0].GetId() != "echo" || !p.proxyC.Card().GetCapabilities().GetStreaming() {
		t.Fatalf("proxy card %v; want the upstream's name and skills, streaming", p.proxyC.Card())
	}
	if p.proxyC.Card().GetSupportedInterfaces()[0].GetUrl() == p.up.Card.GetSupportedInterfaces()[0].GetUrl() {
		t.Fatal("the proxy card lists the upstream's interfaces")
	}
}

func TestProxySendAndStream(t *testing.T) {
	p := startPair(t, nil)
	ctx := ctxFor(t)
	task := testkit.SendTask(t, ctx, p.proxyC, "hello", nil)
	if task.GetStatus().GetState() != a2a.TaskState_TASK_STATE_COMPLETED || a2a.ArtifactText(task.GetArtifacts()[0]) != "hello" {
		t.Fatalf("task %v, want COMPLETED with echo hello", task)
	}
	ups := p.upstreamTasks(t, ctx)
	if len(ups) != 1 || ups[0].GetId() == task.GetId() {
		t.Fatalf("upstream tasks %v: want one, with its own id", ups)
	}

	evs, err := testkit.Collect(p.proxyC.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("stream 3")}))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"task:TASK_STATE_SUBMITTED", "status:TASK_STATE_WORKING", "artifact:chunk 0", "artifact:chunk 1", "artifact:chunk 2", "status:TASK_STATE_COMPLETED"}
	if got := testkit.Kinds(evs); !slices.Equal(got, want) {
		t.Fatalf("stream %q, want %q", got, want)
	}
	last := evs[4].Response.GetArtifactUpdate()
	if !last.GetAppend() || !last.GetLastChunk() {
		t.Errorf("last chunk %v: want append and lastChunk relayed", last)
	}

	resp, err := p.proxyC.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("message")})
	if err != nil || a2a.FirstText(resp.GetMessage()) != "pong" {
		t.Fatalf("direct reply %v, %v; want pong", resp, err)
	}
}

func TestProxyFollowUp(t *testing.T) {
	p := startPair(t, nil)
	ctx := ctxFor(t)
	task := testkit.SendTask(t, ctx, p.proxyC, "input-required", nil)
	if task.GetStatus().GetState() != a2a.TaskState_TASK_STATE_INPUT_REQUIRED || task.GetStatus().GetMessage() == nil {
		t.Fatalf("task %v, want INPUT_REQUIRED with the question", task.GetStatus())
	}
	resp, err := p.proxyC.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.FollowUp(task, "blue")})
	if err != nil {
		t.Fatal(err)
	}
	done := resp.GetTask()
	if done.GetId() != task.GetId() || done.GetStatus().GetState() != a2a.TaskState_TASK_STATE_COMPLETED || a2a.ArtifactText(done.GetArtifacts()[0]) != "blue" {
		t.Fatalf("follow-up answer %v, want the same task COMPLETED echoing blue", done)
	}
	ups := p.upstreamTasks(t, ctx)
	if len(ups) != 1 || ups[0].GetStatus().GetState() != a2a.TaskState_TASK_STATE_COMPLETED {
		t.Fatalf("upstream tasks %v: want the one task, completed by the follow-up", ups)
	}
	// A second task in the same Parley context goes to the same upstream context.
	m := a2a.UserMessage("again")
	m.ContextId = task.GetContextId()
	if _, err := p.proxyC.SendMessage(ctx, &a2a.SendMessageRequest{Message: m}); err != nil {
		t.Fatal(err)
	}
	ups = p.upstreamTasks(t, ctx)
	if len(ups) != 2 || ups[0].GetContextId() != ups[1].GetContextId() {
		t.Fatalf("upstream tasks %v: want two in one context", ups)
	}
}

// TestProxyCancel: cancelling the proxy's task cancels the upstream's.
func TestProxyCancel(t *testing.T) {
	p := startPair(t, nil)
	ctx := ctxFor(t)
	task := testkit.SendTask(t, ctx, p.proxyC, "slow 10000", &a2a.SendMessageConfiguration{ReturnImmediately: true})
	var upID string
	for upID == "" { // the upstream task exists once the forwarded message is accepted
		if ups := p.upstreamTasks(t, ctx); len(ups) == 1 {
			upID = ups[0].GetId()
		}
		time.Sleep(10 * time.Millisecond)
	}
	for { // and the proxy knows it once the first event came back
		got, err := p.proxyC.GetTask(ctx, &a2a.GetTaskRequest{Id: task.GetId()})
		if err != nil {
			t.Fatal(err)
		}
		if got.GetStatus().GetState() == a2a.TaskState_TASK_STATE_WORKING {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	canceled, err := p.proxyC.CancelTask(ctx, &a2a.CancelTaskRequest{Id: task.GetId()})
	if err != nil || canceled.GetStatus().GetState() != a2a.TaskState_TASK_STATE_CANCELED {
		t.Fatalf("CancelTask = %v, %v; want CANCELED", canceled.GetStatus(), err)
	}
	up, err := p.upC.GetTask(ctx, &a2a.GetTaskRequest{Id: upID})
	if err != nil || up.GetStatus().GetState() != a2a.TaskState_TASK_STATE_CANCELED {
		t.Fatalf("upstream task %v, %v; want CANCELED", up.GetStatus(), err)
	}
}

// TestProxyUpstreamErrors: an error the upstream answers a forwarded
// message with reaches the caller as the same A2A error, on blocking and
// streaming sends; Parley keeps the task FAILED, naming the error.
func TestProxyUpstreamErrors(t *testing.T) {
	p := startPair(t, func(_ *a2a.AgentCard, o *server.Options) { o.Limits.MaxParts = 1 })
	ctx := ctxFor(t)
	two := func() *a2a.SendMessageRequest {
		m := a2a.UserMessage("one")
		m.Parts = append(m.Parts, a2a.TextPart("two"))
		return &a2a.SendMessageRequest{Message: m}
	}
	_, err := p.proxyC.SendMessage(ctx, two())
	if !errors.Is(err, a2a.ErrInvalidParams) {
		t.Fatalf("SendMessage = %v, want the upstream's InvalidParams", err)
	}
	evs, err := testkit.Collect(p.proxyC.SendStreamingMessage(ctx, two()))
	if !errors.Is(err, a2a.ErrInvalidParams) {
		t.Fatalf("SendStreamingMessage = %q, %v; want the upstream's InvalidParams", testkit.Kinds(evs), err)
	}
	list, err := p.proxyC.ListTasks(ctx, &a2a.ListTasksRequest{})
	if err != nil || len(list.GetTasks()) != 2 {
		t.Fatalf("ListTasks = %v, %v; want the two FAILED tasks", list, err)
	}
	for _, task := range list.GetTasks() {
		task, err := p.proxyC.WaitForCompletion(ctx, task.GetId()) // the stream's error may come before the task is FAILED
		msg := a2a.JoinText(task.GetStatus().GetMessage().GetParts())
		if err != nil || task.GetStatus().GetState() != a2a.TaskState_TASK_STATE_FAILED || !strings.Contains(msg, "InvalidParams") {
			t.Errorf("task %v, %v; want FAILED naming the upstream error", task.GetStatus(), err)
		}
	}
}

// TestProxyUnreachable: an upstream that went away fails the task with a
// status message that says so.
func TestProxyUnreachable(t *testing.T) {
	p := startPair(t, nil)
	p.up.HTTP.Close()
	task := testkit.SendTask(t, ctxFor(t), p.proxyC, "hello", nil)
	msg := a2a.JoinText(task.GetStatus().GetMessage().GetParts())
	if task.GetStatus().GetState() != a2a.TaskState_TASK_STATE_FAILED || msg == "" {
		t.Fatalf("task %v, want FAILED saying why", task.GetStatus())
	}
}

// TestProxyFollowUpOnAnotherReplica: a second proxy sharing the first
// one's store, with nothing in memory, sends the follow-up to the same
// upstream task (read back from the status message's metadata).
func TestProxyFollowUpOnAnotherReplica(t *testing.T) {
	store := memstore.New()
	p := startPairOn(t, nil, store)
	ctx := ctxFor(t)
	task := testkit.SendTask(t, ctx, p.proxyC, "input-required", nil)
	second := startProxy(t, p.up, store)
	resp, err := second.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.FollowUp(task, "green")})
	if err != nil {
		t.Fatal(err)
	}
	if done := resp.GetTask(); done.GetStatus().GetState() != a2a.TaskState_TASK_STATE_COMPLETED || a2a.ArtifactText(done.GetArtifacts()[0]) != "green" {
		t.Fatalf("follow-up on the second proxy: %v", done)
	}
	if ups := p.upstreamTasks(t, ctx); len(ups) != 1 {
		t.Fatalf("upstream tasks %v: want the one task", ups)
	}
}
