package interop_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"parley.dev/parley/internal/agents/mcpagent"
	"parley.dev/parley/internal/agents/mcpagent/mcptest"
	"parley.dev/parley/internal/testenv"
	"parley.dev/parley/internal/testkit"
)

// TestMCPAgentBeforeTSServer serves the tools of an MCP server made with
// the official TypeScript MCP SDK (js/mcp_server.mjs, a real peer) as an
// A2A agent, the server run as a child over stdio and reached over
// streamable HTTP: Parley's client, on each binding, calls its tools
// (text, image, resource, structured content, isError), follows its
// progress, answers its elicitation and cancels its calls; and the
// official A2A JS SDK client (js/mcp_a2a_check.mjs) calls the same agent.
func TestMCPAgentBeforeTSServer(t *testing.T) {
	dir := jsDir(t)
	node := testkit.RequireNode(t, dir, "@modelcontextprotocol/sdk", "@a2a-js/sdk")
	for name, opts := range map[string]func(t *testing.T) mcpagent.Options{
		"stdio": func(t *testing.T) mcpagent.Options {
			return mcpagent.Options{Command: []string{node, dir + "/mcp_server.mjs"}}
		},
		"http": func(t *testing.T) mcpagent.Options {
			return mcpagent.Options{URL: startTSMCPServer(t, node, dir)}
		},
	} {
		t.Run(name, func(t *testing.T) {
			f := mcptest.Start(t, opts(t))
			if f.Srv.Card.GetName() != "TypeScript test MCP server" || len(f.Srv.Card.GetSkills()) != 8 {
				t.Fatalf("card %v: want the TypeScript server's name and its 8 tools", f.Srv.Card)
			}
			f.All(t)
			for _, binding := range []string{"JSONRPC", "HTTP+JSON"} {
				t.Run("a2a-js-client/"+binding, func(t *testing.T) {
					ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
					defer cancel()
					cmd := exec.CommandContext(ctx, node, "mcp_a2a_check.mjs", f.Srv.URL, binding)
					cmd.Dir = dir
					if out, err := cmd.CombinedOutput(); err != nil {
						t.Fatalf("node mcp_a2a_check.mjs %s %s failed (%v):\n%s", f.Srv.URL, binding, err, out)
					}
				})
			}
		})
	}
}

// startTSMCPServer runs js/mcp_server.mjs over streamable HTTP on a free
// port and returns its endpoint.
func startTSMCPServer(t *testing.T, node, dir string) string {
	return testkit.OnFreeAddr(t, "node mcp_server.mjs", func(addr string) (string, error) {
		cmd := exec.Command(node, "mcp_server.mjs", addr[strings.LastIndex(addr, ":")+1:])
		cmd.Dir = dir
		p := testenv.StartProcess(t, cmd, &testenv.ProcessOptions{Name: "node mcp_server.mjs"})
		u, err := p.WaitReady(20 * time.Second)
		if err != nil {
			p.Stop()
		}
		return u, err
	})
}
