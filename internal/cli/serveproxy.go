package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/a2ahttp"
	"parley.dev/parley/client"
	"parley.dev/parley/internal/agents/proxyagent"
)

// proxyFlags are how `parley serve --proxy` calls the upstream agent.
type proxyFlags struct {
	token   string
	headers multiFlag
	binding string
	agent   *proxyagent.Agent // once started
}

// addProxyFlags adds the flags of the upstream's calls to fs.
func addProxyFlags(fs *flag.FlagSet) *proxyFlags {
	p := &proxyFlags{}
	fs.StringVar(&p.token, "proxy-token", "", "bearer `TOKEN` sent to the --proxy agent on every call")
	fs.Var(&p.headers, "proxy-header", "extra `KEY=VALUE` header sent to the --proxy agent (repeatable)")
	fs.StringVar(&p.binding, "proxy-binding", "", "the only binding used to call the --proxy agent: jsonrpc, rest or grpc (default: the card's order)")
	return p
}

// startProxy fetches the upstream's card, and makes the agent that
// forwards to it, its card (the upstream's skills) and its middleware.
func (b *backendFlags) startProxy(ctx context.Context, cfg *serveConfig, log *slog.Logger) error {
	p := b.proxyFlags
	c := &common{token: p.token, headers: p.headers, binding: p.binding,
		warn: func(msg string) { log.Warn("upstream card: " + msg) }}
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	upstream, err := c.connect(rctx, b.proxy)
	if errors.Is(err, client.ErrLegacyCard) {
		return fmt.Errorf("--proxy %s: the agent's A2A v0.3 card could not be read: %w", b.proxy, err)
	}
	if err != nil {
		return fmt.Errorf("--proxy %s: %w", b.proxy, err)
	}
	a, err := proxyagent.New(proxyagent.Options{Client: upstream, Logger: log.With("agent", "proxy")})
	if err != nil {
		return err
	}
	p.agent = a
	cfg.agent, cfg.agentName = a, "proxy"
	up := upstream.Card()
	b.card = func(ifaces []*a2a.AgentInterface) *a2a.AgentCard { return proxyagent.Card(up, ifaces) }
	log.Info("proxying", "upstream", b.proxy, "name", up.GetName(), "interface", upstream.Interface().GetUrl())
	return nil
}

// applyHTTP adds the middleware of the proxy (upstream errors, cancel)
// or of --mcp (cancel) to the handler's options.
func (b *backendFlags) applyHTTP(o *a2ahttp.Options) {
	if b.proxyFlags.agent != nil {
		o.Middleware = append(o.Middleware, b.proxyFlags.agent.Middleware())
	}
	if b.mcp.agent != nil {
		o.Middleware = append(o.Middleware, b.mcp.agent.Middleware())
	}
}
