// Package proxyagent puts Parley in front of another A2A agent, the
// upstream: each message Parley accepts is forwarded with Parley's client,
// and the upstream's events are re-emitted into Parley's own task. The
// upstream thereby gains Parley's three bindings, durable tasks, stream
// resume, push notifications and authentication.
//
// Parley's tasks and the upstream's have different ids; the agent keeps
// the pairs, keyed by the caller's scope, in memory and on its own
// messages in Parley's store (see Agent). Cancelling a Parley task cancels
// the upstream task, and Middleware gives callers the upstream's own A2A
// errors where Parley alone would answer with a FAILED task.
//
// The upstream sees one caller, the proxy, with the proxy's credentials:
// whom a task belongs to is decided by Parley alone (decision B12: the
// principal that created it), so the agent never lets a caller name an
// upstream task or context, and its client follows no upstream redirect.
package proxyagent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
	"parley.dev/parley/server"
)

// Options configures the agent. Client is required.
type Options struct {
	// Client calls the upstream agent.
	Client *client.Client
	// Logger receives what goes wrong upstream; default slog.Default().
	Logger *slog.Logger
	// CancelTimeout bounds the CancelTask sent upstream when a Parley
	// task is canceled; default 10 s.
	CancelTimeout time.Duration
}

// Agent forwards messages to the upstream agent. It implements
// server.Agent.
//
// The pairs of Parley and upstream ids (tasks and contexts) live in
// memory, keyed by the caller's tenant and principal as well as the id: a
// contextId is each caller's own name (decision B12), so the same
// contextId from two callers goes to two upstream contexts. The upstream's
// task and context ids are also stamped on Parley's copies of its status
// messages (MetadataKey), so that a follow-up after a restart, or on
// another replica, still reaches the upstream task when the task's status
// carried a message; only those agent messages of the caller's own task
// are read back, never anything a client wrote. A follow-up whose pair is
// found nowhere starts a new upstream task, and a new task in a context
// known only to another process starts a new upstream context.
type Agent struct {
	c      *client.Client
	log    *slog.Logger
	cancel time.Duration
	ids    *idMap
	errs   *refusals
}

// New returns the agent.
func New(o Options) (*Agent, error) {
	if o.Client == nil {
		return nil, errors.New("proxyagent: no client")
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.CancelTimeout <= 0 {
		o.CancelTimeout = 10 * time.Second
	}
	return &Agent{c: o.Client, log: o.Logger, cancel: o.CancelTimeout, ids: newIDMap(), errs: newRefusals()}, nil
}

// Execute implements server.Agent: it forwards one message and relays the
// upstream's answer into the task.
func (a *Agent) Execute(ctx context.Context, req *server.Request, em *server.Emitter) error {
	up := a.upstreamRequest(req)
	rl := &relay{a: a, em: em, req: req}
	var err error
	if rl.streaming = a.c.Card().GetCapabilities().GetStreaming(); rl.streaming {
		err = rl.stream(ctx, a.c.SendStreamingMessage(ctx, up))
	} else {
		err = rl.blocking(ctx, up)
	}
	if ctx.Err() != nil {
		if context.Cause(ctx) == server.ErrCanceled {
			a.cancelUpstream(taskOfRequest(req))
		}
		return nil // the core has the task in hand
	}
	if err != nil {
		return rl.fail(err)
	}
	return nil
}

// upstreamRequest is the request sent upstream for req: the same message
// (and messageId, so that retries stay idempotent upstream), with the
// upstream's ids for the task and context when they are known in the
// caller's scope.
func (a *Agent) upstreamRequest(req *server.Request) *a2a.SendMessageRequest {
	m := proto.Clone(req.Message).(*a2a.Message)
	m.TaskId, m.ContextId = "", ""
	unstamp(m) // a client's stamp means nothing, here or upstream
	key := taskOfRequest(req)
	if req.Task != nil && a.ids.task(key) == "" {
		// Restarted, or another replica's task: the pair is read back from
		// the agent's own messages in the caller's task (see MetadataKey).
		if upTask, upCtx := recall(req.Task); upTask != "" {
			a.ids.put(req, upTask, upCtx)
		}
	}
	if req.Task != nil {
		m.TaskId = a.ids.task(key)
	}
	m.ContextId = a.ids.context(req.Context())
	var cfg *a2a.SendMessageConfiguration
	if modes := req.Configuration.GetAcceptedOutputModes(); len(modes) > 0 {
		cfg = &a2a.SendMessageConfiguration{AcceptedOutputModes: modes}
	}
	return &a2a.SendMessageRequest{Message: m, Configuration: cfg, Metadata: req.Metadata}
}

// cancelUpstream cancels the upstream task of a Parley task, once.
func (a *Agent) cancelUpstream(k taskKey) {
	upID := a.ids.task(k)
	if upID == "" || !a.ids.markCanceled(k) {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), a.cancel)
	defer cancel()
	if _, err := a.c.CancelTask(ctx, &a2a.CancelTaskRequest{Id: upID}); err != nil {
		a.log.Warn("upstream cancel failed", "task", k.id, "upstreamTask", upID, "err", err)
	}
}

// relay re-emits the upstream's events for one message.
type relay struct {
	a         *Agent
	em        *server.Emitter
	req       *server.Request
	events    int  // events relayed so far
	streaming bool // the upstream answers with a stream
	settled   bool // a terminal or interrupted state was relayed
}

// stream relays an upstream stream; when it ends early, the task is
// followed to its end with WaitForCompletion.
func (rl *relay) stream(ctx context.Context, seq func(func(a2a.StreamEvent, error) bool)) error {
	for ev, err := range seq {
		if err != nil {
			if errors.Is(err, client.ErrStreamEnded) && rl.upstreamTask() != "" {
				return rl.follow(ctx)
			}
			return err
		}
		if done, err := rl.event(ev); done || err != nil {
			return refused(err)
		}
	}
	return nil
}

// blocking relays the answer of a blocking SendMessage, for an upstream
// that does not stream.
func (rl *relay) blocking(ctx context.Context, up *a2a.SendMessageRequest) error {
	resp, err := rl.a.c.SendMessage(ctx, up)
	if err != nil {
		return err
	}
	if m := resp.GetMessage(); m != nil {
		_, err := rl.event(a2a.StreamEvent{Response: &a2a.StreamResponse{Payload: &a2a.StreamResponse_Message{Message: m}}})
		return refused(err)
	}
	if done, err := rl.event(taskEvent(resp.GetTask())); done || err != nil {
		return refused(err)
	}
	return rl.follow(ctx)
}

// follow waits for the upstream task to settle and relays its final
// state and artifacts.
func (rl *relay) follow(ctx context.Context) error {
	t, err := rl.a.c.WaitForCompletion(ctx, rl.upstreamTask())
	if err != nil {
		return err
	}
	for _, art := range t.GetArtifacts() {
		if err := rl.em.Artifact(art); err != nil {
			return refused(err)
		}
	}
	_, err = rl.status(t.GetStatus())
	return refused(err)
}

// refusedEvent is an error of Parley's emitter: the core refused an event
// relayed from the upstream (or the task was closed under the agent).
type refusedEvent struct{ err error }

func (e refusedEvent) Error() string { return e.err.Error() }
func (e refusedEvent) Unwrap() error { return e.err }

// refused marks err, when not nil, as an emitter's error.
func refused(err error) error {
	if err == nil {
		return nil
	}
	return refusedEvent{err}
}

// upstreamTask is the upstream id of this message's task, "" before the
// upstream named it.
func (rl *relay) upstreamTask() string { return rl.a.ids.task(taskOfRequest(rl.req)) }

// fail ends the task FAILED because of err, and keeps an upstream A2A
// error for Middleware when nothing was relayed before it.
func (rl *relay) fail(err error) error {
	if server.IgnoreClosed(err) == nil {
		return nil // canceled or finished under the agent: nothing to report
	}
	var why string
	if re, ok := errors.AsType[refusedEvent](err); ok {
		why = fmt.Sprintf("Parley refused an event the upstream agent sent: %v", re.err)
	} else if ae, ok := errors.AsType[*a2a.Error](err); ok {
		if rl.events == 0 {
			rl.a.errs.put(rl.req.TaskID, ae)
		}
		why = fmt.Sprintf("the upstream agent answered with an error: %s: %s", ae.Code.Name(), ae.WireMessage())
	} else {
		why = fmt.Sprintf("the upstream agent could not be reached or broke off: %v", err)
	}
	rl.a.log.Warn("upstream call failed", "task", rl.req.TaskID, "err", err)
	if err := rl.em.StatusText(a2a.TaskState_TASK_STATE_FAILED, why); server.IgnoreClosed(err) != nil {
		return err
	}
	return nil
}
