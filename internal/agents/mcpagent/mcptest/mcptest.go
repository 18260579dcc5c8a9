// Package mcptest drives an A2A agent made by mcpagent over the wire, for
// the tests of `parley serve --mcp` against MCP servers made with the
// official SDKs (Go and TypeScript): Start serves one, and each scenario
// checks rows of the mapping with Parley's client. Every MCP server it is
// used with offers the tools echo, image, square, fail, progress, ask,
// slow and canceled.
package mcptest

import (
	"bytes"
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"parley.dev/parley/a2a"
	"parley.dev/parley/a2ahttp"
	"parley.dev/parley/client"
	"parley.dev/parley/internal/agents/mcpagent"
	"parley.dev/parley/internal/testenv"
	"parley.dev/parley/internal/testkit"
	"parley.dev/parley/server"
)

const guard = 30 * time.Second

// GoServer builds the MCP server made with the official MCP Go SDK for
// these tests (the mcpagent package's testdata/mcpserver: the tools above,
// and env and crash) and returns the program's path.
func GoServer(t *testing.T) string {
	return testenv.GoBuild(t, testkit.ModuleRoot(t), "./internal/agents/mcpagent/testdata/mcpserver")
}

// Fixture is a Parley server in front of the test MCP server, and a
// client of it per binding.
type Fixture struct {
	Agent   *mcpagent.Agent
	Srv     *testkit.Server
	Clients map[string]*client.Client
	Log     *testenv.SyncBuffer
}

// Start serves the MCP server of o on every binding; it is stopped when
// the test ends.
func Start(t *testing.T, o mcpagent.Options) *Fixture {
	t.Helper()
	f := &Fixture{Log: &testenv.SyncBuffer{}, Clients: map[string]*client.Client{}}
	o.Logger = slog.New(slog.NewTextHandler(f.Log, nil))
	o.StopGrace = time.Second
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	a, err := mcpagent.New(ctx, o)
	if err != nil {
		t.Fatalf("mcpagent.New: %v", err)
	}
	t.Cleanup(func() { _ = a.Close() })
	f.Agent = a
	f.Srv = testkit.StartServer(t, &testkit.Options{Agent: a, Quiet: true,
		Mutate: func(c *a2a.AgentCard, _ *server.Options) {
			ifaces := c.SupportedInterfaces
			proto.Reset(c)
			proto.Merge(c, a.Card(ifaces))
		},
		HTTP: func(ho *a2ahttp.Options) { ho.Middleware = append(ho.Middleware, a.Middleware()) },
	})
	for name, tf := range map[string]client.TransportFactory{"jsonrpc": client.JSONRPC(), "rest": client.REST(), "grpc": client.GRPC()} {
		c, err := client.New(f.Srv.Card, &client.Options{HTTPClient: testkit.H2CClient(), Transports: []client.TransportFactory{tf}, PollInterval: 20 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		f.Clients[name] = c
	}
	return f
}

// All runs every scenario: the calls and the elicitation on each
// binding, the rest on one each.
func (f *Fixture) All(t *testing.T) {
	for b, c := range f.Clients {
		t.Run("calls/"+b, func(t *testing.T) { Calls(t, c) })
		t.Run("elicitation/"+b, func(t *testing.T) { Elicitation(t, c) })
	}
	t.Run("results", func(t *testing.T) { Results(t, f.Clients["rest"]) })
	t.Run("progress", func(t *testing.T) { Progress(t, f.Clients["jsonrpc"]) })
	t.Run("cancel", func(t *testing.T) { Cancel(t, f.Clients["grpc"]) })
}

// Send sends m and returns the task it made.
func Send(t *testing.T, c *client.Client, m *a2a.Message) *a2a.Task {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	resp, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: m})
	if err != nil {
		t.Fatalf("SendMessage: %v", err)
	}
	if resp.GetTask() == nil {
		t.Fatalf("answer %v, want a task", resp)
	}
	return resp.GetTask()
}

// DataMessage is a user message of one data part.
func DataMessage(t *testing.T, v map[string]any) *a2a.Message {
	t.Helper()
	pv, err := structpb.NewValue(v)
	if err != nil {
		t.Fatal(err)
	}
	m := a2a.UserMessage("")
	m.Parts = []*a2a.Part{{Content: &a2a.Part_Data{Data: pv}}}
	return m
}

// WantState checks a task's state and that its status message says text.
func WantState(t *testing.T, task *a2a.Task, want a2a.TaskState, text string) {
	t.Helper()
	if got := task.GetStatus().GetState(); got != want {
		t.Fatalf("state %v (%q), want %v", got, a2a.JoinText(task.GetStatus().GetMessage().GetParts()), want)
	}
	if said := a2a.JoinText(task.GetStatus().GetMessage().GetParts()); !strings.Contains(said, text) {
		t.Fatalf("status message %q, want it to say %q", said, text)
	}
}

// ResultParts is the parts of the task's one artifact, the result.
func ResultParts(t *testing.T, task *a2a.Task) []*a2a.Part {
	t.Helper()
	if len(task.GetArtifacts()) != 1 || task.GetArtifacts()[0].GetArtifactId() != mcpagent.ResultArtifactID {
		t.Fatalf("artifacts %v, want the one result", task.GetArtifacts())
	}
	return task.GetArtifacts()[0].GetParts()
}

// Calls: tool calls by text and by data part, isError, unknown tools.
func Calls(t *testing.T, c *client.Client) {
	WantState(t, Send(t, c, a2a.UserMessage(`echo {"text": "hi"}`)), a2a.TaskState_TASK_STATE_COMPLETED, "")
	task := Send(t, c, a2a.UserMessage("echo just words"))
	if got := a2a.JoinText(ResultParts(t, task)); got != "echo: just words" {
		t.Errorf("echo with words: %q", got)
	}
	task = Send(t, c, DataMessage(t, map[string]any{"tool": "square", "arguments": map[string]any{"n": 7}}))
	parts := ResultParts(t, task)
	last := parts[len(parts)-1].GetData().GetStructValue().AsMap()
	if last["square"] != float64(49) {
		t.Errorf("square: structured content %v, want square 49", last)
	}
	WantState(t, Send(t, c, a2a.UserMessage("fail")), a2a.TaskState_TASK_STATE_FAILED, "it failed on purpose")
	WantState(t, Send(t, c, a2a.UserMessage("nope {}")), a2a.TaskState_TASK_STATE_REJECTED, "echo")
	WantState(t, Send(t, c, DataMessage(t, map[string]any{"tool": "nope"})), a2a.TaskState_TASK_STATE_REJECTED, `no tool is named "nope"`)
	WantState(t, Send(t, c, a2a.UserMessage(`echo {"text": `)), a2a.TaskState_TASK_STATE_REJECTED, "not one JSON object")
}

// Results: an image, an embedded resource (and a resource link, when
// the server gives one) as file parts.
func Results(t *testing.T, c *client.Client) {
	parts := ResultParts(t, Send(t, c, a2a.UserMessage("image")))
	if len(parts) < 2 {
		t.Fatalf("image: parts %v, want an image and a resource", parts)
	}
	if parts[0].GetMediaType() != "image/png" || !bytes.HasPrefix(parts[0].GetRaw(), []byte("\x89PNG")) {
		t.Errorf("image part %v", parts[0])
	}
	if string(parts[1].GetRaw()) != "some notes" || parts[1].GetFilename() != "file:///notes.txt" || parts[1].GetMediaType() != "text/plain" {
		t.Errorf("embedded resource part %v", parts[1])
	}
	if len(parts) > 2 && (parts[2].GetUrl() != "https://example.com/report.pdf" || parts[2].GetFilename() != "report.pdf") {
		t.Errorf("resource link part %v", parts[2])
	}
}

// Elicitation: a question as INPUT_REQUIRED, a wrong answer asked again,
// an answer, a decline.
func Elicitation(t *testing.T, c *client.Client) {
	task := Send(t, c, a2a.UserMessage("ask"))
	WantState(t, task, a2a.TaskState_TASK_STATE_INPUT_REQUIRED, "What is your name?")
	follow := func(text string) *a2a.Task {
		m := a2a.UserMessage(text)
		m.TaskId = task.GetId()
		return Send(t, c, m)
	}
	WantState(t, follow(`{"nome": 1, "x": 2}`), a2a.TaskState_TASK_STATE_INPUT_REQUIRED, "What is your name?")
	done := follow("Ada")
	WantState(t, done, a2a.TaskState_TASK_STATE_COMPLETED, "")
	if got := a2a.JoinText(ResultParts(t, done)); got != "hello Ada" {
		t.Errorf("after the answer: %q", got)
	}
	task = Send(t, c, a2a.UserMessage("ask"))
	declined := follow("decline")
	if got := a2a.JoinText(ResultParts(t, declined)); got != "no name: decline" {
		t.Errorf("after decline: %q", got)
	}
}

// Progress: progress notifications as WORKING updates of a stream, in
// order. The tool pauses 20 ms after each of its three steps, yet the last
// ones may still be missing: the SDK's client hands a call its result at
// once but runs notification handlers on a goroutine of their own, so a
// notification read before the result can be handled after the task ended
// (docs/mcp.md). So the updates must be the first one or more steps, in order.
func Progress(t *testing.T, c *client.Client) {
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	var said []string
	for ev, err := range c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage(`progress {"steps": 3}`)}) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind() == a2a.EventStatusUpdate && ev.State() == a2a.TaskState_TASK_STATE_WORKING {
			if m := ev.Response.GetStatusUpdate().GetStatus().GetMessage(); m != nil {
				said = append(said, a2a.JoinText(m.GetParts()))
			}
		}
	}
	want := []string{"progress 1/3: step 1", "progress 2/3: step 2", "progress 3/3: step 3"}
	if len(said) == 0 || len(said) > len(want) || !slices.Equal(said, want[:len(said)]) {
		t.Errorf("progress updates %q, want the first one or more of %q, in order", said, want)
	}
}

// Cancel: a cancel reaches the MCP server; a task waiting for an answer
// is canceled too.
func Cancel(t *testing.T, c *client.Client) {
	count := func() string { return a2a.JoinText(ResultParts(t, Send(t, c, a2a.UserMessage("canceled")))) }
	before := count()
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	resp, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("slow"),
		Configuration: &a2a.SendMessageConfiguration{ReturnImmediately: true}})
	if err != nil {
		t.Fatal(err)
	}
	id := resp.GetTask().GetId()
	for resp.GetTask().GetStatus().GetState() != a2a.TaskState_TASK_STATE_WORKING {
		time.Sleep(20 * time.Millisecond)
		tk, err := c.GetTask(ctx, &a2a.GetTaskRequest{Id: id})
		if err != nil {
			t.Fatal(err)
		}
		resp = &a2a.SendMessageResponse{Payload: &a2a.SendMessageResponse_Task{Task: tk}}
	}
	// WORKING is reported as the call goes out: over HTTP, a cancel sent
	// at once may reach the server before the call (the two are separate
	// POSTs), and the server ignores a cancel of a call it does not know.
	time.Sleep(300 * time.Millisecond)
	if tk, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{Id: id}); err != nil || tk.GetStatus().GetState() != a2a.TaskState_TASK_STATE_CANCELED {
		t.Fatalf("cancel: %v %v", tk, err)
	}
	for deadline := time.Now().Add(10 * time.Second); count() == before; {
		if time.Now().After(deadline) {
			t.Fatalf("the MCP server saw no cancellation (canceled calls still %s)", before)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Canceled while it waits for an answer: the question is withdrawn.
	task := Send(t, c, a2a.UserMessage("ask"))
	if tk, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{Id: task.GetId()}); err != nil || tk.GetStatus().GetState() != a2a.TaskState_TASK_STATE_CANCELED {
		t.Fatalf("cancel of an INPUT_REQUIRED task: %v %v", tk, err)
	}
}
