package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/url"
	"strings"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/agents/execagent"
	"parley.dev/parley/internal/agents/mcpagent"
)

// mcpFlags are the flags of `parley serve --mcp`.
type mcpFlags struct {
	spec  string
	env   multiFlag
	opts  mcpagent.Options
	agent *mcpagent.Agent // once started
}

// addMCPFlags adds --mcp, --mcp-call-timeout and --mcp-env to fs.
func addMCPFlags(fs *flag.FlagSet) *mcpFlags {
	m := &mcpFlags{}
	fs.StringVar(&m.spec, "mcp", "", "serve the tools of an MCP server as the agent: `CMD` (split like a shell's words, no shell) is started as a child speaking MCP over stdio, supervised (started again when it dies) and stopped with this server; an http(s) URL is an MCP server over streamable HTTP")
	fs.DurationVar(&m.opts.CallTimeout, "mcp-call-timeout", mcpagent.DefaultCallTimeout, "cancel a tool call running longer than this (notifications/cancelled) and fail its task; the time it waits for an answer is not counted (0: no limit)")
	fs.Var(&m.env, "mcp-env", "pass the variable `NAME` of this server's environment to the --mcp child too (repeatable); otherwise it gets only PATH, HOME, LANG, LC_*, TZ and TMPDIR")
	return m
}

// check reads --mcp, --mcp-call-timeout and --mcp-env.
func (m *mcpFlags) check() error {
	if m.opts.CallTimeout < 0 {
		return usageError{errors.New("--mcp-call-timeout cannot be negative (0: no limit)")}
	}
	m.opts.CallTimeout = noLimit(m.opts.CallTimeout)
	for _, name := range m.env {
		if !execagent.ValidEnvName(name) {
			return usageError{fmt.Errorf("--mcp-env %q: want the name of a variable of this server's environment (letters, digits and _), which passes with its value", name)}
		}
	}
	if strings.HasPrefix(m.spec, "http://") || strings.HasPrefix(m.spec, "https://") {
		if u, err := url.Parse(m.spec); err != nil || u.Host == "" {
			return usageError{fmt.Errorf("--mcp %q: not a URL with a host", m.spec)}
		}
		if len(m.env) > 0 {
			return usageError{errors.New("--mcp-env is for a --mcp command; an MCP server at a URL runs elsewhere")}
		}
		m.opts.URL = m.spec
		return nil
	}
	var err error
	if m.opts.Command, err = execagent.SplitWords(m.spec); err != nil {
		return usageError{fmt.Errorf("--mcp %q: %v", m.spec, err)}
	}
	if len(m.opts.Command) == 0 {
		return usageError{errors.New("--mcp: the command is empty")}
	}
	return nil
}

// startMCP starts the MCP server and makes its tools the agent.
func (b *backendFlags) startMCP(ctx context.Context, cfg *serveConfig, log *slog.Logger) error {
	m := b.mcp
	o := m.opts
	o.Logger = log.With("agent", "mcp")
	if o.URL == "" {
		o.Env = execagent.AllowedEnv(m.env)
		log.Warn("--mcp runs a program with this server's privileges", "command", o.Command)
	}
	a, err := mcpagent.New(ctx, o)
	if err != nil {
		return fmt.Errorf("--mcp %s: %w", m.spec, err)
	}
	m.agent = a
	cfg.agent, cfg.agentName = a, "mcp"
	b.card = func(ifaces []*a2a.AgentInterface) *a2a.AgentCard { return a.Card(ifaces) }
	log.Info("serving an MCP server's tools", "server", m.spec, "tools", a.Tools())
	return nil
}

// stop stops what start started: the --mcp server.
func (b *backendFlags) stop() {
	if b.mcp.agent != nil {
		_ = b.mcp.agent.Close()
	}
}
