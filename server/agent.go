package server

import (
	"context"
	"errors"

	"google.golang.org/protobuf/types/known/structpb"

	"parley.dev/parley/a2a"
)

// Agent is the user code behind an A2A server. Execute is called once per
// accepted client message, in its own goroutine, and reports its work through
// the Emitter: a direct reply, or status updates and artifact chunks of the
// task.
//
// When Execute returns, the task must be in a terminal state (COMPLETED,
// FAILED, CANCELED, REJECTED) or an interrupted one (INPUT_REQUIRED,
// AUTH_REQUIRED), or the agent must have called Emitter.Detach to go on in
// the background. Otherwise the core ends the task FAILED with a status
// message saying why; a returned error or a panic does the same. No task
// stays WORKING forever because an agent forgot it.
//
// ctx is canceled when the task is canceled (context.Cause is ErrCanceled)
// or the server shuts down (ErrShutdown); it is not tied to the client's
// connection. Either way the agent should stop and return nil: the core
// has already made a canceled task CANCELED, and ends FAILED a task left
// unfinished at shutdown. A non-nil error, ctx.Err() or context.Cause(ctx)
// included, is logged at ERROR level.
// See the package documentation for the order of Server.Close and
// http.Server.Shutdown.
type Agent interface {
	Execute(ctx context.Context, req *Request, em *Emitter) error
}

// AgentFunc adapts a function to the Agent interface.
type AgentFunc func(ctx context.Context, req *Request, em *Emitter) error

// Execute calls f.
func (f AgentFunc) Execute(ctx context.Context, req *Request, em *Emitter) error {
	return f(ctx, req, em)
}

// Request is what an agent receives for one client message. The agent owns
// it and may keep it.
type Request struct {
	// Message is the client's message, with taskId and contextId set.
	Message *a2a.Message
	// Task is the task as it was before this message arrived, or nil when
	// the message starts a new task.
	Task *a2a.Task
	// TaskID and ContextID identify the task this message belongs to. For a
	// new task they are minted by the server; the task itself only exists
	// once the agent emits its first status or artifact update.
	//
	// A contextId is the caller's own name for a context, chosen freely
	// (spec §3.4.1): the same ContextID sent by two principals, or in two
	// tenants, names two separate contexts (decision B12). An
	// agent that keeps anything per context keys it by Context(), never by
	// ContextID alone.
	TaskID, ContextID string
	// Principal is the authenticated caller, "" when authentication is off.
	Principal string
	// Tenant is the tenant the call named ("" for none). With Principal it
	// is the caller's scope: the task, and everything the core hands the
	// agent about it, belong to that scope (decision B12: tasks belong to
	// the principal that created them).
	Tenant string
	// Extensions are the extension URIs activated for this request.
	Extensions []string
	// Configuration is the client's send configuration (may be nil).
	Configuration *a2a.SendMessageConfiguration
	// Metadata is the request's metadata (may be nil).
	Metadata *structpb.Struct
}

// ContextKey identifies one context: a contextId within the scope of
// the caller that uses it (decision B12). Two callers sending the
// same contextId have two different keys.
type ContextKey struct {
	Tenant, Principal, ContextID string
}

// Context returns the key of the request's context, for an agent that
// keeps state per context.
func (r *Request) Context() ContextKey {
	return ContextKey{Tenant: r.Tenant, Principal: r.Principal, ContextID: r.ContextID}
}

// Errors an Emitter returns.
var (
	// ErrTaskClosed: the task is already terminal (for example it was
	// canceled), so nothing more can be emitted.
	ErrTaskClosed = errors.New("server: task is in a terminal state")
	// ErrExecutionEnded: Execute returned without Detach; the emitter is
	// no longer valid.
	ErrExecutionEnded = errors.New("server: agent execution has ended")
	// ErrReplyNotFirst: a direct Message reply is only allowed as the
	// agent's first and only output (spec §3.1.2).
	ErrReplyNotFirst = errors.New("server: a direct reply must be the agent's only output")
	// ErrCanceled is the cause of an agent's context when its task is
	// canceled.
	ErrCanceled = errors.New("server: task canceled")
	// ErrShutdown is the cause of an agent's context when the server
	// stops.
	ErrShutdown = errors.New("server: shutting down")
)

// IgnoreClosed is err, or nil when err only says the task is closed to the
// agent (ErrTaskClosed: canceled or finished under it; ErrExecutionEnded):
// an agent that relays work from elsewhere has nothing left to report then.
func IgnoreClosed(err error) error {
	if errors.Is(err, ErrTaskClosed) || errors.Is(err, ErrExecutionEnded) {
		return nil
	}
	return err
}

// Emitter is how an agent reports its work. The core validates every event,
// stores it, and only then sends it to the task's subscribers, in order.
// Its methods may be called from several goroutines.
//
// A method returns an error at once when its event is invalid. When the
// store can write several events at once (the SQLite, memory and
// PostgreSQL stores), an artifact chunk or a SUBMITTED or WORKING status
// is queued, the task's first event (which makes the task) included: the
// method returns before the event is stored, and the events an agent
// emits without pausing are stored in one write, made task included. A
// status that ends or interrupts the task is stored, with everything
// queued before it, before its method returns, and so is Reply. Until
// its making is stored, the task is not found by GetTask or ListTasks;
// the run's writer stores it as soon as the agent pauses (any wait, for
// I/O or a channel). If a queued event cannot be stored, the agent's next call
// returns the error, and the task ends FAILED when Execute returns. With
// Options.Cluster that call returns ErrTaskClosed instead when another
// replica ended the task meanwhile, or ErrTaskTaken when another replica
// runs it now.
type Emitter struct {
	r  *run
	ex *execution
}

// Reply answers the message with a direct Message and no task. It must be
// the only thing the agent emits.
func (e *Emitter) Reply(m *a2a.Message) error {
	return e.r.emit(e.ex, event{reply: m})
}

// Status moves the task to state, with an optional status message (an
// agent message; its ids are filled in when empty).
func (e *Emitter) Status(state a2a.TaskState, m *a2a.Message) error {
	return e.r.emit(e.ex, event{state: state, message: m})
}

// StatusText is Status with a one-part text message (none when text is "").
func (e *Emitter) StatusText(state a2a.TaskState, text string) error {
	var m *a2a.Message
	if text != "" {
		m = a2a.AgentMessage(text)
	}
	return e.Status(state, m)
}

// Artifact emits a complete artifact, or replaces the one with the same id
// with a complete one.
//
// An artifact sent in pieces (a streamed answer) is emitted with
// StartArtifact, then AppendArtifact for each further piece, and
// FinishArtifact for the last one; every piece carries the artifact's id.
func (e *Emitter) Artifact(a *a2a.Artifact) error {
	return e.r.emit(e.ex, event{artifact: a, lastChunk: true})
}

// StartArtifact emits the first chunk of an artifact whose further chunks
// follow (AppendArtifact, FinishArtifact). Like Artifact, it replaces an
// artifact with the same id that was sent before.
func (e *Emitter) StartArtifact(a *a2a.Artifact) error {
	return e.r.emit(e.ex, event{artifact: a})
}

// AppendArtifact adds a's parts to the artifact with the same id; more
// chunks follow. Appending to an id never sent starts a new artifact
// (decision B11).
func (e *Emitter) AppendArtifact(a *a2a.Artifact) error {
	return e.r.emit(e.ex, event{artifact: a, append: true})
}

// FinishArtifact adds a's parts to the artifact with the same id and marks
// them as its last chunk.
func (e *Emitter) FinishArtifact(a *a2a.Artifact) error {
	return e.r.emit(e.ex, event{artifact: a, append: true, lastChunk: true})
}

// Chunk emits part of an artifact: with appendTo, its parts are added to
// the artifact with the same id (one that was never sent starts a new
// artifact, decision B11); lastChunk marks the artifact's final chunk.
//
// Deprecated: two positional booleans are easily swapped. Use
// StartArtifact (false, false), AppendArtifact (true, false),
// FinishArtifact (true, true) or Artifact (false, true).
func (e *Emitter) Chunk(a *a2a.Artifact, appendTo, lastChunk bool) error {
	return e.r.emit(e.ex, event{artifact: a, append: appendTo, lastChunk: lastChunk})
}

// Detach tells the core that the work goes on after Execute returns: the
// Emitter stays valid until the task reaches a terminal state, and the
// agent's context stays alive until then (or until cancel or shutdown).
func (e *Emitter) Detach() {
	e.r.detach(e.ex)
}
