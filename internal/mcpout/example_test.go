package mcpout_test

import (
	"context"
	"fmt"
	"log"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"parley.dev/parley/internal/agents"
	"parley.dev/parley/internal/mcpout"
	"parley.dev/parley/parleytest"
)

// An A2A agent (here the echo agent, on loopback) served as MCP tools, and
// the official MCP Go SDK's client calling them over its in-memory
// transport; `parley mcp` serves the same over stdio or streamable HTTP.
func Example() {
	agent, err := parleytest.Start(agents.Echo())
	if err != nil {
		log.Fatal(err)
	}
	defer agent.Close()
	bridge, err := mcpout.New(agent.Client(), nil)
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	clientEnd, serverEnd := mcp.NewInMemoryTransports()
	go bridge.Run(ctx, serverEnd)

	session, err := mcp.NewClient(&mcp.Implementation{Name: "example", Version: "1"}, nil).Connect(ctx, clientEnd, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer session.Close()
	tools, err := session.ListTools(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	for _, t := range tools.Tools {
		fmt.Println("tool:", t.Name, "-", t.Description)
	}
	res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "test", Arguments: map[string]any{"message": "hello"}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("text:", res.Content[0].(*mcp.TextContent).Text)
	fmt.Println("state:", res.StructuredContent.(map[string]any)["state"])
	// Output:
	// tool: test - Whatever the agent under test does.
	// text: hello
	// state: TASK_STATE_COMPLETED
}
