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

	progressed chan *mcp.ProgressNotificationParams // latest few; dropped when full
	asks       chan *mcp.ElicitParams               // the question, once per elicitation
	answers    chan *mcp.ElicitResult
	done       chan struct{} // closed once res and err are set

	res *mcp.CallToolResult
	err error

	mu     sync.Mutex
	asking *mcp.ElicitParams // the question waiting for its answer
}

func newCall(a *Agent, task string, cn *conn, inv invocation, token string) *call {
	ctx, cancel := context.WithCancelCause(context.Background())
	return &call{a: a, task: task, token: token, cn: cn, inv: inv, ctx: ctx, cancel: cancel,
		progressed: make(chan *mcp.ProgressNotificationParams, 16),
		asks:       make(chan *mcp.ElicitParams, 1), answers: make(chan *mcp.ElicitResult, 1),
		done: make(chan struct{})}
}

// run makes the call.
func (c *call) run() {
	args := c.inv.args
	if args == nil {
		args = map[string]any{} // "arguments": {}, never null, which servers refuse
	}
	p := &mcp.CallToolParams{Name: c.inv.tool, Arguments: args}
	p.SetProgressToken(c.token)
	c.res, c.err = c.cn.sess.CallTool(c.ctx, p)
	close(c.done)
}

// stop cancels the call: the SDK sends notifications/cancelled.
func (c *call) stop(cause error) { c.cancel(cause) }

// running reports whether the call is in flight and not waiting for an
// answer.
func (c *call) running() bool {
	select {
	case <-c.done:
		return false
	default:
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.asking == nil
}

// notify queues a progress notification for the Execute following the
// call; when nobody follows (the task waits for input) and the queue is
// full, it is dropped: progress is a hint, the latest one counts.
func (c *call) notify(p *mcp.ProgressNotificationParams) {
	select {
	case c.progressed <- p:
	default:
	}
}

// ask puts the tool's question to the task, and waits for the answer of
// the follow-up message (or the call's end).
func (c *call) ask(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	select { // an answer to an earlier question that was withdrawn
	case <-c.answers:
	default:
	}
	c.mu.Lock()
	c.asking = p
	c.mu.Unlock()
	defer func() { // answered, or withdrawn (the server canceled its request)
		c.mu.Lock()
		c.asking = nil
		c.mu.Unlock()
	}()
	c.asks <- p // room for one: a call asks one question at a time
	select {
	case r := <-c.answers:
		return r, nil
	case <-c.ctx.Done():
		return nil, context.Cause(c.ctx)
	case <-ctx.Done():
		return nil, ctx.Err()
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
				c.stop(err)
				return closedOK(err)
			}
		case q := <-c.asks:
			return closedOK(em.Status(a2a.TaskState_TASK_STATE_INPUT_REQUIRED, questionMessage(q, "")))
		case <-c.done:
			c.a.forget(c)
			return c.report(em)
		case <-ctx.Done():
			c.stop(context.Cause(ctx))
			c.a.forget(c)
			return nil // the core has the task in hand
		}
	}
}

// reply handles a follow-up message on the call's task: the answer to
// its question; while it asks none, the message only follows it on.
func (c *call) reply(ctx context.Context, m *a2a.Message, em *server.Emitter) error {
	c.mu.Lock()
	q := c.asking
	c.mu.Unlock()
	if q != nil {
		r, err := answerOf(q, m)
		if err != nil {
			return closedOK(em.Status(a2a.TaskState_TASK_STATE_INPUT_REQUIRED, questionMessage(q, err.Error())))
		}
		c.answers <- r // room for one; ask takes it, or is gone already
	}
	if err := em.Status(a2a.TaskState_TASK_STATE_WORKING, nil); err != nil {
		return closedOK(err)
	}
	return c.follow(ctx, em)
}

// report emits the end of the call: the artifact and COMPLETED, or
// FAILED with why.
func (c *call) report(em *server.Emitter) error {
	if c.err != nil {
		return closedOK(em.StatusText(a2a.TaskState_TASK_STATE_FAILED, c.failure()))
	}
	if c.res.IsError {
		return closedOK(em.StatusText(a2a.TaskState_TASK_STATE_FAILED, errorText(c.inv.tool, c.res)))
	}
	parts, err := partsOf(c.res)
	if err != nil {
		return closedOK(em.StatusText(a2a.TaskState_TASK_STATE_FAILED, fmt.Sprintf("the result of %s could not be read: %v", c.inv.tool, err)))
	}
	if len(parts) > 0 {
		if err := em.Artifact(&a2a.Artifact{ArtifactId: ResultArtifactID, Name: c.inv.tool, Parts: parts}); err != nil {
			if closedOK(err) == nil {
				return nil
			}
			return closedOK(em.StatusText(a2a.TaskState_TASK_STATE_FAILED, fmt.Sprintf("the result of %s was refused: %v", c.inv.tool, err)))
		}
	}
	return closedOK(em.Status(a2a.TaskState_TASK_STATE_COMPLETED, nil))
}

// failure says why the call failed: the server's death (with its cause,
// once the supervisor knows it), or the error the call returned.
func (c *call) failure() string {
	if errors.Is(c.err, mcp.ErrConnectionClosed) || errors.Is(c.err, io.EOF) {
		select { // the supervisor reads the exit status just after
		case <-c.cn.dead:
		case <-time.After(c.a.sup.o.StopGrace + time.Second):
		}
		if cause := c.cn.ended(); cause != nil {
			return fmt.Sprintf("the MCP server stopped during the call of %s: %v", c.inv.tool, cause)
		}
	}
	return fmt.Sprintf("the call of %s failed: %v", c.inv.tool, c.err)
}
