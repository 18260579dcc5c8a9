// Package mcpagent serves the tools of an MCP server as an A2A agent: the
// server runs as a supervised child over stdio, or is reached over MCP's
// streamable HTTP transport, with the official MCP Go SDK as its client.
//
// Each tool is a skill of the card. A message names the tool and its
// arguments (a data part {"tool", "arguments"}, or the text "NAME
// {json}"); the call's result becomes the task's artifact, and the task
// ends COMPLETED, or FAILED when the tool reports isError. While the tool
// runs, its progress notifications are WORKING status updates, an A2A
// cancel becomes notifications/cancelled, and an elicitation request
// makes the task INPUT_REQUIRED until a follow-up message answers it
// (spec §4.1.3: an interrupted state; a cancel is §3.1.5), or the server
// stops: then the task ends FAILED at once (server.TaskHandle).
package mcpagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/server"
)

// clientVersion is the version Parley gives as the MCP client's
// (clientInfo.version): the version of this mapping.
const clientVersion = "1.0.0"

// Options configures the agent: Command or URL, exactly one.
type Options struct {
	// Command is the MCP server's program and arguments, run as a child
	// that speaks MCP on its standard input and output.
	Command []string
	// Env is the child's environment (nil: none at all).
	Env []string
	// URL is the MCP endpoint of a server over streamable HTTP.
	URL string
	// HTTPClient calls URL; default http.DefaultClient.
	HTTPClient *http.Client
	// Logger receives the child's standard error and what goes wrong;
	// default slog.Default().
	Logger *slog.Logger
	// StartTimeout bounds starting the server and listing its tools, and
	// how long a message waits for a server being started again; default
	// 30 s.
	StartTimeout time.Duration
	// StopGrace is how long the child has to exit once its standard input
	// is closed, and again after SIGTERM, before SIGKILL; default 5 s.
	StopGrace time.Duration
	// KeepAlive is how often the server is pinged (MCP ping), each ping
	// given half the interval; a server that misses keepAliveMisses in a
	// row is taken for hung: the calls on its session end FAILED, the
	// session is closed (the child stopped) and the server started again.
	// Default 30 s; negative: no pings, and a hung server holds its calls
	// until they are canceled.
	KeepAlive time.Duration
	// CallTimeout bounds how long a tool call may run; the time it waits
	// for an answer to its question (INPUT_REQUIRED) is not counted. A
	// call past it is canceled (notifications/cancelled) and its task
	// ends FAILED saying so. 0: DefaultCallTimeout; negative: no limit.
	CallTimeout time.Duration
}

// DefaultCallTimeout is Options.CallTimeout's default, that of a program
// run by --exec (execagent.DefaultTimeout): a tool that runs longer is
// most likely stuck, and its task is better ended than left WORKING.
const DefaultCallTimeout = 10 * time.Minute

// Agent is the MCP server's tools as an A2A agent. It implements
// server.Agent; Close stops the server.
type Agent struct {
	sup   *supervisor
	log   *slog.Logger
	first *conn // the session the card was made from
	seq   atomic.Uint64

	mu      sync.Mutex
	calls   map[string]*call // by Parley task id, until their end is reported
	byToken map[string]*call // by progress token
	closing bool             // Close began: a call begun now is stopped at once
}

// errClosing is why the calls still in flight when the agent closes stop.
var errClosing = errors.New("Parley is stopping")

// New starts the MCP server (or opens its session), lists its tools, and
// returns the agent; ctx bounds only the start.
func New(ctx context.Context, o Options) (*Agent, error) {
	if (len(o.Command) == 0) == (o.URL == "") {
		return nil, errors.New("mcpagent: give a Command or a URL")
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = 30 * time.Second
	}
	if o.StopGrace <= 0 {
		o.StopGrace = 5 * time.Second
	}
	if o.KeepAlive == 0 {
		o.KeepAlive = 30 * time.Second
	}
	if o.CallTimeout == 0 {
		o.CallTimeout = DefaultCallTimeout
	}
	a := &Agent{log: o.Logger, calls: map[string]*call{}, byToken: map[string]*call{}}
	client := mcp.NewClient(&mcp.Implementation{Name: "parley", Title: "Parley", Version: clientVersion}, &mcp.ClientOptions{
		Capabilities:                &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}},
		ElicitationHandler:          a.elicit,
		ProgressNotificationHandler: a.progress,
		MultiRoundTrip:              &mcp.MultiRoundTripOptions{Disabled: true},
	})
	a.sup = &supervisor{o: o, client: client, log: o.Logger, hung: a.stopCalls}
	ctx, cancel := context.WithTimeout(ctx, o.StartTimeout)
	defer cancel()
	first, err := a.sup.start(ctx)
	if err != nil {
		return nil, err
	}
	a.first = first
	return a, nil
}

// Close stops the MCP server; the calls in flight end FAILED. The calls
// are stopped first (notifications/cancelled, and their elicitations
// withdrawn): closing an MCP session waits for its requests in flight,
// and a call whose task waits for input (INPUT_REQUIRED) has no
// execution that shutting the server core down would cancel.
func (a *Agent) Close() error {
	a.mu.Lock()
	a.closing = true
	calls := make([]*call, 0, len(a.calls))
	for _, c := range a.calls {
		calls = append(calls, c)
	}
	a.mu.Unlock()
	for _, c := range calls {
		c.stop(errClosing)
	}
	a.sup.shutdown()
	return nil
}

// Tools is the names of the tools, as listed at start.
func (a *Agent) Tools() []string { return append([]string(nil), a.first.tools.names...) }

// Execute implements server.Agent: a follow-up on a task whose tool asked
// a question answers it; any other message calls a tool.
func (a *Agent) Execute(ctx context.Context, req *server.Request, em *server.Emitter) error {
	if c := a.pending(req.TaskID); c != nil {
		return c.reply(ctx, req.Message, em)
	}
	wait, cancel := context.WithTimeout(ctx, a.sup.o.StartTimeout)
	cn, err := a.sup.session(wait)
	cancel()
	if err != nil {
		return server.IgnoreClosed(em.StatusText(a2a.TaskState_TASK_STATE_FAILED, err.Error()))
	}
	inv, err := cn.tools.invocationOf(req.Message)
	if err != nil {
		return server.IgnoreClosed(em.StatusText(a2a.TaskState_TASK_STATE_REJECTED, err.Error()))
	}
	if err := em.Status(a2a.TaskState_TASK_STATE_WORKING, nil); err != nil {
		return server.IgnoreClosed(err)
	}
	c := a.begin(req.TaskID, cn, inv)
	return c.follow(ctx, em)
}

// stopCalls stops the calls on the session cn with cause (the server
// hung): their tasks, when followed, end FAILED with it.
func (a *Agent) stopCalls(cn *conn, cause error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, c := range a.calls {
		if c.cn == cn {
			c.stop(cause)
		}
	}
}

// begin starts a tool call for a task.
func (a *Agent) begin(task string, cn *conn, inv invocation) *call {
	c := newCall(a, task, cn, inv, "parley-"+strconv.FormatUint(a.seq.Add(1), 10))
	a.mu.Lock()
	a.calls[task], a.byToken[c.token] = c, c
	if a.closing {
		c.stop(errClosing)
	}
	a.mu.Unlock()
	go c.run()
	return c
}

// pending is the call of a task whose end was not reported yet.
func (a *Agent) pending(task string) *call {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.calls[task]
}

// forget drops a call whose end was reported (or whose task ended).
func (a *Agent) forget(c *call) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.calls[c.task] == c {
		delete(a.calls, c.task)
	}
	delete(a.byToken, c.token)
}

// progress relays a progress notification to its call.
func (a *Agent) progress(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	tok, _ := req.Params.ProgressToken.(string)
	a.mu.Lock()
	c := a.byToken[tok]
	a.mu.Unlock()
	if c != nil {
		c.notify(req.Params)
	}
}

// elicit hands an elicitation request to the tool call it belongs to. A
// request carries nothing that names its call (MCP 2025-11-25), so it
// goes to the only call in flight on its session; when there are several,
// to the only one of them not waiting for an answer already. Otherwise
// (none, or no single one) it is answered "cancel" and logged. A request
// given to a call that waits for an answer supersedes that question (see
// call.ask): most often the server withdrew it and asks anew.
func (a *Agent) elicit(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	var only, idle *call
	n, nIdle := 0, 0
	a.mu.Lock()
	for _, c := range a.calls {
		if c.cn.sess != req.Session || c.finished() {
			continue
		}
		only, n = c, n+1
		if c.running() {
			idle, nIdle = c, nIdle+1
		}
	}
	a.mu.Unlock()
	if n > 1 && nIdle == 1 {
		only, n = idle, 1
	}
	if n != 1 || req.Params.Mode == "url" {
		a.log.Warn("an elicitation request answered cancel: it names no call, and there is no one call in flight to give it to (or it asks for a URL)",
			"callsInFlight", n, "message", req.Params.Message)
		return &mcp.ElicitResult{Action: "cancel"}, nil
	}
	return only.ask(ctx, req.Params)
}

// Middleware returns the server middleware (a2ahttp.Options.Middleware)
// that stops a tool call when its task is canceled while no message is
// being handled for it (the task was INPUT_REQUIRED): the MCP server gets
// notifications/cancelled.
func (a *Agent) Middleware() a2a.Middleware {
	return func(next a2a.Invoker) a2a.Invoker {
		return a2a.InvokerFuncs{
			Next: next,
			CallFunc: func(ctx context.Context, m *a2a.Method, req proto.Message) (proto.Message, error) {
				resp, err := next.Call(ctx, m, req)
				if t, ok := resp.(*a2a.Task); ok && err == nil && m.Name == a2a.MethodCancelTask &&
					t.GetStatus().GetState() == a2a.TaskState_TASK_STATE_CANCELED {
					if c := a.pending(t.GetId()); c != nil {
						c.stop(server.ErrCanceled)
						a.forget(c)
					}
				}
				return resp, err
			},
		}
	}
}

// jsonMarshal is json.Marshal, named once for the mappings.
func jsonMarshal(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	return b, nil
}
