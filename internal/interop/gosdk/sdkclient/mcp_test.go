package sdkclient_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"

	"parley.dev/parley/internal/interop/gosdk/internal/peer"
	"parley.dev/parley/internal/testenv"
)

// TestSDKClientMCP drives the Go SDK's client against `parley serve --mcp`
// with the MCP server made with the official MCP Go SDK behind it, once
// per binding: the tools as skills, a tool call, a question answered by a
// follow-up, an unknown tool.
func TestSDKClientMCP(t *testing.T) {
	peer.RequireSDK(t)
	parley := peer.Binary(t, "parley.dev/parley/cmd/parley")
	mcpServer := peer.Binary(t, "parley.dev/parley/internal/agents/mcpagent/testdata/mcpserver")
	cmd := exec.Command(parley, "serve", "--mcp", mcpServer, "--store", "memory", "--addr", "127.0.0.1:0")
	p := testenv.StartProcess(t, cmd, &testenv.ProcessOptions{Name: "parley serve --mcp"})
	line, err := p.WaitLine(func(l string) bool { return strings.Contains(l, "agent card: ") }, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	base := strings.TrimSuffix(strings.TrimSpace(line[strings.Index(line, "http://"):]), "/.well-known/agent-card.json")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	card, err := agentcard.NewResolver(nil).Resolve(ctx, base)
	if err != nil {
		t.Fatalf("Resolver.Resolve(%s) = %v", base, err)
	}
	var ids []string
	for _, s := range card.Skills {
		ids = append(ids, s.ID)
	}
	if card.Name != "Parley's test MCP server" || !strings.Contains(strings.Join(ids, ","), "echo") {
		t.Fatalf("card %q with skills %q: want the MCP server's name and tools", card.Name, ids)
	}
	for _, b := range sdkBindings {
		t.Run(string(b.name), func(t *testing.T) {
			c, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithDefaultsDisabled(), b.option)
			if err != nil {
				t.Fatalf("NewFromCard(%s) = %v", b.name, err)
			}
			t.Cleanup(func() { c.Destroy() })
			task := sdkSend(t, ctx, c, `echo {"text": "from the Go SDK"}`, nil)
			if task.Status.State != a2a.TaskStateCompleted || len(task.Artifacts) != 1 || partsText(task.Artifacts[0].Parts) != "echo: from the Go SDK" {
				t.Fatalf("echo = state %s, artifacts %+v; want COMPLETED with the tool's text", task.Status.State, task.Artifacts)
			}
			asked := sdkSend(t, ctx, c, "ask", nil)
			if asked.Status.State != a2a.TaskStateInputRequired {
				t.Fatalf("ask = state %s, want INPUT_REQUIRED", asked.Status.State)
			}
			m := userMessage("Ada")
			m.TaskID = asked.ID
			res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: m})
			done, ok := res.(*a2a.Task)
			if err != nil || !ok || done.Status.State != a2a.TaskStateCompleted || partsText(done.Artifacts[0].Parts) != "hello Ada" {
				t.Fatalf("the answer = %#v, %v; want COMPLETED with hello Ada", res, err)
			}
			if task := sdkSend(t, ctx, c, "nope {}", nil); task.Status.State != a2a.TaskStateRejected {
				t.Fatalf("unknown tool = state %s, want REJECTED", task.Status.State)
			}
		})
	}
}
