// Package execagent makes any program an A2A agent: each message the server
// accepts runs the program once, in a process group of its own, with the
// message on standard input and an allow-listed environment that names the
// task.
//
// In the Text format the message's text parts are the program's input and
// its standard output is streamed, as it is produced, as the chunks of one
// artifact ("output"); exit status 0 completes the task, any other status
// fails it with the last lines of standard error as the status message. In
// the JSONLines format the program reads the request as one JSON object and
// writes one JSON object per line: status changes (INPUT_REQUIRED with a
// question, AUTH_REQUIRED, a final state) and artifacts with text, data or
// file parts. The request line has taskId, contextId, principal, message
// and task (A2A JSON); an output line is either {"state", "message": text}
// or {"artifact": A2A JSON, "append", "lastChunk"}.
//
// The programs run with the privileges of the server that runs them. By
// default at most DefaultConcurrency() of them run at once, further
// messages waiting their turn in arrival order, and each may run for
// DefaultTimeout; see Options for the limits and the environment.
package execagent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
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
	DefaultTimeout   = 10 * time.Minute
	DefaultGrace     = 5 * time.Second
	DefaultMaxOutput = 16 << 20
	DefaultMaxLine   = 4 << 20
	// tailLines is how many lines of standard error a FAILED status
	// message quotes.
	tailLines = 10
)

// DefaultConcurrency is the default of Options.Concurrency: twice the
// number of CPUs the server can use.
func DefaultConcurrency() int {
	return 2 * runtime.NumCPU()
}

// baseEnv names the variables of the server's environment every program
// gets; a name ending in "*" is a prefix.
var baseEnv = []string{"PATH", "HOME", "LANG", "LC_*", "TZ", "TMPDIR"}

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
	// Timeout stops a program that runs longer, counted from its start
	// (time spent queued does not count): its process group gets
	// SIGTERM, then SIGKILL after Grace, and its task ends FAILED with a
	// status message saying it timed out. 0 means DefaultTimeout; a
	// negative value means no limit.
	Timeout time.Duration
	// Concurrency is the most programs running at once. Further messages
	// wait in arrival order, their task SUBMITTED with the status message
	// "queued: N ahead" (N tasks start before it; rewritten as the queue
	// moves, at most once a second); a task canceled while it waits
	// leaves the queue and its program never starts. 0 means
	// DefaultConcurrency(); a negative value means no limit.
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
	// PassEnv names further variables of the server's environment that
	// the programs get (a name the server's environment lacks is left
	// unset). Without it a program gets only PATH, HOME, LANG, the LC_*
	// variables, TZ and TMPDIR from the server, so no secret of the
	// server's (PARLEY_PUSH_KEY, say) reaches it unless named here.
	PassEnv []string
	// Env sets further variables (KEY=VALUE entries), over those taken
	// from the server. The agent then sets PARLEY_TASK_ID,
	// PARLEY_CONTEXT_ID, PARLEY_MESSAGE_ID, PARLEY_PRINCIPAL, PARLEY_TENANT
	// and PARLEY_TASK_STATE, over both.
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
	queue *queue // nil without a concurrency limit
}

// New checks o and returns the agent.
func New(o Options) (*Agent, error) {
	if len(o.Command) == 0 || o.Command[0] == "" {
		return nil, errors.New("execagent: no command")
	}
	if err := findProgram(o.Command[0], o.Dir); err != nil {
		return nil, err
	}
	if o.Format != Text && o.Format != JSONLines {
		return nil, fmt.Errorf("execagent: unknown format %d", o.Format)
	}
	if o.Grace < 0 || o.MaxOutput < 0 || o.MaxLine < 0 {
		return nil, errors.New("execagent: negative Grace, MaxOutput or MaxLine")
	}
	for _, name := range o.PassEnv {
		if !ValidEnvName(name) {
			return nil, fmt.Errorf("execagent: PassEnv %q is not a variable name", name)
		}
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Concurrency == 0 {
		o.Concurrency = DefaultConcurrency()
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
		a.queue = newQueue(o.Concurrency)
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
	if a.queue != nil {
		if !a.queue.acquire(ctx, em) {
			return nil // canceled (or closed) while queued: no program ran
		}
		defer a.queue.release()
		if ctx.Err() != nil {
			return nil // canceled as its turn came
		}
	}
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
		why = fmt.Sprintf("the program timed out after %s; its process group was sent SIGTERM, then SIGKILL", a.o.Timeout)
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

// env is the program's environment: the allow-listed variables of the
// server's and those of Options.PassEnv, then Options.Env, then the task's
// identity (a later entry wins over an earlier one of the same name).
func (a *Agent) env(req *server.Request) []string {
	env := append(AllowedEnv(a.o.PassEnv), a.o.Env...)
	state := ""
	if req.Task != nil {
		state = strings.TrimPrefix(req.Task.GetStatus().GetState().String(), "TASK_STATE_")
	}
	return append(env,
		"PARLEY_TASK_ID="+req.TaskID,
		"PARLEY_CONTEXT_ID="+req.ContextID,
		"PARLEY_MESSAGE_ID="+req.Message.GetMessageId(),
		"PARLEY_PRINCIPAL="+req.Principal,
		"PARLEY_TENANT="+req.Tenant, // with the principal, whose context PARLEY_CONTEXT_ID is (B12)
		"PARLEY_TASK_STATE="+state,  // "" for a new task, INPUT_REQUIRED for a follow-up, …
	)
}

// AllowedEnv is the part of the server's environment a program it runs
// gets: PATH, HOME, LANG, LC_*, TZ and TMPDIR, and the variables named by
// pass. `parley serve --mcp` gives its child the same.
func AllowedEnv(pass []string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if passed(name, baseEnv) || slices.Contains(pass, name) {
			env = append(env, kv)
		}
	}
	return env
}

// passed reports whether name is on list, where an entry ending in "*"
// stands for every name with that prefix.
func passed(name string, list []string) bool {
	for _, p := range list {
		if prefix, ok := strings.CutSuffix(p, "*"); ok && strings.HasPrefix(name, prefix) || p == name {
			return true
		}
	}
	return false
}

// ValidEnvName reports whether name can name an environment variable that
// a shell can read: a letter or underscore, then letters, digits and
// underscores.
func ValidEnvName(name string) bool {
	for i, c := range name {
		switch {
		case c == '_', 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case '0' <= c && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return name != ""
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

// findProgram checks, before the first message, that the program can be
// run: a name without a slash is looked up in PATH, a path is taken
// relative to dir (the working directory the program will run in), and
// must be an executable file. Otherwise every message would fail the same
// way, long after the server said it was ready.
func findProgram(name, dir string) error {
	path := name
	if strings.ContainsRune(name, filepath.Separator) && !filepath.IsAbs(name) && dir != "" {
		path = filepath.Join(dir, name)
	}
	if _, err := exec.LookPath(path); err != nil {
		return fmt.Errorf("execagent: cannot run %q: %w", name, errors.Unwrap(err))
	}
	return nil
}
