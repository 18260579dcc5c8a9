package server

// Accepting a client message: idempotent resends (spec §3.3.1, decision
// B14), new tasks and follow-ups of existing ones (spec §3.4).

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/version"
	"parley.dev/parley/taskstore"
)

// msgKey identifies a client message for idempotency (decision B14: a
// resend of a messageId returns the original result).
type msgKey struct {
	scope taskstore.Scope
	id    string
}

// accepted is a client message the core took on: the run working on it and
// the caller's subscription. replay is set when the message was a resend.
type accepted struct {
	r      *run
	sub    *subscriber
	snap   *a2a.StreamEvent // first event for a follow-up: the task snapshot
	replay *taskstore.MessageRecord
	ex     *execution // the execution started for the message (nil for a replay)
	seq    uint64     // the run's sequence number when the message was accepted
	// entries is the run's count of clients' messages entered
	// (run.entries) when the message was accepted.
	entries uint64
	remote  bool // a replay of a task no local execution runs (Options.Cluster: another replica may)
}

// resent says that another process recorded the messageId first
// (Options.Cluster: two replicas got it at once); the send is answered as
// a resend of that record.
type resent struct{ rec *taskstore.MessageRecord }

func (e *resent) Error() string {
	return "server: message " + e.rec.MessageID + " was accepted elsewhere first"
}

// orphaned says that a messageId's record names a task that was never
// made, and nothing here is making it: the process that accepted the
// message stopped (or its store write failed) before the agent's first
// update. The message is run again, as the task the record names, so that
// every resend gets an answer (decision B14).
type orphaned struct{ rec *taskstore.MessageRecord }

func (e *orphaned) Error() string {
	return "server: message " + e.rec.MessageID + " was accepted, but its task was never made"
}

// accept validates a send, handles a resend of a known messageId, resolves
// the task and starts the agent. On success the caller owns a reference on
// acc.r and, when acc.sub is set (streams only), the subscription.
func (s *Server) accept(ctx context.Context, req *a2a.SendMessageRequest, stream bool) (*accepted, error) {
	c, err := s.checkSend(ctx, req, stream)
	if err != nil {
		return nil, err
	}
	// The message becomes the task's: a copy, unless the binding decoded
	// it for this call alone (a2a.CallInfo.Decoded). What it named is
	// noted first, for a second start below.
	msg := req.Message
	namedTask, namedContext := msg.TaskId, msg.ContextId
	if !c.info.Decoded {
		msg = a2a.CloneMessage(msg)
	}
	digest := digestOf(msg)
	unclaim, err := s.claimMessage(ctx, msgKey{c.scope, msg.MessageId})
	if err != nil {
		return nil, err
	}
	defer unclaim()
	areq := agentRequest(c, req)
	push := inlinePushConfig(c, req)
	var acc *accepted
	if msg.TaskId != "" {
		// A follow-up's resend is looked for first: the task may have
		// moved on since, and would refuse it as a new message.
		var known bool
		if acc, known, err = s.answerResend(ctx, c, msg.MessageId, digest, stream); !known {
			acc, err = s.continueTask(ctx, c, msg, digest, areq, push, stream)
		}
	} else {
		// A new task's resend is found by the record the task's start
		// makes (PutMessage returns the one already there), which saves
		// the store a read per new task; only a start refused by a quota
		// looks for it first, so that a resend is answered, not refused.
		acc, err = s.startTask(ctx, c, msg, digest, areq, push, stream, "")
		if isQuota(err) {
			if a, known, rerr := s.answerResend(ctx, c, msg.MessageId, digest, stream); known {
				acc, err = a, rerr
			}
		}
	}
	// The messages table decides between two replicas that got one
	// messageId at once (spec §3.3.1 lets the messageId detect
	// duplicates; decision B14): the loser answers as a resend.
	var lost *resent
	if errors.As(err, &lost) {
		acc, err = s.answerRecord(ctx, c, lost.rec, digest, stream)
	}
	var orphan *orphaned
	if errors.As(err, &orphan) {
		if namedTask != "" { // a follow-up names its task, which is not there
			return nil, taskNotFound(orphan.rec.TaskID)
		}
		again := a2a.CloneMessage(msg)
		again.ContextId = namedContext
		return s.startTask(ctx, c, again, digest, areq, push, stream, orphan.rec.TaskID)
	}
	return acc, err
}

// checkSend runs the checks of a send that come before anything is stored:
// those of every operation, the streaming capability, the request's fields
// and the inline push URL.
func (s *Server) checkSend(ctx context.Context, req *a2a.SendMessageRequest, stream bool) (call, error) {
	op := a2a.MethodSendMessage
	if stream {
		op = a2a.MethodSendStreamingMessage
	}
	c, err := s.begin(ctx, op, req.GetTenant())
	if err != nil {
		return call{}, err
	}
	p := req.GetConfiguration().GetTaskPushNotificationConfig()
	if p != nil {
		// A push configuration given with the message is set as
		// CreateTaskPushNotificationConfig sets one, and needs its right,
		// checked with the send's own before anything else (spec §3.3.2).
		if err := a2a.Authorize(c.info, a2a.MethodByName(a2a.MethodCreateTaskPushNotificationConfig).Right); err != nil {
			return call{}, err
		}
	}
	version.ClearRequest(c.info.Served, req)
	if stream && !s.streaming() {
		return call{}, a2a.NewError(a2a.CodeUnsupportedOperation, "this agent does not support streaming")
	}
	if err := s.validateSend(req); err != nil {
		return call{}, err
	}
	if p != nil {
		if err := s.checkPushURL(ctx, "configuration.taskPushNotificationConfig.url", p.GetUrl()); err != nil {
			return call{}, err
		}
	}
	return c, nil
}

// claimMessage lets one first send of a messageId run at a time
// (decision B14): a later send of the same key waits until the
// earlier one calls the returned unclaim, and then finds its record.
func (s *Server) claimMessage(ctx context.Context, key msgKey) (unclaim func(), err error) {
	for {
		s.mu.Lock()
		ch, busy := s.inflight[key]
		if !busy {
			s.inflight[key] = make(chan struct{})
		}
		s.mu.Unlock()
		if !busy {
			break
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
	return func() {
		s.mu.Lock()
		close(s.inflight[key])
		delete(s.inflight, key)
		s.mu.Unlock()
	}, nil
}

// answerResend looks the messageId up among the messages already accepted
// in the caller's scope. known is false for a new message; for a known one
// the result is the original answer (see replay), or InvalidParams when the
// content differs from the first send.
func (s *Server) answerResend(ctx context.Context, c call, msgID, digest string, stream bool) (acc *accepted, known bool, err error) {
	rec, err := s.store.GetMessage(ctx, c.scope, msgID)
	switch {
	case errors.Is(err, taskstore.ErrNotFound):
		return nil, false, nil
	case err != nil:
		return nil, true, a2a.Internal(err)
	}
	acc, err = s.answerRecord(ctx, c, rec, digest, stream)
	return acc, true, err
}

// answerRecord answers a send whose messageId is recorded: as the first
// send was answered, or InvalidParams when the content differs.
func (s *Server) answerRecord(ctx context.Context, c call, rec *taskstore.MessageRecord, digest string, stream bool) (*accepted, error) {
	if rec.Digest != digest {
		return nil, a2a.InvalidParams(a2a.FieldViolation{Field: "message.messageId",
			Description: "this messageId was already used for a different message; use a new messageId"})
	}
	return s.replay(ctx, c, rec, stream)
}

// agentRequest starts the Request the agent will get: what is known before
// the task is resolved.
func agentRequest(c call, req *a2a.SendMessageRequest) *Request {
	return &Request{
		Principal: c.scope.Owner, Tenant: c.scope.Tenant, Extensions: append([]string(nil), c.info.Activated...),
		Configuration: req.GetConfiguration(), Metadata: req.GetMetadata(),
	}
}

// inlinePushConfig returns a copy of the send's push configuration with
// its tenant and id filled in, to store with the version the call is
// served in, or nil when the send has none.
func inlinePushConfig(c call, req *a2a.SendMessageRequest) *taskstore.PushConfig {
	p := req.GetConfiguration().GetTaskPushNotificationConfig()
	if p == nil {
		return nil
	}
	push := proto.Clone(p).(*a2a.TaskPushNotificationConfig)
	push.Tenant = req.GetTenant()
	if push.Id == "" {
		push.Id = a2a.NewID()
	}
	return &taskstore.PushConfig{TaskPushNotificationConfig: push, Version: c.info.Served}
}

// startTask accepts a message that starts a new task. The ids are minted
// now; the task itself is created when the agent first updates it (task
// ids are server-minted, spec §3.4.2). The caller's task quotas are taken
// here (Limits.MaxOpenTasks, Limits.TaskRate), in memory, and given back
// when the task becomes terminal or is never made (see run.finish).
//
// orphanID, when set, is the task id of the message's orphaned record
// (see orphaned): the message runs again as that task, under the record
// already stored.
func (s *Server) startTask(ctx context.Context, c call, msg *a2a.Message, digest string, areq *Request, push *taskstore.PushConfig, stream bool, orphanID string) (*accepted, error) {
	id := orphanID
	if id == "" {
		id = a2a.NewID()
	}
	if err := s.quota.admit(c.scope.Owner, id, s.now()); err != nil {
		return nil, err
	}
	ctxID := msg.ContextId
	if ctxID == "" {
		ctxID = a2a.NewID()
	}
	msg.TaskId, msg.ContextId = id, ctxID
	if push != nil {
		push.TaskId = id
	}
	areq.TaskID, areq.ContextID = id, ctxID
	areq.Message = a2a.CloneMessage(msg) // the agent's own copy
	r := s.acquire(id, c.scope)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.loaded = true
	r.pendingMessage, r.pendingContextID, r.pendingMessageID, r.pendingPush = msg, ctxID, msg.MessageId, push
	var prev *taskstore.MessageRecord
	var err error
	if orphanID == "" {
		prev, err = s.store.PutMessage(ctx, c.scope, &taskstore.MessageRecord{
			MessageID: msg.MessageId, Digest: digest, TaskID: id, Created: s.now(),
		})
	}
	if err != nil || prev != nil {
		s.quota.refund(c.scope.Owner, id)
		s.releaseLocked(r)
		if prev != nil {
			return nil, &resent{prev}
		}
		return nil, a2a.Internal(err)
	}
	sub := r.subscribeIf(stream)
	seq := r.seq
	ex := r.start(ctx, areq)
	return &accepted{r: r, sub: sub, ex: ex, seq: seq, entries: r.entries}, nil
}

// continueTask accepts a message for an existing task (spec §3.4).
func (s *Server) continueTask(ctx context.Context, c call, msg *a2a.Message, digest string, areq *Request, push *taskstore.PushConfig, stream bool) (*accepted, error) {
	r := s.acquire(msg.TaskId, c.scope)
	r.mu.Lock()
	defer r.mu.Unlock()
	err := r.load(ctx)
	if err == nil {
		err = r.awaitSettledExecution(ctx)
	}
	if err == nil { // a stale view is told so first, whatever else is wrong now
		err = r.checkGeneration(ctx, areq.Configuration)
	}
	if err == nil {
		err = r.refuseFollowUp(msg)
	}
	if err == nil {
		err = s.recordFollowUp(ctx, c, r, msg, digest, areq, push)
	}
	if err != nil {
		s.releaseLocked(r)
		return nil, err
	}
	r.reply = nil
	snap := r.snapshot()
	sub := r.subscribeIf(stream)
	seq := r.seq
	ex := r.start(ctx, areq)
	return &accepted{r: r, sub: sub, snap: &snap, ex: ex, seq: seq, entries: r.entries}, nil
}

// awaitSettledExecution waits, bounded by ctx, until an execution that
// already left the task terminal or interrupted has ended: an agent that
// just reported INPUT_REQUIRED may not have returned yet, and the follow-up
// the task asked for must not be refused for that (nor EndInterrupted). An
// execution that emitted nothing yet, or went on working, is not waited
// for. Callers hold r.mu, which is let go while waiting, and have loaded
// the task.
func (r *run) awaitSettledExecution(ctx context.Context) error {
	for ex := r.exec; ex != nil && !ex.detached && ex.settled && settled(r.task.GetStatus().GetState()); ex = r.exec {
		r.mu.Unlock()
		select {
		case <-ex.ended:
			r.mu.Lock()
		case <-ctx.Done():
			r.mu.Lock()
			return context.Cause(ctx)
		}
	}
	return nil
}

// refuseFollowUp returns why the task cannot take msg now, or nil. Callers
// hold r.mu and have loaded the task.
func (r *run) refuseFollowUp(msg *a2a.Message) error {
	t := r.task
	// Decision B10 before B6: a mismatched contextId is invalid whatever
	// the task's state.
	if msg.ContextId != "" && msg.ContextId != t.ContextId {
		return a2a.InvalidParams(a2a.FieldViolation{Field: "message.contextId",
			Description: "does not match the contextId of task " + t.Id})
	}
	if a2a.IsTerminal(t.GetStatus().GetState()) {
		return a2a.NewError(a2a.CodeUnsupportedOperation,
			"task %q is %s: a terminal task accepts no more messages; start a new task in the same context", t.Id, t.GetStatus().GetState()).
			WithMeta("taskId", t.Id)
	}
	// With Options.Cluster an active task without a local execution runs
	// on another replica.
	active := r.s.opts.Cluster != nil && !settled(t.GetStatus().GetState())
	if r.exec != nil || active {
		return busyWith(t.Id)
	}
	return nil
}

// busyWith refuses a follow-up to task id while the task works on an
// earlier message.
func busyWith(id string) error {
	return a2a.NewError(a2a.CodeUnsupportedOperation,
		"task %q is still working on an earlier message; send more input once it asks for it", id).WithMeta("taskId", id)
}

// recordFollowUp stores an accepted follow-up: the message in the task's
// history, its inline push configuration, and its idempotency record. It
// also completes the agent's Request. An inline configuration the task has
// no room for (Limits.MaxPushConfigs) refuses the follow-up before anything
// is stored. The message is the task's next timeline entry, fenced by
// sequence number (enterFollowUp); a conditional follow-up
// (ifGenerationMatch, checked by checkGeneration) is recorded after that
// write won. Callers hold r.mu and have loaded the task.
func (s *Server) recordFollowUp(ctx context.Context, c call, r *run, msg *a2a.Message, digest string, areq *Request, push *taskstore.PushConfig) error {
	t := r.task
	if push != nil {
		if err := r.roomForPushConfig(ctx, push.Id, "configuration.taskPushNotificationConfig"); err != nil {
			return err
		}
	}
	rec := &taskstore.MessageRecord{MessageID: msg.MessageId, Digest: digest, TaskID: t.Id, Created: s.now()}
	_, conditional := expectedGeneration(areq.Configuration)
	if !conditional {
		// The record first: of two replicas given this follow-up at
		// once, the one that records it runs it (decision B14).
		prev, err := s.store.PutMessage(ctx, c.scope, rec)
		if err != nil {
			return a2a.Internal(err)
		}
		if prev != nil {
			return &resent{prev}
		}
	}
	// Decision B9: the context is inferred from the task and stamped on
	// the stored message.
	msg.ContextId = t.ContextId
	areq.TaskID, areq.ContextID = t.Id, t.ContextId
	areq.Task = a2a.CloneTask(t)
	areq.Message = a2a.CloneMessage(msg)
	if err := r.enterFollowUp(ctx, msg, conditional); err != nil {
		return err
	}
	if conditional {
		// Accepted: the store took its write. A record already there is
		// this messageId sent at the same moment to another replica
		// without the condition; the message runs here all the same.
		if prev, err := s.store.PutMessage(ctx, c.scope, rec); err != nil || prev != nil {
			s.log.WarnContext(ctx, "conditional follow-up accepted, but its messageId could not be recorded for resends",
				"task", t.Id, "message", msg.MessageId, "err", err)
		}
	}
	if push != nil {
		push.TaskId = t.Id
		if err := r.putPushConfig(ctx, push); err != nil {
			return a2a.Internal(err)
		}
	}
	return nil
}

// replay answers a resend of a known messageId with the original result,
// without running the agent again (decision B14): the direct reply,
// or the task, followed live while it is still running.
func (s *Server) replay(ctx context.Context, c call, rec *taskstore.MessageRecord, stream bool) (*accepted, error) {
	if s.opts.Cluster != nil {
		var err error
		if rec, err = s.awaitFirstAnswer(ctx, c, rec); err != nil {
			return nil, err
		}
	}
	r := s.acquire(rec.TaskID, c.scope)
	r.mu.Lock()
	defer r.mu.Unlock()
	if rec.Reply != nil && r.reply == nil {
		r.reply = rec.Reply
	}
	if r.reply != nil {
		return &accepted{r: r, replay: rec}, nil
	}
	if !(r.loaded && r.task == nil && r.exec != nil) { // not a new task still starting
		if err := r.load(ctx); err != nil {
			s.releaseLocked(r)
			if s.isOrphan(rec, err) {
				return nil, &orphaned{rec}
			}
			return nil, err
		}
	}
	acc := &accepted{r: r, replay: rec}
	if r.task != nil {
		snap := r.snapshot()
		acc.snap = &snap
		if settled(r.task.GetStatus().GetState()) {
			return acc, nil
		}
	}
	acc.sub = r.subscribeIf(stream)
	acc.ex, acc.seq, acc.entries = r.exec, r.seq, r.entries
	if r.exec == nil && r.task != nil && s.opts.Cluster != nil {
		acc.remote = true
		r.follow()
	}
	return acc, nil
}

// isOrphan reports whether rec, whose task could not be loaded (err), is
// orphaned: no task, no direct reply, and no execution here that is still
// to make one. The task cannot have been removed since, either: the
// record is younger than Options.Retention, which removes only tasks whose
// status is older (and a task's status is never older than the message
// that made it). With Options.Cluster another replica may be running the
// message: awaitFirstAnswer waits for it instead, and takes the message
// over once that replica's lease lapsed (Leases.ClaimMessage). A store
// that removes tasks by number rather than age (the memory store's bound
// on tasks) marks the records of the tasks it removed (TaskEvicted): such
// a task was made, so its message is not run again (spec §3.3.1); the
// resend is answered TaskNotFound, as for a task removed by retention.
func (s *Server) isOrphan(rec *taskstore.MessageRecord, err error) bool {
	if rec.Reply != nil || rec.TaskEvicted || s.opts.Cluster != nil || a2a.AsError(err).Code != a2a.CodeTaskNotFound {
		return false
	}
	return s.opts.Retention <= 0 || rec.Created.After(s.now().Add(-s.opts.Retention))
}

// digestOf identifies a message's content for decision B14 (the same
// messageId with different content is refused).
//
// The message is encoded into a buffer of digestBufs, and the sum's hex
// digits on the stack: the digest string is the one allocation.
func digestOf(m *a2a.Message) string {
	bp := digestBufs.Get().(*[]byte)
	b, _ := proto.MarshalOptions{Deterministic: true}.MarshalAppend((*bp)[:0], m)
	sum := sha256.Sum256(b)
	if cap(b) <= maxDigestBuf {
		*bp = b
		digestBufs.Put(bp)
	}
	var digits [2 * sha256.Size]byte
	hex.Encode(digits[:], sum[:])
	return string(digits[:])
}

// digestBufs holds the buffers digestOf encodes messages into; one that
// grew past maxDigestBuf (a large message) is left to the collector.
var digestBufs = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

const maxDigestBuf = 64 << 10

// awaitFirstAnswer waits, with Options.Cluster, until the message of rec,
// which another replica may be running, has a task or a direct reply:
// the task is made on the agent's first update, until which a resend has
// nothing to show. It returns the record, read again when the reply came.
func (s *Server) awaitFirstAnswer(ctx context.Context, c call, rec *taskstore.MessageRecord) (*taskstore.MessageRecord, error) {
	if rec.Reply != nil {
		return rec, nil
	}
	s.mu.Lock()
	r := s.runs[runKey{c.scope, rec.TaskID}]
	s.mu.Unlock()
	if r != nil {
		r.mu.Lock()
		local := r.exec != nil || r.task != nil
		r.mu.Unlock()
		if local {
			return rec, nil // this replica runs it, or has read it
		}
	}
	wake, stop := s.opts.Cluster.Bus.Watch(rec.TaskID)
	defer stop()
	poll := time.NewTicker(100 * time.Millisecond)
	defer poll.Stop()
	// The replica that recorded the message may have died before the
	// task existed; then nothing will ever come.
	giveUp := time.NewTimer(max(4*s.opts.Cluster.Leases.TTL(), 30*time.Second))
	defer giveUp.Stop()
	for {
		_, err := s.store.LastSeq(ctx, c.scope, rec.TaskID)
		if err == nil {
			return rec, nil
		}
		if !errors.Is(err, taskstore.ErrNotFound) {
			return nil, a2a.Internal(err)
		}
		now, err := s.store.GetMessage(ctx, c.scope, rec.MessageID)
		if err != nil {
			return nil, a2a.Internal(err)
		}
		if now.Reply != nil {
			return now, nil
		}
		// The replica that recorded it may have died before the task
		// existed: then this one takes the message over and runs it.
		if claimed, err := s.opts.Cluster.Leases.ClaimMessage(ctx, c.scope, rec.MessageID); err != nil {
			return nil, a2a.Internal(err)
		} else if claimed {
			return nil, &orphaned{now}
		}
		select {
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		case <-giveUp.C:
			return nil, a2a.NewError(a2a.CodeInternal, "message %q was accepted, but no task or reply came of it: "+
				"the replica running it may have stopped; send it again with a new messageId", rec.MessageID)
		case <-wake:
		case <-poll.C:
		}
	}
}
