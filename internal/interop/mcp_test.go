package interop_test

import (
	"context"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/testenv"
	"parley.dev/parley/internal/testkit"
)

// TestTSMCPClient runs the official TypeScript MCP SDK client
// (internal/interop/js/mcp_check.mjs, @modelcontextprotocol/sdk) against
// `parley mcp` in front of a freshly built `parley serve` with the
// conformance agent: over stdio (the SDK starts `parley mcp` as MCP hosts
// do) and over streamable HTTP (`parley mcp --http`). Every row of the
// mapping is called over the wire: text, direct reply, files inline and by
// URL, data, FAILED, REJECTED, INPUT_REQUIRED without elicitation (taskId
// continues) and with it (one turn, three turns, declined), progress, and
// a cancelled call, whose A2A task must end CANCELED.
//
// Without Node.js or the npm packages the test is skipped, unless CI=true,
// in which case it fails.
func TestTSMCPClient(t *testing.T) {
	dir := jsDir(t)
	node := testkit.RequireNode(t, dir, "@modelcontextprotocol/sdk", "@a2a-js/sdk")
	bin := testkit.ParleyBinary(t)
	agent := startParleyWith(t)
	for _, mode := range []string{"stdio", "http"} {
		t.Run(mode, func(t *testing.T) {
			args := []string{"mcp_check.mjs", "stdio", bin, agent}
			if mode == "http" {
				args = []string{"mcp_check.mjs", "http", startMCPHTTP(t, bin, agent) + "/mcp"}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, args...)
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("node %s failed (%v):\n%s", strings.Join(args, " "), err, out)
			}
			t.Logf("node %s:\n%s", strings.Join(args, " "), out)
			_, msg, ok := strings.Cut(string(out), "CANCELLED ")
			if !ok {
				t.Fatalf("the script cancelled no call:\n%s", out)
			}
			msg, _, _ = strings.Cut(msg, "\n")
			checkCancelled(t, agent, msg)
		})
	}
}

// startMCPHTTP runs `parley mcp AGENT --http ADDR` on a free loopback port
// and returns its base URL once it accepts connections.
func startMCPHTTP(t *testing.T, bin, agent string) string {
	t.Helper()
	return testkit.OnFreeAddr(t, "parley mcp --http", func(addr string) (string, error) {
		p := testenv.StartProcess(t, exec.Command(bin, "mcp", agent, "--http", addr), &testenv.ProcessOptions{Name: "parley mcp --http"})
		up := func() bool {
			c, err := net.DialTimeout("tcp", addr, time.Second)
			if err == nil {
				c.Close()
			}
			return err == nil
		}
		if err := p.WaitUntil(up, 20*time.Second); err != nil {
			p.Stop()
			return "", err
		}
		return "http://" + addr, nil
	})
}

// checkCancelled waits for the agent's tasks whose message was text (one
// or more: each run cancels one) to be CANCELED, all of them (the bridge
// cancels the A2A task of a cancelled MCP call).
func checkCancelled(t *testing.T, agent, text string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	cl := parleyClient(t, ctx, agent)
	var states []string
	for ctx.Err() == nil {
		res, err := cl.ListTasks(ctx, &a2a.ListTasksRequest{HistoryLength: testkit.Ptr[int32](1), PageSize: testkit.Ptr[int32](100)})
		if err != nil {
			t.Fatal(err)
		}
		states = states[:0]
		canceled := 0
		for _, task := range res.GetTasks() {
			if h := task.GetHistory(); len(h) > 0 && a2a.FirstText(h[0]) == text {
				states = append(states, task.GetStatus().GetState().String())
				if task.GetStatus().GetState() == a2a.TaskState_TASK_STATE_CANCELED {
					canceled++
				}
			}
		}
		if canceled > 0 && canceled == len(states) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("the tasks of the cancelled calls %q are %v, want all CANCELED", text, states)
}
