package mcpagent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"parley.dev/parley/a2a"
	"parley.dev/parley/server"
)

// ResultArtifactID is the id of the artifact that holds a tool's result.
const ResultArtifactID = "result"

// call is one tools/call, for one task. It runs in its own goroutine,
// apart from any Execute: an Execute follows it (emits its progress, its
// question, its end) until it ends or asks a question; the Execute of the
// follow-up message that answers follows it on.
type call struct {
	a     *Agent
	task  string
	token string
	cn    *conn
	inv   invocation

	ctx    context.Context
	cancel context.CancelCauseFunc

	progressed chan *mcp.ProgressNotificationParams // the latest few (progressQueue); the oldest dropped when full
	asks       chan *mcp.ElicitParams               // the question to show, while nobody showed it
	done       chan struct{}                        // closed once res and err are set

	res *mcp.CallToolResult
	err error

	mu     sync.Mutex
	asking *question // the question waiting for its answer
	// parked is the task while it waits for an answer with no Execute
	// following the call (INPUT_REQUIRED, Execute returned): should the
	// call end then because the server stopped, run ends the task.
	parked *server.TaskHandle

	// The call's time limit (Options.CallTimeout), whose clock stops
	// while the call waits for an answer: guarded by mu.
	limit   *time.Timer   // nil without a limit
	left    time.Duration // what is left of it, as of since
	since   time.Time
	waiting int // questions waiting for an answer: the clock is stopped
}

// progressQueue is how many progress notifications wait for the Execute
// that follows the call: when it falls behind (a server sending
// thousands at once), the oldest are dropped, so that the latest, which
// says how far the tool got, is the one shown.
const progressQueue = 16

// question is one elicitation request of the call, waiting for its answer.
type question struct {
	p      *mcp.ElicitParams
	answer chan *mcp.ElicitResult // room for one: the answer, or "cancel" when superseded
}

func newCall(a *Agent, task string, cn *conn, inv invocation, token string) *call {
	ctx, cancel := context.WithCancelCause(context.Background())
	return &call{a: a, task: task, token: token, cn: cn, inv: inv, ctx: ctx, cancel: cancel,
		progressed: make(chan *mcp.ProgressNotificationParams, progressQueue),
		asks:       make(chan *mcp.ElicitParams, 1),
		done:       make(chan struct{})}
}

// run makes the call.
func (c *call) run() {
	args := c.inv.args
	if args == nil {
		args = map[string]any{} // "arguments": {}, never null, which servers refuse
	}
	p := &mcp.CallToolParams{Name: c.inv.tool, Arguments: args}
	p.SetProgressToken(c.token)
	if d := c.a.sup.o.CallTimeout; d > 0 {
		c.mu.Lock()
		c.left, c.since = d, time.Now()
		c.limit = time.AfterFunc(d, func() { c.stop(&timeoutError{tool: c.inv.tool, after: d}) })
		c.mu.Unlock()
		defer c.limit.Stop()
	}
	c.res, c.err = c.cn.sess.CallTool(c.ctx, p)
	c.mu.Lock()
	close(c.done)
	parked := c.parked
	c.mu.Unlock()
	if parked != nil {
		c.endParked(*parked)
	}
}

// park notes that the task waits for an answer with nobody following the
// call, unless the call has ended: then it reports false, and the
// Execute that asked follows the call on to report its end.
func (c *call) park(h server.TaskHandle) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.finished() {
		return false
	}
	c.parked = &h
	return true
}

// endParked ends FAILED the task of a call that ended while the task
// waited for its answer, because the MCP server stopped (it died, or was
// taken for hung, and is started again): the question is gone, and the
// task's watchers are told now rather than at its next message. A
// follow-up that got there first follows the call and reports its end
// (server.ErrNotInterrupted). A call stopped otherwise (a cancel, Parley
// stopping) leaves its task as it is.
func (c *call) endParked(h server.TaskHandle) {
	cause := c.stopped()
	if cause == nil || errors.Is(cause, errClosing) {
		return
	}
	why := fmt.Sprintf("the MCP server stopped while the call of %s waited for an answer: %v", c.inv.tool, cause)
	switch err := h.EndInterrupted(c.a.sup.stop, a2a.TaskState_TASK_STATE_FAILED, a2a.AgentMessage(why)); {
	case errors.Is(err, server.ErrNotInterrupted):
	case server.IgnoreClosed(err) != nil:
		c.a.log.Error("ending a task whose MCP server stopped while it waited for an answer failed", "task", c.task, "err", err)
	default:
		c.a.forget(c)
	}
}

// timeoutError is the cause of a call stopped by its time limit.
type timeoutError struct {
	tool  string
	after time.Duration
}

func (e *timeoutError) Error() string {
	return fmt.Sprintf("the call of %s was stopped after running %v, its time limit (--mcp-call-timeout)", e.tool, e.after)
}

// pause stops the call's clock while it waits for an answer; resume
// starts it again once no question waits. Callers hold c.mu.
func (c *call) pause() {
	if c.waiting++; c.waiting > 1 || c.limit == nil {
		return
	}
	if c.limit.Stop() {
		c.left -= time.Since(c.since)
	} else {
		c.left = 0 // it ran out: the call is stopped
	}
}

func (c *call) resume() {
	if c.waiting--; c.waiting == 0 && c.limit != nil && c.left > 0 {
		c.since = time.Now()
		c.limit.Reset(c.left)
	}
}

// stop cancels the call: the SDK sends notifications/cancelled.
func (c *call) stop(cause error) { c.cancel(cause) }

// finished reports whether the call has its result.
func (c *call) finished() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// running reports whether the call is in flight and not waiting for an
// answer.
func (c *call) running() bool {
	if c.finished() {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.asking == nil
}

// notify queues a progress notification for the Execute following the
// call. When the queue is full (the Execute falls behind, or nobody
// follows: the task waits for input), the oldest is dropped: progress is
// a hint, and the latest one says how far the tool got.
func (c *call) notify(p *mcp.ProgressNotificationParams) {
	for {
		select {
		case c.progressed <- p:
			return
		default:
			drain(c.progressed)
		}
	}
}

// ask puts the tool's question to the task, and waits for the answer of
// the follow-up message (or the call's end). A call has one question at
// a time: a newer request supersedes a question still waiting, which is
// answered "cancel" (most often the server withdrew it, and its
// notifications/cancelled is still on its way). A question withdrawn or
// superseded before anyone showed it is taken back, so that no Execute
// shows it later in place of the question asked then.
func (c *call) ask(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	q := &question{p: p, answer: make(chan *mcp.ElicitResult, 1)}
	c.mu.Lock()
	if old := c.asking; old != nil {
		offer(old.answer, &mcp.ElicitResult{Action: "cancel"})
	}
	drain(c.asks)
	c.asking = q
	c.asks <- p // room for one, emptied above
	c.pause()
	c.mu.Unlock()
	defer func() { // answered, withdrawn, or superseded
		c.mu.Lock()
		c.resume()
		if c.asking == q {
			c.asking = nil
			drain(c.asks) // not shown yet: nobody is to see it now
		}
		c.mu.Unlock()
	}()
	select {
	case r := <-q.answer:
		return r, nil
	case <-c.ctx.Done():
		return nil, context.Cause(c.ctx)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// offer puts r in ch unless ch is full.
func offer[T any](ch chan T, r T) {
	select {
	case ch <- r:
	default:
	}
}

// drain empties ch of the one value it may hold.
func drain[T any](ch chan T) {
	select {
	case <-ch:
	default:
	}
}

// follow emits the call's events on em until it ends (then its result)
// or asks a question (then INPUT_REQUIRED), or ctx ends: the task was
// canceled, or the server stops, and the call is stopped.
func (c *call) follow(ctx context.Context, em *server.Emitter) error {
	for {
		select {
		case p := <-c.progressed:
			if err := em.Status(a2a.TaskState_TASK_STATE_WORKING, progressMessage(p)); err != nil {
				return c.abandon(err)
			}
		case q := <-c.asks:
			// Execute returns with the task INPUT_REQUIRED, and nothing
			// follows the call until the next message on the task: should
			// the server stop meanwhile, run ends the task (endParked);
			// should the call end otherwise, that message reports it.
			if err := em.Status(a2a.TaskState_TASK_STATE_INPUT_REQUIRED, questionMessage(q, "")); err != nil {
				return c.abandon(err)
			}
			if c.park(em.Handle()) {
				return nil
			}
		case <-c.done:
			c.a.forget(c)
			if err := c.flush(em); err != nil {
				return server.IgnoreClosed(err)
			}
			return c.report(em)
		case <-ctx.Done():
			c.stop(context.Cause(ctx))
			c.a.forget(c)
			return nil // the core has the task in hand
		}
	}
}

// flush emits the progress still queued as the call ended: what the
// tool reported before its result is shown before it.
func (c *call) flush(em *server.Emitter) error {
	for {
		select {
		case p := <-c.progressed:
			if err := em.Status(a2a.TaskState_TASK_STATE_WORKING, progressMessage(p)); err != nil {
				return err
			}
		default:
			return nil
		}
	}
}

// reply handles a follow-up message on the call's task: the answer to
// its question; while it asks none, the message only follows it on.
func (c *call) reply(ctx context.Context, m *a2a.Message, em *server.Emitter) error {
	c.mu.Lock()
	q := c.asking
	drain(c.asks) // queued while nobody followed: answered now, not to be shown again
	c.parked = nil
	c.mu.Unlock()
	if q != nil {
		r, err := answerOf(q.p, m)
		if err != nil {
			return server.IgnoreClosed(em.Status(a2a.TaskState_TASK_STATE_INPUT_REQUIRED, questionMessage(q.p, err.Error())))
		}
		offer(q.answer, r) // full only when superseded meanwhile; the newer question is shown next
	}
	if err := em.Status(a2a.TaskState_TASK_STATE_WORKING, nil); err != nil {
		return c.abandon(err)
	}
	return c.follow(ctx, em)
}

// abandon stops and forgets a call whose task took no more events (err:
// it ended under the call, or could not be stored, and the core ends it
// FAILED): nobody is left to report the call's end, and the agent keeps
// no call of a task it cannot change.
func (c *call) abandon(err error) error {
	c.stop(err)
	c.a.forget(c)
	return server.IgnoreClosed(err)
}

// report emits the end of the call: the artifact and COMPLETED, or
// FAILED with why.
func (c *call) report(em *server.Emitter) error {
	if c.err != nil {
		return server.IgnoreClosed(em.StatusText(a2a.TaskState_TASK_STATE_FAILED, c.failure()))
	}
	if c.res.IsError {
		return server.IgnoreClosed(em.StatusText(a2a.TaskState_TASK_STATE_FAILED, errorText(c.inv.tool, c.res)))
	}
	parts, err := partsOf(c.res)
	if err != nil {
		return server.IgnoreClosed(em.StatusText(a2a.TaskState_TASK_STATE_FAILED, fmt.Sprintf("the result of %s could not be read: %v", c.inv.tool, err)))
	}
	if len(parts) > 0 {
		if err := em.Artifact(&a2a.Artifact{ArtifactId: ResultArtifactID, Name: c.inv.tool, Parts: parts}); err != nil {
			if server.IgnoreClosed(err) == nil {
				return nil
			}
			return server.IgnoreClosed(em.StatusText(a2a.TaskState_TASK_STATE_FAILED, fmt.Sprintf("the result of %s was refused: %v", c.inv.tool, err)))
		}
	}
	return server.IgnoreClosed(em.Status(a2a.TaskState_TASK_STATE_COMPLETED, nil))
}

// failure says why the call failed: the server's death (with its cause,
// once the supervisor knows it), or the error the call returned.
func (c *call) failure() string {
	if cause := c.stopped(); cause != nil {
		return fmt.Sprintf("the MCP server stopped during the call of %s: %v", c.inv.tool, cause)
	}
	if te := (*timeoutError)(nil); errors.As(context.Cause(c.ctx), &te) {
		return te.Error()
	}
	return fmt.Sprintf("the call of %s failed: %v", c.inv.tool, c.err)
}

// stopped is why the MCP server stopped under the ended call (taken for
// hung, or its session ended: the cause the supervisor found), or nil
// when the call ended otherwise.
func (c *call) stopped() error {
	if cause := context.Cause(c.ctx); errors.Is(cause, errHung) {
		return cause
	}
	if errors.Is(c.err, mcp.ErrConnectionClosed) || errors.Is(c.err, io.EOF) || tooLarge(c.err) {
		select { // the supervisor reads the exit status just after
		case <-c.cn.dead:
		case <-time.After(c.a.sup.o.StopGrace + time.Second):
		}
		return c.cn.ended()
	}
	return nil
}
