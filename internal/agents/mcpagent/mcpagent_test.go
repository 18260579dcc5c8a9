package mcpagent_test

// Tests over the wire with real peers: the MCP server is testdata/mcpserver,
// made with the official MCP Go SDK, run as a child over stdio or reached
// over streamable HTTP; Parley serves its tools on every binding, and
// Parley's client calls them (the scenarios are mcptest's).

import (
	"bufio"
	"context"
	"errors"
	"iter"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/agents/mcpagent"
	"parley.dev/parley/internal/agents/mcpagent/mcptest"
	"parley.dev/parley/internal/testkit"
)

// startHTTPServer runs the test MCP server over streamable HTTP and
// returns its endpoint.
func startHTTPServer(t *testing.T) string {
	cmd := exec.Command(mcptest.GoServer(t), "-http", "127.0.0.1:0")
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

// transports are the two ways to reach the test server.
func transports() map[string]func(t *testing.T) mcpagent.Options {
	return map[string]func(t *testing.T) mcpagent.Options{
		"stdio": func(t *testing.T) mcpagent.Options {
			return mcpagent.Options{Command: []string{mcptest.GoServer(t)}}
		},
		"http": func(t *testing.T) mcpagent.Options {
			return mcpagent.Options{URL: startHTTPServer(t)}
		},
	}
}

// TestMCPAgent: every row of the mapping, over stdio and streamable
// HTTP, on the three bindings where the row is about the message.
func TestMCPAgent(t *testing.T) {
	for name, opts := range transports() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := mcptest.Start(t, opts(t))
			t.Run("card", func(t *testing.T) { testCard(t, f) })
			f.All(t)
		})
	}
}

func testCard(t *testing.T, f *mcptest.Fixture) {
	card := f.Srv.Card
	if card.GetName() != "Parley's test MCP server" || card.GetDescription() != "Tools for Parley's tests." || card.GetVersion() != "0.1.0" {
		t.Errorf("card name %q, description %q, version %q: want the MCP server's", card.GetName(), card.GetDescription(), card.GetVersion())
	}
	var ids []string
	for _, s := range card.GetSkills() {
		ids = append(ids, s.GetId())
	}
	if got := strings.Join(ids, ","); got != strings.Join(f.Agent.Tools(), ",") || !strings.Contains(got, "echo") {
		t.Errorf("skills %s, want the tools %v", got, f.Agent.Tools())
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

// TestMCPAgentChildDies: a child that dies fails its call with the cause,
// logs its standard error, and is started again.
func TestMCPAgentChildDies(t *testing.T) {
	t.Parallel()
	f := mcptest.Start(t, mcpagent.Options{Command: []string{mcptest.GoServer(t)}})
	c := f.Clients["jsonrpc"]
	mcptest.WantState(t, mcptest.Send(t, c, a2a.UserMessage("crash")), a2a.TaskState_TASK_STATE_FAILED, "exit status 3")
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(f.Log.String(), "crashing on purpose"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) { // the log line is read from a pipe, apart from the exit
			t.Fatalf("the child's stderr is not in the log:\n%s", f.Log.String())
		}
	}
	mcptest.WantState(t, mcptest.Send(t, c, a2a.UserMessage(`echo {"text": "again"}`)), a2a.TaskState_TASK_STATE_COMPLETED, "")
}

// TestMCPAgentHTTPServerRestarts: over streamable HTTP, a call to a server
// that is gone fails naming why; once the server is back (its sessions
// forgotten), a new session is opened and calls work again.
func TestMCPAgentHTTPServerRestarts(t *testing.T) {
	t.Parallel()
	addr := testkit.FreeAddr(t)
	run := func() *exec.Cmd {
		cmd := exec.Command(mcptest.GoServer(t), "-http", addr)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if _, err := bufio.NewReader(out).ReadString('\n'); err != nil { // its URL: it listens
			t.Fatal(err)
		}
		return cmd
	}
	srv := run()
	f := mcptest.Start(t, mcpagent.Options{URL: "http://" + addr + "/mcp"})
	c := f.Clients["rest"]
	mcptest.WantState(t, mcptest.Send(t, c, a2a.UserMessage(`echo {"text": "1"}`)), a2a.TaskState_TASK_STATE_COMPLETED, "")
	_ = srv.Process.Kill()
	_ = srv.Wait()
	mcptest.WantState(t, mcptest.Send(t, c, a2a.UserMessage(`echo {"text": "2"}`)), a2a.TaskState_TASK_STATE_FAILED, "connection refused")
	srv = run()
	t.Cleanup(func() { _ = srv.Process.Kill(); _ = srv.Wait() })
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		task := mcptest.Send(t, c, a2a.UserMessage(`echo {"text": "3"}`))
		if task.GetStatus().GetState() == a2a.TaskState_TASK_STATE_COMPLETED {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no new session: %v\n%s", task.GetStatus(), f.Log.String())
		}
	}
}

// TestMCPAgentQuestionWithdrawn: a tool that withdraws its question while
// the task waits for input (its elicitation request canceled) and asks
// another takes the follow-up as the answer to the question it asks now,
// and the task ends with the result, not INPUT_REQUIRED again with the
// question just answered.
func TestMCPAgentQuestionWithdrawn(t *testing.T) {
	t.Parallel()
	f := mcptest.Start(t, mcpagent.Options{Command: []string{mcptest.GoServer(t)}})
	c := f.Clients["jsonrpc"]
	task := mcptest.Send(t, c, a2a.UserMessage("askagain"))
	mcptest.WantState(t, task, a2a.TaskState_TASK_STATE_INPUT_REQUIRED, "What is your name?")
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(f.Log.String(), "asking again"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the tool did not ask again:\n%s", f.Log.String())
		}
	}
	time.Sleep(300 * time.Millisecond) // the second request on its way to Parley after the stderr line
	m := a2a.UserMessage("Ada")
	m.TaskId = task.GetId()
	done := mcptest.Send(t, c, m)
	mcptest.WantState(t, done, a2a.TaskState_TASK_STATE_COMPLETED, "")
	if got := a2a.JoinText(mcptest.ResultParts(t, done)); got != "hello Ada (accept)" {
		t.Errorf("after the answer: %q", got)
	}
}

// TestMCPAgentCloseWhileAsking: Close returns, and stops the server, while
// a task waits for the answer to its tool's question: the call and its
// elicitation are ended first, so that the MCP session's close, which
// waits for the requests in flight, does not wait for them forever.
func TestMCPAgentCloseWhileAsking(t *testing.T) {
	t.Parallel()
	f := mcptest.Start(t, mcpagent.Options{Command: []string{mcptest.GoServer(t)}})
	task := mcptest.Send(t, f.Clients["jsonrpc"], a2a.UserMessage("ask"))
	mcptest.WantState(t, task, a2a.TaskState_TASK_STATE_INPUT_REQUIRED, "What is your name?")
	closed := make(chan struct{})
	go func() { _ = f.Agent.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(15 * time.Second):
		t.Fatal("Close did not return while a task waited for an answer")
	}
}

// TestMCPAgentServerHangs: a server that stops answering (its process
// stopped) is taken for hung once it missed the pings: the call in
// flight ends FAILED saying so, and the server is started again.
func TestMCPAgentServerHangs(t *testing.T) {
	t.Parallel()
	f := mcptest.Start(t, mcpagent.Options{Command: []string{mcptest.GoServer(t)}, KeepAlive: 200 * time.Millisecond})
	c := f.Clients["jsonrpc"]
	mcptest.WantState(t, mcptest.Send(t, c, a2a.UserMessage("freeze")), a2a.TaskState_TASK_STATE_FAILED, "stopped answering")
	mcptest.WantState(t, mcptest.Send(t, c, a2a.UserMessage(`echo {"text": "again"}`)), a2a.TaskState_TASK_STATE_COMPLETED, "")
}

// TestMCPAgentChildKilledWhileAsking: a child killed while a task waits
// for the answer to its tool's question (INPUT_REQUIRED, no message being
// handled) ends the task FAILED at once, saying so: a subscriber and
// GetTask see it with nothing sent, and an answer sent afterwards is
// refused as on any terminal task (spec §3.1.1). The server is started
// again for the next call.
func TestMCPAgentChildKilledWhileAsking(t *testing.T) {
	t.Parallel()
	f := mcptest.Start(t, mcpagent.Options{Command: []string{mcptest.GoServer(t)}})
	c := f.Clients["grpc"]
	pid, err := strconv.Atoi(a2a.JoinText(mcptest.ResultParts(t, mcptest.Send(t, c, a2a.UserMessage("pid")))))
	if err != nil {
		t.Fatal(err)
	}
	task := mcptest.Send(t, c, a2a.UserMessage("ask"))
	mcptest.WantState(t, task, a2a.StateInputRequired, "What is your name?")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	next, stop := iter.Pull2(c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{Id: task.GetId()}))
	defer stop()
	if _, err, _ := next(); err != nil { // the snapshot: subscribed
		t.Fatalf("SubscribeToTask: %v", err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	const said = "the MCP server stopped while the call of ask waited for an answer"
	evs, err := testkit.Rest(next)
	if err != nil || len(evs) == 0 {
		t.Fatalf("SubscribeToTask: %d events, %v", len(evs), err)
	}
	if st := evs[len(evs)-1].Response.GetStatusUpdate().GetStatus(); st.GetState() != a2a.StateFailed || !strings.Contains(a2a.FirstText(st.GetMessage()), said) {
		t.Errorf("the subscriber's last status = %v, want FAILED saying %q", st, said)
	}
	got, err := c.GetTask(ctx, &a2a.GetTaskRequest{Id: task.GetId()})
	if err != nil {
		t.Fatal(err)
	}
	mcptest.WantState(t, got, a2a.StateFailed, said)
	answer := a2a.UserMessage("Ada")
	answer.TaskId = task.GetId()
	if _, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: answer}); !errors.Is(err, a2a.ErrUnsupportedOperation) {
		t.Errorf("the answer sent after: %v, want UnsupportedOperationError (a terminal task)", err)
	}
	mcptest.WantState(t, mcptest.Send(t, c, a2a.UserMessage(`echo {"text": "again"}`)), a2a.StateCompleted, "")
}
