// Package execagent makes any program an A2A agent: each message the server
// accepts runs the program once, in a process group of its own, with the
// message on standard input and the task's identity in its environment.
//
// In the Text format the message's text parts are the program's input and
// its standard output is streamed, as it is produced, as the chunks of one
// artifact ("output"); exit status 0 completes the task, any other status
// fails it with the last lines of standard error as the status message. In
// the JSONLines format the program reads the request as one JSON object and
// writes one JSON object per line: status changes (INPUT_REQUIRED with a
// question, AUTH_REQUIRED, a final state) and artifacts with text, data or
// file parts (see docs/serving.md#any-program-as-an-agent).
//
// The programs run with the privileges of the server that runs them.
package execagent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/server"
)

// Format is how a program and the agent talk.
type Format int

// The formats.
const (
	// Text: text in, standard output streamed as one artifact's chunks.
	Text Format = iota
	// JSONLines: the request as one JSON line in, events as JSON lines out.
	JSONLines
)

// Chunking is where the Text format cuts standard output into chunks.
type Chunking int

// The chunkings.
const (
	// Lines: a chunk ends at a line end; the complete lines read at once
	// make one chunk, and a last line without a newline is sent when the
	// program ends.
	Lines Chunking = iota
	// Bytes: whatever one read of the pipe returns is a chunk (a UTF-8
	// character cut by the read waits for its end).
	Bytes
)

// Defaults of Options.
const (
	DefaultGrace     = 5 * time.Second
	DefaultMaxOutput = 16 << 20
	DefaultMaxLine   = 4 << 20
	// tailLines is how many lines of standard error a FAILED status
	// message quotes.
	tailLines = 10
)

// OutputArtifactID is the id of the artifact the Text format streams.
const OutputArtifactID = "output"

// Options configures the agent. Command is required.
type Options struct {
	// Command is the program and its arguments (see SplitWords).
	Command []string
	// Format is how the program talks; default Text.
	Format Format
	// Chunk is where the Text format cuts output; default Lines.
	Chunk Chunking
	// Timeout stops a program that runs longer (SIGTERM, then SIGKILL
	// after Grace) and fails its task; 0 means no limit.
	Timeout time.Duration
	// Concurrency is the most programs running at once; further messages
	// wait (their task SUBMITTED) for a free slot. 0 means no limit.
	Concurrency int
	// Grace is how long a program has to exit after SIGTERM before it is
	// killed; default DefaultGrace.
	Grace time.Duration
	// MaxOutput bounds what one run may write to standard output, in
	// bytes; a program that writes more is stopped and its task fails.
	// Default DefaultMaxOutput.
	MaxOutput int64
	// MaxLine bounds one JSON line, in bytes; default DefaultMaxLine.
	MaxLine int
	// Env is added to the server's environment (KEY=VALUE entries).
	Env []string
	// Dir is the working directory; "" is the server's.
	Dir string
	// Logger receives the programs' standard error, one record per line,
	// and their exits; default slog.Default().
	Logger *slog.Logger
}

// Agent runs a program per message. It implements server.Agent.
type Agent struct {
	o     Options
	slots chan struct{} // nil without a concurrency limit
}

// New checks o and returns the agent.
func New(o Options) (*Agent, error) {
	if len(o.Command) == 0 || o.Command[0] == "" {
		return nil, errors.New("execagent: no command")
	}
	if o.Format != Text && o.Format != JSONLines {
		return nil, fmt.Errorf("execagent: unknown format %d", o.Format)
	}
	if o.Timeout < 0 || o.Concurrency < 0 || o.Grace < 0 || o.MaxOutput < 0 || o.MaxLine < 0 {
		return nil, errors.New("execagent: negative limit")
	}
	if o.Grace == 0 {
		o.Grace = DefaultGrace
	}
	if o.MaxOutput == 0 {
		o.MaxOutput = DefaultMaxOutput
	}
	if o.MaxLine == 0 {
		o.MaxLine = DefaultMaxLine
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	a := &Agent{o: o}
	if o.Concurrency > 0 {
		a.slots = make(chan struct{}, o.Concurrency)
	}
	return a, nil
}

// result is what reading a program's output came to.
type result struct {
	// failure, when not "", fails the task: the output broke a rule.
	failure string
	// stopped: the agent may emit nothing more (the task is closed).
	stopped bool
	// settled: the program reported a terminal or interrupted state.
	settled bool
}

// Execute implements server.Agent: it runs the program for one message.
func (a *Agent) Execute(ctx context.Context, req *server.Request, em *server.Emitter) error {
	if !a.acquire(ctx, em) {
		return nil // canceled while waiting
	}
	defer a.release()
	if err := em.Status(a2a.TaskState_TASK_STATE_WORKING, nil); err != nil {
		return ignoreClosed(err)
	}
	input, err := a.input(req)
	if err != nil {
		return em.StatusText(a2a.TaskState_TASK_STATE_FAILED, err.Error())
	}
	runCtx, cancel := ctx, context.CancelFunc(func() {})
	if a.o.Timeout > 0 {
		runCtx, cancel = context.WithTimeoutCause(ctx, a.o.Timeout, errTimeout)
	}
	defer cancel()
	log := a.o.Logger.With("task", req.TaskID)
	p, err := start(a.o.Command, a.env(req), a.o.Dir, input,
		func(line string) { log.Info("program stderr", "line", line) }, tailLines, a.o.Grace)
	if err != nil {
		return em.StatusText(a2a.TaskState_TASK_STATE_FAILED, "the program could not be started: "+err.Error())
	}
	defer p.stdout.Close()
	p.watch(runCtx)
	var res result
	if a.o.Format == JSONLines {
		res = a.readJSONLines(p, em)
	} else {
		res = a.readText(p, em)
	}
	if res.failure != "" || res.stopped {
		p.terminate() // the output broke a rule, or the task is over
	}
	<-p.exited // the watch stops it on cancel and timeout
	log.Debug("program exited", "status", p.exitReason())
	if ctx.Err() != nil || res.stopped {
		return nil // canceled, shut down or closed: the core has the task in hand
	}
	return a.conclude(runCtx, p, res, em)
}

// errTimeout is the cause of a run's context when Options.Timeout passes.
var errTimeout = errors.New("execagent: the program ran too long")

// conclude moves the task to its final state once the program has exited.
func (a *Agent) conclude(runCtx context.Context, p *proc, res result, em *server.Emitter) error {
	why := res.failure
	if why == "" && context.Cause(runCtx) == errTimeout {
		why = fmt.Sprintf("the program ran longer than %s and was stopped", a.o.Timeout)
	}
	if why == "" {
		why = p.exitReason()
	}
	if why != "" {
		if tail := p.tail.String(); tail != "" {
			why += "; its standard error ended with:\n" + tail
		}
		return ignoreClosed(em.StatusText(a2a.TaskState_TASK_STATE_FAILED, why))
	}
	if res.settled {
		return nil
	}
	return ignoreClosed(em.Status(a2a.TaskState_TASK_STATE_COMPLETED, nil))
}

// acquire takes a slot among Options.Concurrency, reporting the task as
// SUBMITTED while it waits. It reports false when ctx ends first.
func (a *Agent) acquire(ctx context.Context, em *server.Emitter) bool {
	if a.slots == nil {
		return true
	}
	select {
	case a.slots <- struct{}{}:
		return true
	default:
	}
	msg := fmt.Sprintf("waiting: %d programs are already running (the most at once)", cap(a.slots))
	if err := em.StatusText(a2a.TaskState_TASK_STATE_SUBMITTED, msg); err != nil {
		return false
	}
	select {
	case a.slots <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

// release gives back the slot acquire took.
func (a *Agent) release() {
	if a.slots != nil {
		<-a.slots
	}
}

// env is the program's environment: the server's, Options.Env, and the
// task's identity.
func (a *Agent) env(req *server.Request) []string {
	env := append(os.Environ(), a.o.Env...)
	state := ""
	if req.Task != nil {
		state = strings.TrimPrefix(req.Task.GetStatus().GetState().String(), "TASK_STATE_")
	}
	return append(env,
		"PARLEY_TASK_ID="+req.TaskID,
		"PARLEY_CONTEXT_ID="+req.ContextID,
		"PARLEY_MESSAGE_ID="+req.Message.GetMessageId(),
		"PARLEY_PRINCIPAL="+req.Principal,
		"PARLEY_TASK_STATE="+state, // "" for a new task, INPUT_REQUIRED for a follow-up, …
	)
}

// input is what the program reads on standard input.
func (a *Agent) input(req *server.Request) ([]byte, error) {
	if a.o.Format == JSONLines {
		return requestLine(req)
	}
	text := a2a.JoinText(req.Message.GetParts())
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n" // line-oriented tools expect their last line ended
	}
	return []byte(text), nil
}

// ignoreClosed drops the errors that only say the task was closed under
// the agent (canceled, or ended by the program's own final state).
func ignoreClosed(err error) error {
	if errors.Is(err, server.ErrTaskClosed) || errors.Is(err, server.ErrExecutionEnded) {
		return nil
	}
	return err
}
