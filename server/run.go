package server

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
)

// run is the live state of one task in this process: its current snapshot,
// its subscribers and its active execution. The server keeps a run while
// anything refers to it (an execution, a stream, a waiting call) and drops
// it afterwards; the store stays the record of truth.
//
// Every change happens under mu, in this order: validate, persist, then
// publish. So a subscriber never sees an event a crash could take back, and
// every subscriber sees the same events in the same order.
type run struct {
	s     *Server
	id    string
	scope taskstore.Scope
	refs  int // guarded by s.mu

	mu      sync.Mutex
	loaded  bool      // task was looked up (it may still be nil: new task)
	task    *a2a.Task // nil until the task exists
	seq     uint64    // sequence number of the last published event
	subs    map[*subscriber]struct{}
	waiters map[chan struct{}]struct{} // in-process callers woken on every change
	exec    *execution                 // the active execution, if any
	reply   *a2a.Message               // that reply

	// For a task that does not exist yet: what create needs.
	pendingMessage   *a2a.Message
	pendingContextID string
	pendingMessageID string
	pendingPush      *a2a.TaskPushNotificationConfig
}

// execution is one call of Agent.Execute and, when detached, its
// background continuation.
type execution struct {
	ctx      context.Context
	cancel   context.CancelCauseFunc
	detached bool
	returned bool          // Execute has returned
	done     bool          // the execution is over; the emitter is invalid
	ended    chan struct{} // closed when done is set
}

// event is one thing an agent emitted.
type event struct {
	reply     *a2a.Message
	state     a2a.TaskState
	message   *a2a.Message
	artifact  *a2a.Artifact
	append    bool
	lastChunk bool
}

// subscriber receives a task's events through a bounded buffer. A reader
// that lets the buffer fill is cut off (err is set and ch closed) rather than
// slowing the agent or growing memory.
type subscriber struct {
	ch  chan a2a.StreamEvent
	err error // set before ch is closed when cut off
}

// runKey identifies a run: the live-task registry is per scope, so a caller
// probing another scope's task id never touches that task's run (DESIGN B12).
type runKey struct {
	scope taskstore.Scope
	id    string
}

// acquire returns the run for a task id, creating it if needed, and takes a
// reference that the caller must give back with release.
func (s *Server) acquire(id string, scope taskstore.Scope) *run {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := runKey{scope, id}
	r := s.runs[k]
	if r == nil {
		r = &run{s: s, id: id, scope: scope, subs: map[*subscriber]struct{}{}, waiters: map[chan struct{}]struct{}{}}
		s.runs[k] = r
	}
	r.refs++
	return r
}

// ref takes one more reference on a run the caller already holds.
func (s *Server) ref(r *run) {
	s.mu.Lock()
	r.refs++
	s.mu.Unlock()
}

// release gives back a reference taken by acquire.
func (s *Server) release(r *run) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r.refs--
	if k := (runKey{r.scope, r.id}); r.refs == 0 && s.runs[k] == r {
		delete(s.runs, k)
	}
}

// load reads the task from the store once. It returns TaskNotFoundError when
// the task does not exist in the run's scope. Callers hold r.mu.
func (r *run) load(ctx context.Context) error {
	if r.loaded {
		if r.task == nil {
			return taskNotFound(r.id)
		}
		return nil
	}
	t, err := r.s.store.GetTask(ctx, r.scope, r.id)
	if err == nil {
		r.seq, err = r.s.store.LastSeq(ctx, r.scope, r.id)
	}
	if err != nil {
		if errors.Is(err, taskstore.ErrNotFound) {
			return taskNotFound(r.id)
		}
		return a2a.Internal(err)
	}
	r.task, r.loaded = t, true
	return nil
}

// subscribe registers a subscriber. Callers hold r.mu.
func (r *run) subscribe() *subscriber {
	sub := &subscriber{ch: make(chan a2a.StreamEvent, r.s.opts.SubscriberBuffer)}
	r.subs[sub] = struct{}{}
	return sub
}

// subscribeIf subscribes when want is true, and returns nil otherwise.
// Callers hold r.mu.
func (r *run) subscribeIf(want bool) *subscriber {
	if !want {
		return nil
	}
	return r.subscribe()
}

// unsubscribe removes a subscriber (idempotent).
func (r *run) unsubscribe(sub *subscriber) {
	r.mu.Lock()
	if _, ok := r.subs[sub]; ok {
		delete(r.subs, sub)
		close(sub.ch)
	}
	r.mu.Unlock()
}

// wait returns a channel that is signalled after every change of the run.
// Unlike a subscriber it carries no events and is never cut off, so a
// blocking call can never miss the state it waits for. Callers hold r.mu
// and must call unwait.
func (r *run) wait() chan struct{} {
	ch := make(chan struct{}, 1)
	r.waiters[ch] = struct{}{}
	return ch
}

// unwait removes a waiter.
func (r *run) unwait(ch chan struct{}) {
	r.mu.Lock()
	delete(r.waiters, ch)
	r.mu.Unlock()
}

// wake signals every waiter. Callers hold r.mu.
func (r *run) wake() {
	for ch := range r.waiters {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// publish sends an event to every subscriber without blocking. Callers hold
// r.mu.
func (r *run) publish(resp *a2a.StreamResponse, withSeq bool) {
	defer r.wake()
	ev := a2a.StreamEvent{Response: resp}
	if withSeq {
		r.seq++
		ev.Seq = r.seq
	}
	for sub := range r.subs {
		select {
		case sub.ch <- ev:
		default:
			sub.err = a2a.NewError(a2a.CodeInternal,
				"stream closed: the reader fell %d events behind; call SubscribeToTask to resume", cap(sub.ch))
			delete(r.subs, sub)
			close(sub.ch)
			r.s.log.Warn("subscriber cut off: too slow", "task", r.id)
		}
	}
}

// start launches the agent for a request. Callers hold r.mu and have
// checked that no execution is active.
func (r *run) start(req *Request) *execution {
	ctx, cancel := context.WithCancelCause(r.s.base)
	ex := &execution{ctx: ctx, cancel: cancel, ended: make(chan struct{})}
	r.exec = ex
	r.s.ref(r) // held until the execution is over (finish), detached or not
	r.s.wg.Add(1)
	go func() {
		defer r.s.wg.Done()
		err := r.invoke(ex, req)
		r.returned(ex, err)
	}()
	return ex
}

// invoke calls the agent, turning a panic into an error.
func (r *run) invoke(ex *execution, req *Request) (err error) {
	defer func() {
		if p := recover(); p != nil {
			r.s.log.Error("agent panicked", "task", r.id, "panic", p, "stack", string(debug.Stack()))
			err = fmt.Errorf("agent panicked: %v", p)
		}
	}()
	return r.s.agent.Execute(ex.ctx, req, &Emitter{r: r, ex: ex})
}

// returned handles the end of Agent.Execute: a task left in an active state
// without Detach becomes FAILED.
func (r *run) returned(ex *execution, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ex.returned = true
	if err != nil {
		r.s.log.Error("agent failed", "task", r.id, "err", err)
	}
	if ex.detached && err == nil && !ex.done {
		return // the background work owns the task now
	}
	if r.reply == nil && !ex.done && (err != nil || r.task == nil || !settled(r.task.GetStatus().GetState())) {
		why := "the agent stopped without finishing the task"
		switch {
		case err != nil:
			why = "the agent failed while working on the task"
		case r.task == nil:
			why = "the agent returned without a reply or a task update"
		}
		if cause := context.Cause(ex.ctx); cause == ErrShutdown {
			why = "the server shut down while the task was running"
		}
		r.fail(ex, why)
	}
	r.finish(ex)
}

// settled reports whether a state lets an execution end: terminal or
// interrupted.
func settled(s a2a.TaskState) bool { return a2a.IsTerminal(s) || a2a.IsInterrupted(s) }

// fail moves the task to FAILED with a status message. Callers hold r.mu.
func (r *run) fail(ex *execution, why string) {
	if err := r.apply(ex, event{state: a2a.TaskState_TASK_STATE_FAILED, message: a2a.AgentMessage(why)}); err != nil {
		r.s.log.Error("could not fail task", "task", r.id, "err", err)
	}
}

// finish ends an execution. Callers hold r.mu.
func (r *run) finish(ex *execution) {
	if ex.done {
		return
	}
	ex.done = true
	ex.cancel(ErrExecutionEnded)
	close(ex.ended)
	if r.exec == ex {
		r.exec = nil
	}
	r.wake()
	r.s.release(r) // the reference taken by start
}

// detach marks the execution as continuing in the background.
func (r *run) detach(ex *execution) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !ex.done {
		ex.detached = true
	}
}

// emit applies an event from the agent.
func (r *run) emit(ex *execution, ev event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.task != nil && a2a.IsTerminal(r.task.GetStatus().GetState()) {
		return ErrTaskClosed
	}
	if ex.done || (ex.returned && !ex.detached) {
		return ErrExecutionEnded
	}
	err := r.apply(ex, ev)
	if err == nil && r.task != nil && a2a.IsTerminal(r.task.GetStatus().GetState()) {
		r.finish(ex)
	}
	return err
}

// apply validates, persists and publishes one event. Callers hold r.mu.
func (r *run) apply(ex *execution, ev event) error {
	ctx := context.WithoutCancel(ex.ctx)
	if ev.reply != nil {
		if r.task != nil || r.reply != nil {
			return ErrReplyNotFirst
		}
		m := proto.Clone(ev.reply).(*a2a.Message)
		r.stampAgentMessage(m, false)
		if v := a2a.CheckRequired(m); len(v) > 0 {
			return fmt.Errorf("server: invalid reply: %s: %s", v[0].Field, v[0].Description)
		}
		r.reply = m
		if err := r.s.store.SetMessageReply(ctx, r.scope, r.pendingMessageID, m); err != nil {
			r.s.log.Error("could not record reply", "task", r.id, "err", err)
		}
		r.publish(&a2a.StreamResponse{Payload: &a2a.StreamResponse_Message{Message: m}}, false)
		r.finish(ex)
		return nil
	}
	if r.reply != nil {
		return ErrReplyNotFirst
	}
	if r.task == nil {
		if err := r.create(ctx); err != nil {
			return err
		}
	}
	if a2a.IsTerminal(r.task.GetStatus().GetState()) {
		return ErrTaskClosed
	}
	if ev.artifact != nil {
		return r.applyArtifact(ctx, ev)
	}
	return r.setStatus(ctx, ev.state, ev.message)
}

// create makes the task on the agent's first update: SUBMITTED, with the
// client's message in its history, published as the stream's first event.
// Callers hold r.mu.
func (r *run) create(ctx context.Context) error {
	t := &a2a.Task{
		Id:        r.id,
		ContextId: r.pendingContextID,
		Status:    &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_SUBMITTED, Timestamp: a2a.Timestamp(r.s.now())},
		History:   []*a2a.Message{r.pendingMessage},
	}
	ev := &a2a.StreamResponse{Payload: &a2a.StreamResponse_Task{Task: proto.Clone(t).(*a2a.Task)}}
	// The inline push config is stored with the task, so it receives this
	// creation event (its first notification, a Task).
	if err := r.s.store.CreateTask(ctx, r.scope, t, taskstore.Event{Seq: r.seq + 1, Response: ev,
		Push: r.s.delivering(), PushConfig: r.pendingPush}); err != nil {
		return a2a.Internal(err)
	}
	r.task, r.loaded = t, true
	r.s.queued(r.id)
	r.publish(ev, true)
	return nil
}

// setStatus records a status change. Callers hold r.mu.
func (r *run) setStatus(ctx context.Context, state a2a.TaskState, m *a2a.Message) error {
	if state == a2a.TaskState_TASK_STATE_UNSPECIFIED || a2a.TaskState_name[int32(state)] == "" {
		return fmt.Errorf("server: invalid task state %d", state)
	}
	st := &a2a.TaskStatus{State: state, Timestamp: a2a.Timestamp(r.s.now())}
	if m != nil {
		m = proto.Clone(m).(*a2a.Message)
		r.stampAgentMessage(m, true)
		if v := a2a.CheckRequired(m); len(v) > 0 {
			return fmt.Errorf("server: invalid status message: %s: %s", v[0].Field, v[0].Description)
		}
		st.Message = m
	}
	prev := r.task.Status
	prevHist := len(r.task.History)
	r.task.Status = st
	if m != nil {
		r.task.History = append(r.task.History, m)
	}
	ev := &a2a.StreamResponse{Payload: &a2a.StreamResponse_StatusUpdate{StatusUpdate: &a2a.TaskStatusUpdateEvent{
		TaskId: r.id, ContextId: r.task.ContextId, Status: proto.Clone(st).(*a2a.TaskStatus),
	}}}
	if err := r.s.store.UpdateTask(ctx, r.scope, r.task, taskstore.Event{Seq: r.seq + 1, Response: ev, Push: r.s.delivering()}); err != nil {
		r.task.Status, r.task.History = prev, r.task.History[:prevHist]
		return a2a.Internal(err)
	}
	r.s.queued(r.id)
	r.publish(ev, true)
	return nil
}

// applyArtifact records an artifact chunk. Callers hold r.mu.
func (r *run) applyArtifact(ctx context.Context, ev event) error {
	a := proto.Clone(ev.artifact).(*a2a.Artifact)
	if v := a2a.CheckRequired(a); len(v) > 0 {
		return fmt.Errorf("server: invalid artifact: %s: %s", v[0].Field, v[0].Description)
	}
	prev := r.task.Artifacts
	idx := -1
	for i, x := range r.task.Artifacts {
		if x.ArtifactId == a.ArtifactId {
			idx = i
			break
		}
	}
	next := append([]*a2a.Artifact(nil), prev...)
	switch {
	case ev.append && idx >= 0:
		merged := proto.Clone(next[idx]).(*a2a.Artifact)
		merged.Parts = append(merged.Parts, a.Parts...)
		if a.Name != "" {
			merged.Name = a.Name
		}
		if a.Description != "" {
			merged.Description = a.Description
		}
		next[idx] = merged
	case idx >= 0:
		next[idx] = a
	default:
		if ev.append {
			// DESIGN B11: an append to an artifact never sent starts it, so
			// nothing is lost.
			r.s.log.Warn("append to unknown artifact: starting it", "task", r.id, "artifact", a.ArtifactId)
		}
		next = append(next, a)
	}
	r.task.Artifacts = next
	out := &a2a.StreamResponse{Payload: &a2a.StreamResponse_ArtifactUpdate{ArtifactUpdate: &a2a.TaskArtifactUpdateEvent{
		TaskId: r.id, ContextId: r.task.ContextId, Artifact: proto.Clone(a).(*a2a.Artifact),
		Append: ev.append, LastChunk: ev.lastChunk,
	}}}
	if err := r.s.store.UpdateTask(ctx, r.scope, r.task, taskstore.Event{Seq: r.seq + 1, Response: out, Push: r.s.delivering()}); err != nil {
		r.task.Artifacts = prev
		return a2a.Internal(err)
	}
	r.s.queued(r.id)
	r.publish(out, true)
	return nil
}

// stampAgentMessage fills the ids and role of a message the agent sent.
func (r *run) stampAgentMessage(m *a2a.Message, withTask bool) {
	if m.MessageId == "" {
		m.MessageId = a2a.NewID()
	}
	if m.Role == a2a.Role_ROLE_UNSPECIFIED {
		m.Role = a2a.Role_ROLE_AGENT
	}
	ctxID := r.pendingContextID
	if r.task != nil {
		ctxID = r.task.ContextId
	}
	m.ContextId = ctxID
	if withTask {
		m.TaskId = r.id
	}
}

// cancel moves the task to CANCELED and stops its execution. Callers hold
// r.mu and have loaded the task.
func (r *run) cancelTask(ctx context.Context) error {
	if err := r.setStatus(context.WithoutCancel(ctx), a2a.TaskState_TASK_STATE_CANCELED, nil); err != nil {
		return err
	}
	if r.exec != nil {
		r.exec.cancel(ErrCanceled)
		r.finish(r.exec)
	}
	return nil
}
