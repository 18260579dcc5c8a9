package mcpagent_test

// Tests over the wire with real peers: the MCP server is testdata/mcpserver,
// made with the official MCP Go SDK, run as a child over stdio or reached
// over streamable HTTP; Parley serves its tools on every binding, and
// Parley's client calls them (the scenarios are mcptest's).

import (
	"bufio"
	"os/exec"
	"strings"
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
