package mcpagent_test

// Tests over the wire with real peers: the MCP server is testdata/mcpserver,
// made with the official MCP Go SDK, run as a child over stdio or reached
// over streamable HTTP; Parley serves its tools on every binding, and
// Parley's client calls them.

import (
	"bufio"
	"bytes"
	"context"
	"log/slog"
	"os/exec"
	"strings"
	"sync"
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

// syncBuffer is a log destination tests read while the agent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// serverProgram builds testdata/mcpserver once.
func serverProgram(t *testing.T) string {
	return testenv.GoBuild(t, testkit.ModuleRoot(t), "./internal/agents/mcpagent/testdata/mcpserver")
}

// startHTTPServer runs the test MCP server over streamable HTTP and
// returns its endpoint.
func startHTTPServer(t *testing.T) string {
	cmd := exec.Command(serverProgram(t), "-http", "127.0.0.1:0")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("the test MCP server printed no URL: %v", err)
	}
	return strings.TrimSpace(line)
}

// fixture is a Parley server in front of the test MCP server, and a
// client of it per binding.
type fixture struct {
	agent   *mcpagent.Agent
	srv     *testkit.Server
	clients map[string]*client.Client
	log     *syncBuffer
}

// start serves the MCP server of o on every binding.
func start(t *testing.T, o mcpagent.Options) *fixture {
	t.Helper()
	f := &fixture{log: &syncBuffer{}, clients: map[string]*client.Client{}}
	o.Logger = slog.New(slog.NewTextHandler(f.log, nil))
	o.StopGrace = time.Second
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	a, err := mcpagent.New(ctx, o)
	if err != nil {
		t.Fatalf("mcpagent.New: %v", err)
	}
	t.Cleanup(func() { _ = a.Close() })
	f.agent = a
	f.srv = testkit.StartServer(t, &testkit.Options{Agent: a, Quiet: true,
		Mutate: func(c *a2a.AgentCard, _ *server.Options) {
			ifaces := c.SupportedInterfaces
			proto.Reset(c)
			proto.Merge(c, a.Card(ifaces))
		},
		HTTP: func(ho *a2ahttp.Options) { ho.Middleware = append(ho.Middleware, a.Middleware()) },
	})
	for name, tf := range map[string]client.TransportFactory{"jsonrpc": client.JSONRPC(), "rest": client.REST(), "grpc": client.GRPC()} {
		c, err := client.New(f.srv.Card, &client.Options{HTTPClient: testkit.H2CClient(), Transports: []client.TransportFactory{tf}, PollInterval: 20 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		f.clients[name] = c
	}
	return f
}

// transports are the two ways to reach the test server.
func transports(t *testing.T) map[string]func(t *testing.T) mcpagent.Options {
	return map[string]func(t *testing.T) mcpagent.Options{
		"stdio": func(t *testing.T) mcpagent.Options {
			return mcpagent.Options{Command: []string{serverProgram(t)}}
		},
		"http": func(t *testing.T) mcpagent.Options {
			return mcpagent.Options{URL: startHTTPServer(t)}
		},
	}
}

func send(t *testing.T, c *client.Client, m *a2a.Message) *a2a.Task {
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

func dataMessage(t *testing.T, v map[string]any) *a2a.Message {
	t.Helper()
	pv, err := structpb.NewValue(v)
	if err != nil {
		t.Fatal(err)
	}
	m := a2a.UserMessage("")
	m.Parts = []*a2a.Part{{Content: &a2a.Part_Data{Data: pv}}}
	return m
}

func wantState(t *testing.T, task *a2a.Task, want a2a.TaskState, text string) {
	t.Helper()
	if got := task.GetStatus().GetState(); got != want {
		t.Fatalf("state %v (%q), want %v", got, a2a.JoinText(task.GetStatus().GetMessage().GetParts()), want)
	}
	if said := a2a.JoinText(task.GetStatus().GetMessage().GetParts()); !strings.Contains(said, text) {
		t.Fatalf("status message %q, want it to say %q", said, text)
	}
}

func resultParts(t *testing.T, task *a2a.Task) []*a2a.Part {
	t.Helper()
	if len(task.GetArtifacts()) != 1 || task.GetArtifacts()[0].GetArtifactId() != mcpagent.ResultArtifactID {
		t.Fatalf("artifacts %v, want the one result", task.GetArtifacts())
	}
	return task.GetArtifacts()[0].GetParts()
}

// TestMCPAgent: every row of the mapping, over stdio and streamable
// HTTP, on the three bindings where the row is about the message.
func TestMCPAgent(t *testing.T) {
	for name, opts := range transports(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := start(t, opts(t))
			t.Run("card", func(t *testing.T) { testCard(t, f) })
			for b, c := range f.clients {
				t.Run("calls/"+b, func(t *testing.T) { testCalls(t, c) })
				t.Run("elicitation/"+b, func(t *testing.T) { testElicitation(t, c) })
			}
			t.Run("results", func(t *testing.T) { testResults(t, f.clients["rest"]) })
			t.Run("progress", func(t *testing.T) { testProgress(t, f.clients["jsonrpc"]) })
			t.Run("cancel", func(t *testing.T) { testCancel(t, f.clients["grpc"]) })
		})
	}
}

func testCard(t *testing.T, f *fixture) {
	card := f.srv.Card
	if card.GetName() != "Parley's test MCP server" || card.GetDescription() != "Tools for Parley's tests." || card.GetVersion() != "0.1.0" {
		t.Errorf("card name %q, description %q, version %q: want the MCP server's", card.GetName(), card.GetDescription(), card.GetVersion())
	}
	var ids []string
	for _, s := range card.GetSkills() {
		ids = append(ids, s.GetId())
	}
	if got := strings.Join(ids, ","); got != strings.Join(f.agent.Tools(), ",") || !strings.Contains(got, "echo") {
		t.Errorf("skills %s, want the tools %v", got, f.agent.Tools())
	}
	var echo *a2a.AgentSkill
	for _, s := range card.GetSkills() {
		if s.GetId() == "echo" {
			echo = s
		}
	}
	if echo.GetName() != "Echo" || !strings.Contains(echo.GetDescription(), `"text"`) {
		t.Errorf("echo skill %v: want its title and its input schema", echo)
	}
	if !strings.Contains(strings.Join(card.GetDefaultInputModes(), ","), "application/json") {
		t.Errorf("input modes %v: data parts must be accepted", card.GetDefaultInputModes())
	}
}

func testCalls(t *testing.T, c *client.Client) {
	wantState(t, send(t, c, a2a.UserMessage(`echo {"text": "hi"}`)), a2a.TaskState_TASK_STATE_COMPLETED, "")
	task := send(t, c, a2a.UserMessage("echo just words"))
	if got := a2a.JoinText(resultParts(t, task)); got != "echo: just words" {
		t.Errorf("echo with words: %q", got)
	}
	task = send(t, c, dataMessage(t, map[string]any{"tool": "square", "arguments": map[string]any{"n": 7}}))
	parts := resultParts(t, task)
	last := parts[len(parts)-1].GetData().GetStructValue().AsMap()
	if last["square"] != float64(49) {
		t.Errorf("square: structured content %v, want square 49", last)
	}
	wantState(t, send(t, c, a2a.UserMessage("fail")), a2a.TaskState_TASK_STATE_FAILED, "it failed on purpose")
	wantState(t, send(t, c, a2a.UserMessage("nope {}")), a2a.TaskState_TASK_STATE_REJECTED, "crash, echo, env, fail")
	wantState(t, send(t, c, dataMessage(t, map[string]any{"tool": "nope"})), a2a.TaskState_TASK_STATE_REJECTED, `no tool is named "nope"`)
	wantState(t, send(t, c, a2a.UserMessage(`echo {"text": `)), a2a.TaskState_TASK_STATE_REJECTED, "not one JSON object")
}

func testResults(t *testing.T, c *client.Client) {
	parts := resultParts(t, send(t, c, a2a.UserMessage("image")))
	if len(parts) != 3 {
		t.Fatalf("image: parts %v, want 3", parts)
	}
	if parts[0].GetMediaType() != "image/png" || !bytes.HasPrefix(parts[0].GetRaw(), []byte("\x89PNG")) {
		t.Errorf("image part %v", parts[0])
	}
	if string(parts[1].GetRaw()) != "some notes" || parts[1].GetFilename() != "file:///notes.txt" || parts[1].GetMediaType() != "text/plain" {
		t.Errorf("embedded resource part %v", parts[1])
	}
	if parts[2].GetUrl() != "https://example.com/report.pdf" || parts[2].GetFilename() != "report.pdf" {
		t.Errorf("resource link part %v", parts[2])
	}
}

func testElicitation(t *testing.T, c *client.Client) {
	task := send(t, c, a2a.UserMessage("ask"))
	wantState(t, task, a2a.TaskState_TASK_STATE_INPUT_REQUIRED, "What is your name?")
	follow := func(text string) *a2a.Task {
		m := a2a.UserMessage(text)
		m.TaskId = task.GetId()
		return send(t, c, m)
	}
	wantState(t, follow(`{"nome": 1, "x": 2}`), a2a.TaskState_TASK_STATE_INPUT_REQUIRED, "What is your name?")
	done := follow("Ada")
	wantState(t, done, a2a.TaskState_TASK_STATE_COMPLETED, "")
	if got := a2a.JoinText(resultParts(t, done)); got != "hello Ada" {
		t.Errorf("after the answer: %q", got)
	}
	task = send(t, c, a2a.UserMessage("ask"))
	declined := follow("decline")
	if got := a2a.JoinText(resultParts(t, declined)); got != "no name: decline" {
		t.Errorf("after decline: %q", got)
	}
}

func testProgress(t *testing.T, c *client.Client) {
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
	if got := strings.Join(said, "|"); got != "progress 1/3: step 1|progress 2/3: step 2|progress 3/3: step 3" {
		t.Errorf("progress updates %q", got)
	}
}

func testCancel(t *testing.T, c *client.Client) {
	count := func() string { return a2a.JoinText(resultParts(t, send(t, c, a2a.UserMessage("canceled")))) }
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
	task := send(t, c, a2a.UserMessage("ask"))
	if tk, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{Id: task.GetId()}); err != nil || tk.GetStatus().GetState() != a2a.TaskState_TASK_STATE_CANCELED {
		t.Fatalf("cancel of an INPUT_REQUIRED task: %v %v", tk, err)
	}
}

// TestMCPAgentChildDies: a child that dies fails its call with the cause,
// logs its standard error, and is started again.
func TestMCPAgentChildDies(t *testing.T) {
	t.Parallel()
	f := start(t, mcpagent.Options{Command: []string{serverProgram(t)}})
	c := f.clients["jsonrpc"]
	wantState(t, send(t, c, a2a.UserMessage("crash")), a2a.TaskState_TASK_STATE_FAILED, "exit status 3")
	if !strings.Contains(f.log.String(), "crashing on purpose") {
		t.Errorf("the child's stderr is not in the log:\n%s", f.log.String())
	}
	wantState(t, send(t, c, a2a.UserMessage(`echo {"text": "again"}`)), a2a.TaskState_TASK_STATE_COMPLETED, "")
}
