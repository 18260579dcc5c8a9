// Package mcpout serves an A2A agent as an MCP server: one MCP tool per
// skill of the agent's card, each call an A2A message to the agent, with
// the task's semantics carried across. It is the A2A side of `parley mcp`;
// the MCP side is the official MCP Go SDK, used as it is.
//
// A tools/call sends the message (spec §3.1.1, SendMessage; §3.1.2,
// SendStreamingMessage when the card declares streaming, so that the task
// is known from its first event and a cancelled call can cancel it, §3.1.5)
// and answers when the task is terminal or interrupted (§4.1.3). A task
// waiting INPUT_REQUIRED asks the MCP client through elicitation when the
// client declared it, and the answer goes back to the agent as a follow-up
// on the same task; otherwise the call returns the agent's question with
// the task id, and a later call with taskId continues.
//
// Nothing here writes to stdout: the bridge logs to its Options.Logger.
package mcpout

import (
	"cmp"
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
)

// Options configure a Bridge; nil means the defaults.
type Options struct {
	// Logger receives the bridge's own log (never message content above
	// debug level); nil discards it.
	Logger *slog.Logger
	// Version is the version the MCP server reports for itself in its
	// serverInfo ("" : "(devel)").
	Version string
	// MaxSessions bounds the streamable HTTP sessions Handler keeps at
	// once (0: DefaultMaxSessions; negative: no bound).
	MaxSessions int
	// MaxResultBytes bounds the JSON of one tool result (0:
	// DefaultMaxResultBytes; negative: no bound). A larger result is a
	// tool error saying so and naming the task, whose result stays at the
	// agent.
	MaxResultBytes int
	// WriteTimeout bounds each write of a message to the MCP client (0:
	// DefaultWriteTimeout; negative: no bound). Over streamable HTTP a
	// client that stops reading holds no more than that: the write fails,
	// its message is dropped and the HTTP connection closed; over stdio
	// (Stdio) the session ends.
	WriteTimeout time.Duration
}

// DefaultWriteTimeout is Options.WriteTimeout's default. One write is one
// message (an SSE event: a result of up to DefaultMaxResultBytes), so a
// minute leaves a client some 250 KB/s.
const DefaultWriteTimeout = time.Minute

// DefaultMaxResultBytes is Options.MaxResultBytes's default: 15 MiB, so
// that the result and its JSON-RPC envelope fit in the 16 MiB that the
// MCP Go SDK reads in one message (a line over stdio, an event over
// streamable HTTP: mcp.DefaultMaxLineLength, mcp.DefaultMaxEventSize).
// Over stdio a client that meets a longer line cannot skip it and closes
// the session, losing every call in it.
const DefaultMaxResultBytes = 15 << 20

// Bridge is one A2A agent as an MCP server. It is safe for concurrent use:
// every MCP session and every call share the one A2A client.
type Bridge struct {
	cl     *client.Client
	card   *a2a.AgentCard
	log    *slog.Logger
	ver    string
	max    int           // Options.MaxSessions, resolved; negative: no bound
	maxRes int           // Options.MaxResultBytes, resolved; negative: no bound
	write  time.Duration // Options.WriteTimeout, resolved; negative: no bound
	tools  []*mcp.Tool
	skills []*a2a.AgentSkill
}

// New returns the bridge to the agent cl calls. The caller keeps cl and
// closes it after the bridge's servers are done.
func New(cl *client.Client, opts *Options) (*Bridge, error) {
	if cl == nil {
		return nil, errors.New("mcpout: no A2A client")
	}
	if opts == nil {
		opts = &Options{}
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	b := &Bridge{cl: cl, card: cl.Card(), log: log, ver: opts.Version, max: opts.MaxSessions}
	if b.max == 0 {
		b.max = DefaultMaxSessions
	}
	b.maxRes = cmp.Or(opts.MaxResultBytes, DefaultMaxResultBytes)
	b.write = cmp.Or(opts.WriteTimeout, DefaultWriteTimeout)
	if b.ver == "" {
		b.ver = "(devel)"
	}
	b.skills = skillsOf(b.card)
	for i, name := range toolNames(b.skills) {
		b.tools = append(b.tools, toolFor(name, b.skills[i]))
	}
	return b, nil
}

// Tools returns the MCP tools the bridge serves, one per skill in the
// card's order. The caller must not modify them.
func (b *Bridge) Tools() []*mcp.Tool { return b.tools }

// Server returns a new MCP server with the bridge's tools: one per MCP
// session over streamable HTTP, or the one a stdio transport runs.
func (b *Bridge) Server() *mcp.Server {
	name := b.card.GetName()
	if name == "" {
		name = "a2a-agent"
	}
	s := mcp.NewServer(&mcp.Implementation{Name: name, Title: b.card.GetName() + " (A2A, through parley mcp)", Version: b.ver},
		&mcp.ServerOptions{Instructions: b.card.GetDescription(), Logger: b.sdkLog()})
	for _, t := range b.tools {
		s.AddTool(t, b.call)
	}
	return s
}

// Run serves the bridge over t until the client goes away (for stdio: its
// standard input closes) or ctx ends.
func (b *Bridge) Run(ctx context.Context, t mcp.Transport) error {
	return b.Server().Run(ctx, t)
}

// Stdio is the stdio transport over in and out (which it never closes),
// each write to out bounded by Options.WriteTimeout: a host that takes no
// message from out for that long is taken for gone, and the session ends
// (the A2A tasks of its calls canceled) rather than hold every answer
// waiting behind the one it does not take.
func (b *Bridge) Stdio(in io.ReadCloser, out io.Writer) mcp.Transport {
	w := io.WriteCloser(nopCloser{out})
	if b.write > 0 {
		w = &timedWriter{w: out, d: b.write}
	}
	return &mcp.IOTransport{Reader: in, Writer: w}
}

// errStalled is why the writes to a stdio client fail once one of them
// took longer than the write timeout.
var errStalled = errors.New("the MCP client took no message for the write timeout: taken for gone")

// timedWriter bounds each write to w by d. The SDK writes one message at a
// time; a write still blocked after d is left to its goroutine (holding
// that one message), and it and every later write fail, which ends the
// session.
type timedWriter struct {
	w io.Writer
	d time.Duration

	mu    sync.Mutex
	stuck bool // a write took longer than d
}

func (t *timedWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stuck {
		return 0, errStalled
	}
	type result struct {
		n   int
		err error
	}
	done := make(chan result, 1)
	go func() {
		n, err := t.w.Write(p)
		done <- result{n, err}
	}()
	timer := time.NewTimer(t.d)
	defer timer.Stop()
	select {
	case r := <-done:
		return r.n, r.err
	case <-timer.C:
		t.stuck = true
		return 0, errStalled
	}
}

// Close does nothing: out belongs to the caller.
func (t *timedWriter) Close() error { return nil }

// nopCloser is a writer the MCP transport may close without closing it.
type nopCloser struct{ io.Writer }

// Close does nothing.
func (nopCloser) Close() error { return nil }

// sdkLog is the logger the MCP SDK gets: the bridge's, without the SDK's
// per-session info lines unless the bridge logs at debug level.
func (b *Bridge) sdkLog() *slog.Logger {
	if b.log.Enabled(context.Background(), slog.LevelDebug) {
		return b.log
	}
	return slog.New(warnFloor{b.log.Handler()})
}

// warnFloor passes records of level Warn and above.
type warnFloor struct{ slog.Handler }

// Enabled reports whether l is at least Warn and the handler takes it.
func (w warnFloor) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn && w.Handler.Enabled(ctx, l)
}

// WithAttrs keeps the floor.
func (w warnFloor) WithAttrs(as []slog.Attr) slog.Handler { return warnFloor{w.Handler.WithAttrs(as)} }

// WithGroup keeps the floor.
func (w warnFloor) WithGroup(name string) slog.Handler { return warnFloor{w.Handler.WithGroup(name)} }
