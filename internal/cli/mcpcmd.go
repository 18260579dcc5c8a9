package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"parley.dev/parley/internal/mcpout"
)

const mcpSynopsis = `mcp -a AGENT [flags]
       mcp URL [flags]

Serves the A2A agent at URL as an MCP server: one MCP tool per skill of
its card, each call a message to the agent (docs/mcp.md has the mapping).
By default over stdio, the way MCP hosts start local servers: standard
output carries MCP messages only, the log goes to standard error, and the
command exits when standard input closes. --http ADDR serves MCP's
streamable HTTP transport at http://ADDR/mcp instead (127.0.0.1 when ADDR
names no host; a request with a foreign Origin is refused).

The client flags reach the agent as for parley send (--bearer, --api-key,
--header, --transport, TLS); --timeout bounds reading the agent's card at
start (default 30s), not the calls.

An MCP host's configuration names it as a local server:
  {"mcpServers": {"agent": {"command": "parley", "args": ["mcp", "http://127.0.0.1:8080"]}}}`

// mcpCmd runs `parley mcp URL`.
func mcpCmd(ctx context.Context, e *env, args []string) error {
	fs, c := e.newFlags(mcpSynopsis, true)
	addr := fs.String("http", "", "serve MCP's streamable HTTP transport at `ADDR` (path /mcp) instead of stdio")
	maxSessions := fs.Int("max-sessions", mcpout.DefaultMaxSessions, "with --http, the MCP sessions kept at once; past it a new session is refused (503, Retry-After) until one closes (0: no limit)")
	writeTimeout := fs.Duration("write-timeout", mcpout.DefaultWriteTimeout, "the longest the MCP client may take to read one message; past it, over stdio the session ends (the command exits), over --http the connection is closed (0: no limit)")
	maxResult := fs.Int("max-result", mcpout.DefaultMaxResultBytes, "the largest tool result, in `BYTES` of JSON, sent in one MCP message; a larger one is a tool error naming the task, whose result stays at the agent (0: no limit)")
	pos, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	c.json = false // stdout is the MCP transport's: no JSON error envelope there
	if err := wantArgs(pos, 1, 1, "the agent URL"); err != nil {
		return err
	}
	cctx, cancel := c.context(ctx, defaultTimeout)
	cl, err := c.connect(cctx, pos[0])
	cancel()
	if err != nil {
		return err
	}
	defer cl.Close()
	level := slog.LevelInfo
	if c.debug {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: level}))
	b, err := mcpout.New(cl, &mcpout.Options{Logger: log, Version: readBuildInfo().version, MaxSessions: noLimit(*maxSessions), MaxResultBytes: noLimit(*maxResult),
		WriteTimeout: noLimit(*writeTimeout)})
	if err != nil {
		return err
	}
	if *addr != "" {
		return e.serveMCPHTTP(ctx, b, mcpout.LoopbackAddr(*addr))
	}
	log.Info("parley mcp: serving the A2A agent over stdio", "agent", pos[0], "tools", len(b.Tools()))
	err = b.Run(ctx, b.Stdio(os.Stdin, e.stdout))
	if err == nil || errors.Is(err, io.EOF) || ctx.Err() != nil {
		return nil // standard input closed, or the command was stopped
	}
	return err
}

// serveMCPHTTP serves the bridge over streamable HTTP at addr until ctx
// ends.
func (e *env) serveMCPHTTP(ctx context.Context, b *mcpout.Bridge, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	if ip := tcpIP(ln.Addr()); ip == nil || !ip.IsLoopback() {
		fmt.Fprintf(e.stderr, "parley mcp: warning: %s is not a loopback address: whoever reaches it calls the agent with this command's credentials "+
			"(the MCP endpoint asks for none)\n", ln.Addr())
	}
	srv := &http.Server{Handler: b.Handler(), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(e.stderr, "parley mcp: serving the agent's %d tools over MCP streamable HTTP at http://%s%s\n", len(b.Tools()), ln.Addr(), mcpout.Path)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close() // open SSE streams do not end by themselves
	}
	return nil
}

// tcpIP is the IP address of a listener's address (nil for another kind).
func tcpIP(a net.Addr) net.IP {
	if ta, ok := a.(*net.TCPAddr); ok {
		return ta.IP
	}
	return nil
}
