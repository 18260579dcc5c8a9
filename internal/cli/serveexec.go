package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/agents"
	"parley.dev/parley/internal/agents/execagent"
)

// backendFlags are the flags of `parley serve` that choose what answers
// the messages instead of a built-in agent: a program (--exec), another
// A2A agent (--proxy) or an MCP server's tools (--mcp).
type backendFlags struct {
	exec       string
	execFormat string
	chunk      string
	execOpts   execagent.Options
	execEnv    multiFlag
	proxy      string
	proxyFlags *proxyFlags
	mcp        *mcpFlags
	agentGiven bool // --agent was on the command line
	card       func(ifaces []*a2a.AgentInterface) *a2a.AgentCard
}

// addBackendFlags adds the --exec and --proxy flags to fs.
func addBackendFlags(fs *flag.FlagSet) *backendFlags {
	b := &backendFlags{}
	fs.StringVar(&b.exec, "exec", "", "run `CMD` once per message as the agent (split like a shell's words, no shell: write sh -c '…' for one); it runs with this server's privileges")
	fs.StringVar(&b.execFormat, "exec-format", "text", "how --exec talks: text (message text in, standard output streamed out) or jsonl (JSON lines both ways)")
	fs.StringVar(&b.chunk, "chunk", "line", "where --exec text output is cut into artifact chunks: line or bytes")
	fs.DurationVar(&b.execOpts.Timeout, "exec-timeout", execagent.DefaultTimeout, "stop a program running longer than this (its process group: SIGTERM, then SIGKILL after --exec-grace) and fail its task (0: no limit)")
	fs.IntVar(&b.execOpts.Concurrency, "exec-concurrency", execagent.DefaultConcurrency(), "most programs running at once (0: no limit; unless given, twice the CPUs of this machine); further messages wait in arrival order, their task SUBMITTED with the status message \"queued: N ahead\"")
	fs.Var(&b.execEnv, "exec-env", "pass the variable `NAME` of this server's environment to the programs too (repeatable); otherwise they get only PATH, HOME, LANG, LC_*, TZ and TMPDIR, and the PARLEY_* variables of their task")
	fs.DurationVar(&b.execOpts.Grace, "exec-grace", execagent.DefaultGrace, "time a program has to exit after SIGTERM (cancel, timeout) before SIGKILL")
	fs.StringVar(&b.proxy, "proxy", "", "serve the A2A agent at `URL` (its base or card URL): messages are forwarded with Parley's client and its events kept in Parley's tasks")
	b.proxyFlags = addProxyFlags(fs)
	b.mcp = addMCPFlags(fs)
	fs.Int64Var(&b.execOpts.MaxOutput, "exec-max-output", execagent.DefaultMaxOutput, "most bytes one run may write to standard output; a program writing more is stopped and its task fails")
	return b
}

// check reads the backend flags once fs is parsed.
func (b *backendFlags) check(fs *flag.FlagSet) error {
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "agent" {
			b.agentGiven = true
		}
	})
	given := 0
	for _, v := range []string{b.exec, b.proxy, b.mcp.spec} {
		if v != "" {
			given++
		}
	}
	switch {
	case given > 1:
		return usageError{errors.New("--exec, --proxy and --mcp each choose the agent: give one of them")}
	case given == 1 && b.agentGiven:
		return usageError{errors.New("--agent chooses a built-in agent; --exec, --proxy and --mcp replace it: give one of them")}
	case b.mcp.spec != "":
		return b.mcp.check()
	}
	if b.proxy != "" {
		if _, err := bindingOf(b.proxyFlags.binding); err != nil {
			return usageError{fmt.Errorf("--proxy-binding %q: want jsonrpc, rest or grpc", b.proxyFlags.binding)}
		}
		return checkAgentURL(b.proxy)
	}
	if b.exec == "" {
		return nil
	}
	var err error
	if b.execOpts.Command, err = execagent.SplitWords(b.exec); err != nil {
		return usageError{fmt.Errorf("--exec %q: %v", b.exec, err)}
	}
	if len(b.execOpts.Command) == 0 {
		return usageError{errors.New("--exec: the command is empty")}
	}
	if b.execOpts.Format, err = either("--exec-format", b.execFormat, "text", execagent.Text, "jsonl", execagent.JSONLines); err != nil {
		return err
	}
	if b.execOpts.Chunk, err = either("--chunk", b.chunk, "line", execagent.Lines, "bytes", execagent.Bytes); err != nil {
		return err
	}
	if b.execOpts.Timeout < 0 || b.execOpts.Concurrency < 0 || b.execOpts.Grace <= 0 || b.execOpts.MaxOutput <= 0 {
		return usageError{errors.New("--exec-timeout and --exec-concurrency cannot be negative; --exec-grace and --exec-max-output must be positive")}
	}
	// On the command line 0 asks for no limit; the library says that with
	// a negative value (its 0 means the default).
	if b.execOpts.Timeout == 0 {
		b.execOpts.Timeout = -1
	}
	if b.execOpts.Concurrency == 0 {
		b.execOpts.Concurrency = -1
	}
	for _, name := range b.execEnv {
		if !execagent.ValidEnvName(name) {
			return usageError{fmt.Errorf("--exec-env %q: want the name of a variable of this server's environment (letters, digits and _), which passes with its value", name)}
		}
	}
	b.execOpts.PassEnv = b.execEnv
	return nil
}

// start makes the agent of --exec or --proxy, when one is given, and sets
// it, its name and the card it serves on cfg.
func (b *backendFlags) start(ctx context.Context, cfg *serveConfig, log *slog.Logger) error {
	switch {
	case b.exec != "":
		o := b.execOpts
		o.Logger = log.With("agent", "exec")
		a, err := execagent.New(o)
		if err != nil {
			return usageError{err}
		}
		cfg.agent, cfg.agentName = a, "exec"
		b.card = func(ifaces []*a2a.AgentInterface) *a2a.AgentCard { return execagent.Card(o, ifaces) }
		log.Warn("--exec runs a program per message with this server's privileges", "command", o.Command)
		log.Info("exec limits", "concurrency", limitText(o.Concurrency), "timeout", limitText(o.Timeout), "passEnv", o.PassEnv)
	case b.proxy != "":
		return b.startProxy(ctx, cfg, log)
	case b.mcp.spec != "":
		return b.startMCP(ctx, cfg, log)
	}
	return nil
}

// limitText is how the exec limits are logged: "none" for no limit.
func limitText[T int | time.Duration](v T) string {
	if v < 0 {
		return "none"
	}
	return fmt.Sprint(v)
}

// agentCard returns the card of the agent being served, listing ifaces.
func (cfg *serveConfig) agentCard(ifaces []*a2a.AgentInterface) (*a2a.AgentCard, error) {
	if cfg.backend.card != nil {
		return cfg.backend.card(ifaces), nil
	}
	return agents.Card(cfg.agentName, ifaces)
}

// either reads the value v of the flag name, which is one of two words:
// a for the word wa, b for wb; any other value is a usage error.
func either[T any](name, v, wa string, a T, wb string, b T) (T, error) {
	switch v {
	case wa:
		return a, nil
	case wb:
		return b, nil
	}
	var zero T
	return zero, usageError{fmt.Errorf("%s %q: want %s or %s", name, v, wa, wb)}
}
