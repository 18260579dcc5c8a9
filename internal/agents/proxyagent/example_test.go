package proxyagent_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"

	"parley.dev/parley/a2a"
	"parley.dev/parley/a2ahttp"
	"parley.dev/parley/client"
	"parley.dev/parley/internal/agents"
	"parley.dev/parley/internal/agents/proxyagent"
	"parley.dev/parley/server"
)

// Example puts a Parley core in front of another A2A agent (here an echo
// agent served over HTTP on a loopback port): the message is forwarded,
// and the upstream's answer lands in the proxy's own task.
func Example() {
	quiet := slog.New(slog.DiscardHandler)
	ctx := context.Background()

	// The upstream: any A2A agent reachable over HTTP.
	hs := httptest.NewUnstartedServer(nil)
	upCard, _ := agents.Card("echo", []*a2a.AgentInterface{{Url: "http://" + hs.Listener.Addr().String(), ProtocolBinding: a2a.BindingHTTPJSON, ProtocolVersion: a2a.ProtocolVersion}})
	upCore, _ := server.New(&server.Options{Card: upCard, Agent: agents.Echo(), Logger: quiet})
	defer upCore.Close(ctx)
	hs.Config.Handler, _ = a2ahttp.New(upCore, &a2ahttp.Options{Card: upCard, Logger: quiet})
	hs.Start()
	defer hs.Close()

	// The proxy: a client for the upstream, the agent, and its card.
	card, err := client.Resolve(ctx, hs.URL, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	c, _ := client.New(card, nil)
	proxy, _ := proxyagent.New(proxyagent.Options{Client: c, Logger: quiet})
	core, err := server.New(&server.Options{
		Card:  proxyagent.Card(card, []*a2a.AgentInterface{{Url: "http://localhost:8081/", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.ProtocolVersion}}),
		Agent: proxy, Logger: quiet,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer core.Close(ctx)
	// Serving core with a2ahttp, give it proxy.Middleware() in
	// a2ahttp.Options.Middleware: callers then get the upstream's errors.

	call := a2a.WithCallInfo(ctx, &a2a.CallInfo{Version: a2a.ProtocolVersion})
	resp, err := core.SendMessage(call, &a2a.SendMessageRequest{Message: a2a.UserMessage("hello upstream")})
	if err != nil {
		fmt.Println(err)
		return
	}
	task := resp.GetTask()
	fmt.Println(task.GetStatus().GetState(), a2a.ArtifactText(task.GetArtifacts()[0]))
	// Output:
	// TASK_STATE_COMPLETED hello upstream
}
