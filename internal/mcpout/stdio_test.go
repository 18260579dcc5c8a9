package mcpout_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/agents"
	"parley.dev/parley/internal/testenv"
	"parley.dev/parley/internal/testkit"
	"parley.dev/parley/parleytest"
)

// TestStdioBinary: the built `parley mcp URL`, started as MCP hosts start
// local servers, by the Go SDK's command transport: it lists and calls
// the tools, asks through elicitation, and exits when its standard input
// closes.
func TestStdioBinary(t *testing.T) {
	t.Parallel()
	srv := agentServer(t, true, nil)
	bin := testkit.ParleyBinary(t)
	var stderr testenv.SyncBuffer
	cmd := exec.Command(bin, "mcp", srv.URL)
	cmd.Stderr = &stderr
	e := &elicitor{answers: []*mcp.ElicitResult{accept("green")}}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{ElicitationHandler: e.handle}).
		Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connecting to parley mcp: %v\n%s", err, stderr.String())
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) != 1 || tools.Tools[0].Name != "test" {
		t.Fatalf("tools/list = %v, %v", tools, err)
	}
	r := call(t, cs, "test", map[string]any{"message": "input-required"})
	if structured(t, r)["state"] != "TASK_STATE_COMPLETED" || !strings.Contains(texts(r), "green") {
		t.Errorf("input-required through elicitation: %v %q", r.StructuredContent, texts(r))
	}
	start := time.Now()
	if err := cs.Close(); err != nil { // closes stdin, then waits for the process
		t.Errorf("closing the session: %v", err)
	}
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("parley mcp took %v to exit after stdin closed (the SDK's wait before SIGTERM is 5s)", d)
	}
	if cmd.ProcessState == nil || !cmd.ProcessState.Success() {
		t.Errorf("parley mcp ended %v, want exit 0\n%s", cmd.ProcessState, stderr.String())
	}
	if !strings.Contains(stderr.String(), "serving the A2A agent over stdio") {
		t.Errorf("stderr %q, want the log there", stderr.String())
	}
}

// TestStdioOnlyMCPOnStdout: every line parley mcp writes on stdout is a
// JSON-RPC message, a failing call's too; notifications/cancelled cancels
// the call's task; and it exits 0 once stdin closes, the task of a call
// still in flight canceled (raw MCP 2025-06-18, without an SDK in between).
func TestStdioOnlyMCPOnStdout(t *testing.T) {
	t.Parallel()
	srv := agentServer(t, true, nil)
	cmd := exec.Command(testkit.ParleyBinary(t), "mcp", srv.URL, "--debug")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr testenv.SyncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := []string{
		initialize,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"test","arguments":{"message":"fail"}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"nosuch","arguments":{"message":"x"}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"test","arguments":{"message":"slow 30000"}}}`,
	}
	io.WriteString(stdin, strings.Join(lines, "\n")+"\n")
	deadline := time.Now().Add(20 * time.Second)
	for strings.Count(stdout.String(), "\n") < 4 && time.Now().Before(deadline) { // the answers to 1 to 4
		time.Sleep(20 * time.Millisecond)
	}
	// notifications/cancelled: the task is canceled; the SDK still answers
	// the call (an error), which MCP asks it not to do (docs: limits).
	cancelled := waitWorking(t, srv)
	io.WriteString(stdin, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5,"reason":"test"}}`+"\n")
	waitState(t, srv, cancelled, a2a.TaskState_TASK_STATE_CANCELED)
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"test","arguments":{"message":"slow 30000"}}}`+"\n")
	working := waitWorking(t, srv) // the call still in flight when stdin closes
	stdin.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("parley mcp: %v after stdin closed, want exit 0\n%s", err, stderr.String())
		}
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("parley mcp still running 10s after stdin closed")
	}
	ids := map[float64]string{}
	sc := bufio.NewScanner(strings.NewReader(stdout.String()))
	for sc.Scan() {
		var m struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      float64         `json:"id"`
			Result  json.RawMessage `json:"result"`
			Error   json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil || m.JSONRPC != "2.0" {
			t.Errorf("stdout line %q is not a JSON-RPC message", sc.Text())
			continue
		}
		ids[m.ID] = string(m.Result) + string(m.Error)
	}
	if !strings.Contains(ids[3], `"isError":true`) || !strings.Contains(ids[3], "TASK_STATE_FAILED") {
		t.Errorf("the failing call answered %s, want isError and TASK_STATE_FAILED", ids[3])
	}
	if !strings.Contains(ids[5], "context canceled") {
		t.Errorf("the cancelled call answered %q, want the SDK's error", ids[5])
	}
	if !strings.Contains(ids[4], "nosuch") {
		t.Errorf("the call of an unknown tool answered %s, want an error naming it", ids[4])
	}
	// The client went away: its call in flight ended, and the A2A task
	// with it, before the process exited.
	if task, err := srv.Client().GetTask(t.Context(), &a2a.GetTaskRequest{Id: working}); err != nil || task.GetStatus().GetState() != a2a.TaskState_TASK_STATE_CANCELED {
		t.Errorf("the task of the call in flight when stdin closed: %v, %v; want CANCELED", task.GetStatus().GetState(), err)
	}
	if !strings.Contains(stderr.String(), "--> POST") {
		t.Errorf("--debug wrote no exchange on stderr:\n%s", stderr.String())
	}
}

// waitState waits for srv's task id to be in state st.
func waitState(t *testing.T, srv *parleytest.Server, id string, st a2a.TaskState) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		task, err := srv.Client().GetTask(t.Context(), &a2a.GetTaskRequest{Id: id})
		if err == nil && task.GetStatus().GetState() == st {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s is %v (%v), want %v", id, task.GetStatus().GetState(), err, st)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitWorking waits for a task of srv's agent in state WORKING and returns
// its id.
func waitWorking(t *testing.T, srv *parleytest.Server) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		res, err := srv.Client().ListTasks(t.Context(), &a2a.ListTasksRequest{Status: a2a.TaskState_TASK_STATE_WORKING})
		if err == nil && len(res.GetTasks()) == 1 {
			return res.GetTasks()[0].GetId()
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("no task WORKING")
	return ""
}

// TestStdioAuth: parley mcp reaches an agent that requires a bearer token
// with the client's usual credentials (here $A2ACLI_BEARER, as an MCP
// host's configuration gives it), the task belonging to that principal;
// without one, the call is a tool error saying the agent refused it.
func TestStdioAuth(t *testing.T) {
	t.Parallel()
	srv := parleytest.NewServer(t, agents.Conformance(), parleytest.WithTokens(map[string]string{"s3cret": "alice"}))
	bin := testkit.ParleyBinary(t)
	for _, tc := range []struct {
		name, env string
		ok        bool
	}{{"token", "A2ACLI_BEARER=s3cret", true}, {"none", "A2ACLI_BEARER=", false}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(bin, "mcp", srv.URL)
			cmd.Env = append(os.Environ(), tc.env)
			cmd.Dir = t.TempDir() // no .env file of the tree's
			var stderr testenv.SyncBuffer
			cmd.Stderr = &stderr
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, nil)
			if err != nil {
				t.Fatalf("connecting: %v\n%s", err, stderr.String())
			}
			defer cs.Close()
			r := call(t, cs, "test", map[string]any{"message": "hello", "contextId": "ctx-auth"})
			st := structured(t, r)
			if !tc.ok {
				if !r.IsError || !strings.Contains(texts(r), "The A2A agent") {
					t.Errorf("without a token: isError %v %q; want a tool error from the agent", r.IsError, texts(r))
				}
				return
			}
			if r.IsError || st["state"] != "TASK_STATE_COMPLETED" || st["contextId"] != "ctx-auth" {
				t.Fatalf("with a token: %v %q", st, texts(r))
			}
			task, err := srv.ClientAs("alice").GetTask(t.Context(), &a2a.GetTaskRequest{Id: st["taskId"].(string)})
			if err != nil || task.GetContextId() != "ctx-auth" {
				t.Errorf("alice's task %v: %v, %v", st["taskId"], task, err)
			}
		})
	}
}
