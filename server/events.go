package server

// What happens to one event an agent emits: it is validated, persisted,
// and only then published to subscribers (see run).

import (
	"context"
	"errors"
	"fmt"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
)

// event is one thing an agent emitted.
type event struct {
	reply     *a2a.Message
	state     a2a.TaskState
	message   *a2a.Message
	artifact  *a2a.Artifact
	append    bool
	lastChunk bool
}

// apply validates, persists and publishes one event. Callers hold r.mu.
func (r *run) apply(ex *execution, ev event) error {
	ctx := ex.stored // context.WithoutCancel(ex.ctx), made once
	if ev.reply != nil {
		if r.task != nil || r.creating() || r.reply != nil {
			return ErrReplyNotFirst
		}
		m := a2a.CloneMessage(ev.reply)
		r.stampAgentMessage(m, false)
		if v := r.s.checkAgentMessage(m); len(v) > 0 {
			return fmt.Errorf("server: invalid reply: %s: %s", v[0].Field, v[0].Description)
		}
		// Stored before anyone sees it, as every event: a resend is
		// answered with it (B14).
		if err := r.s.store.SetMessageReply(ctx, r.scope, r.pendingMessageID, m); err != nil {
			return a2a.Internal(err)
		}
		r.reply = m
		r.s.announce(r.id) // to a resend waiting on another replica (awaitFirstAnswer)
		r.publish(&a2a.StreamResponse{Payload: &a2a.StreamResponse_Message{Message: m}}, false)
		r.finish(ex)
		return nil
	}
	if r.reply != nil {
		return ErrReplyNotFirst
	}
	if r.task != nil && a2a.IsTerminal(r.task.GetStatus().GetState()) {
		return ErrTaskClosed
	}
	if ev.artifact != nil {
		return r.applyArtifact(ctx, ev)
	}
	return r.setStatus(ctx, ev.state, ev.message)
}

// record stores and publishes a validated event of the agent. An event that
// neither ends nor interrupts the task is queued (run.enqueue), the one
// that makes the task included: it is stored with the events that follow it
// without a pause, so an agent that answers at once costs one write. Any
// other event is stored at once, after the queue; giveWay is append's.
// Callers hold r.mu.
func (r *run) record(ctx context.Context, ev *a2a.StreamResponse, giveWay bool) error {
	if r.task == nil && !r.creating() {
		r.queueCreate()
	}
	state := r.task.GetStatus().GetState() // UNSPECIFIED while the task is queued
	if u := ev.GetStatusUpdate(); u != nil {
		state = u.GetStatus().GetState()
	}
	if !settled(state) {
		r.enqueue(ctx, ev) // stored and published by a write of its own
		return nil
	}
	if err := r.append(ctx, ev, giveWay); err != nil {
		return err
	}
	r.published(ev)
	return nil
}

// newTask returns the task the agent's first update makes: SUBMITTED, with
// the client's message in its history; and the event that makes it, the
// stream's first. The inline push configuration is stored with the task,
// so it receives that event (its first notification, a Task).
func (r *run) newTask() (*a2a.Task, taskstore.Event) {
	t := &a2a.Task{
		Id:        r.id,
		ContextId: r.pendingContextID,
		Status:    &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_SUBMITTED, Timestamp: a2a.Timestamp(r.s.now())},
		History:   []*a2a.Message{r.pendingMessage},
	}
	// The event shares the status and the message, which nobody changes
	// (Apply replaces a status, appends to a history): only the task's own
	// slices must not be shared.
	ev := &a2a.StreamResponse{Payload: &a2a.StreamResponse_Task{Task: &a2a.Task{
		Id: t.Id, ContextId: t.ContextId, Status: t.Status, History: []*a2a.Message{r.pendingMessage}}}}
	return t, taskstore.Event{Seq: r.seq + 1, Response: ev, Push: r.s.delivering(), PushConfig: r.pendingPush}
}

// made takes a task just stored, and publishes the event that made it;
// what its making needed is dropped (and with it the run's hold on the
// client's message: see shed). Callers hold r.mu.
func (r *run) made(t *a2a.Task, ev *a2a.StreamResponse) {
	r.task, r.loaded, r.mayPush = t, true, r.pendingPush != nil
	r.pendingMessage, r.pendingContextID, r.pendingMessageID, r.pendingPush = nil, "", "", nil
	r.queued()
	r.s.announce(r.id)
	r.publish(ev, true)
}

// setStatus records a status change (record). Callers hold r.mu.
func (r *run) setStatus(ctx context.Context, state a2a.TaskState, m *a2a.Message) error {
	ev, err := r.statusUpdate(state, m)
	if err != nil {
		return err
	}
	return r.record(ctx, ev, false)
}

// statusUpdate makes the event of a status change, the agent's message
// stamped and checked. Callers hold r.mu.
func (r *run) statusUpdate(state a2a.TaskState, m *a2a.Message) (*a2a.StreamResponse, error) {
	if state == a2a.TaskState_TASK_STATE_UNSPECIFIED || a2a.TaskState_name[int32(state)] == "" {
		return nil, fmt.Errorf("server: invalid task state %d", state)
	}
	st := &a2a.TaskStatus{State: state, Timestamp: a2a.Timestamp(r.s.now())}
	if m != nil {
		m = a2a.CloneMessage(m)
		r.stampAgentMessage(m, true)
		if v := r.s.checkAgentMessage(m); len(v) > 0 {
			return nil, fmt.Errorf("server: invalid status message: %s: %s", v[0].Field, v[0].Description)
		}
		st.Message = m
	}
	return &a2a.StreamResponse{Payload: &a2a.StreamResponse_StatusUpdate{StatusUpdate: &a2a.TaskStatusUpdateEvent{
		TaskId: r.id, ContextId: r.contextID(), Status: st,
	}}}, nil
}

// contextID returns the context of the run's task, or of the task it will
// create.
func (r *run) contextID() string {
	if r.task != nil {
		return r.task.ContextId
	}
	return r.pendingContextID
}

// append records one event of the run's task in the store, numbered after
// the last one. Callers hold r.mu and publish the event once it returns nil.
//
// With Options.Cluster another replica may have written the number first
// (ErrSeq): the run then reads and publishes what it wrote. When that
// ended the task (CancelTask there, or a replica that took this one's
// lease for lost) it returns ErrTaskClosed. Otherwise the other replica
// runs the task: only a task's runner writes it without ending it. A
// local execution then gives way (two follow-ups accepted at once by two
// replicas: the first to write runs) and ErrTaskTaken is returned; so
// does a writer without one that gives way (EndInterrupted: the other
// replica took a follow-up); any other (CancelTask) tries again, a few
// times.
func (r *run) append(ctx context.Context, ev *a2a.StreamResponse, giveWay bool) error {
	// Pipelined events go first, in the same write (run.nextWrite). When
	// the write in flight fails, this event, which follows it, is not
	// written either: with Options.Cluster the run may have just read that
	// another replica ended the task, or runs it now.
	if r.settleInflight() != nil {
		return r.pipeFailure()
	}
	if len(r.queue) > 0 {
		if err := r.writeNow(ctx, ev); err != nil {
			return r.pipeFailure()
		}
		return nil
	}
	for try := 0; ; try++ {
		err := r.s.store.Append(ctx, r.scope, r.id, taskstore.Event{Seq: r.seq + 1, Response: ev, Push: r.s.delivering()})
		if err == nil {
			r.s.announce(r.id)
			return nil
		}
		if try == 3 {
			return a2a.Internal(err)
		}
		switch err := r.lostSeq(ctx, err); {
		case errors.Is(err, ErrTaskClosed), errors.Is(err, ErrTaskTaken):
			return err
		case err != nil:
			return a2a.Internal(err)
		case giveWay:
			return ErrTaskTaken
		}
	}
}

// lostSeq handles a write that failed with err. When err is ErrSeq with
// Options.Cluster (another replica wrote the number first), it reads and
// publishes what the other wrote, and returns ErrTaskClosed when that
// ended the task, ErrTaskTaken when a local execution gave way to the
// other replica's, and nil when the write may be tried again (see append).
// It returns any other err as it is. Callers hold r.mu.
func (r *run) lostSeq(ctx context.Context, err error) error {
	if !errors.Is(err, taskstore.ErrSeq) || r.s.opts.Cluster == nil {
		return err
	}
	if err := r.catchUp(ctx); err != nil {
		return err
	}
	if a2a.IsTerminal(r.task.GetStatus().GetState()) {
		return ErrTaskClosed
	}
	if ex := r.exec; ex != nil {
		r.s.log.Warn("cluster: another replica runs the task now (a follow-up accepted there at the same time): this execution gives way", "task", r.id)
		ex.taken = true
		ex.cancel(ErrTaskTaken)
		r.finish(ex)
		return ErrTaskTaken
	}
	return nil
}

// checkAgentMessage returns what is wrong with a message the agent sent
// (ids stamped): missing REQUIRED fields, a role the Role enum does not
// define, or sizes over the Limits.
func (s *Server) checkAgentMessage(m *a2a.Message) []a2a.FieldViolation {
	v := s.limits.message(nil, "message", m)
	if len(v) > 0 {
		return v
	}
	if _, ok := a2a.Role_name[int32(m.Role)]; !ok {
		v = append(v, a2a.FieldViolation{Field: "message.role", Description: "is not a Role value"})
	}
	return append(v, a2a.CheckRequired(m)...)
}

// applyArtifact records an artifact chunk (record). Callers hold r.mu.
func (r *run) applyArtifact(ctx context.Context, ev event) error {
	if v := r.s.limits.artifact(nil, "artifact", ev.artifact); len(v) > 0 {
		return fmt.Errorf("server: invalid artifact: %s: %s", v[0].Field, v[0].Description)
	}
	a := a2a.CloneArtifact(ev.artifact)
	// Where an artifact lies among the generations is the log's to say
	// (1.1 preview, spec §3.2.8; taskstore.Timeline), never the agent's:
	// nor may a 1.0 answer carry them.
	a.StartGeneration, a.EndGeneration = 0, 0
	if v := a2a.CheckRequired(a); len(v) > 0 {
		return fmt.Errorf("server: invalid artifact: %s: %s", v[0].Field, v[0].Description)
	}
	return r.record(ctx, &a2a.StreamResponse{Payload: &a2a.StreamResponse_ArtifactUpdate{ArtifactUpdate: &a2a.TaskArtifactUpdateEvent{
		TaskId: r.id, ContextId: r.contextID(), Artifact: a,
		Append: ev.append, LastChunk: ev.lastChunk,
	}}}, false)
}

// published applies a stored event to the run's task and publishes it.
// Callers hold r.mu.
func (r *run) published(ev *a2a.StreamResponse) {
	// The run's task changes as the stored one did (taskstore.Apply),
	// sharing the immutable event's status, chunk or whole artifact (which
	// it copies only to append to it): an event costs no copy of its
	// artifact, an append the chunk.
	if r.borrowedBy != r.task {
		clear(r.borrowed)
		r.borrowed, r.borrowedBy = r.borrowed[:0], r.task
	}
	known := taskstore.ApplyBorrowing(r.task, ev, &r.borrowed)
	if u := ev.GetArtifactUpdate(); u.GetAppend() && !known {
		// Decision B11: an append to an artifact never sent starts it, so
		// nothing is lost.
		r.s.log.Warn("append to unknown artifact: starting it", "task", r.id, "artifact", u.GetArtifact().GetArtifactId())
	}
	if a2a.IsTerminal(ev.GetStatusUpdate().GetStatus().GetState()) {
		r.s.quota.closed(r.scope.Owner, r.id)
	}
	r.queued()
	r.publish(ev, true)
}

// stampAgentMessage fills the ids and role of a message the agent sent.
func (r *run) stampAgentMessage(m *a2a.Message, withTask bool) {
	if m.MessageId == "" {
		m.MessageId = a2a.NewID()
	}
	if m.Role == a2a.Role_ROLE_UNSPECIFIED {
		m.Role = a2a.Role_ROLE_AGENT
	}
	m.ContextId = r.contextID()
	if withTask {
		m.TaskId = r.id
	}
}
