package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"iter"
	"mime"
	"net/url"
	"strings"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
)

// msgKey identifies a client message for idempotency (DESIGN B14).
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
}

// SendMessage implements a2a.Service (brief §3.1). It blocks until the task
// is terminal or interrupted unless configuration.returnImmediately is set.
func (s *Server) SendMessage(ctx context.Context, req *a2a.SendMessageRequest) (*a2a.SendMessageResponse, error) {
	acc, err := s.accept(ctx, req, false)
	if err != nil {
		return nil, err
	}
	defer s.release(acc.r)
	r := acc.r // a blocking call waits on the run's state, not on a stream
	immediate := req.GetConfiguration().GetReturnImmediately() && acc.replay == nil
	r.mu.Lock()
	defer r.mu.Unlock()
	ch := r.wait()
	defer func() { r.mu.Unlock(); r.unwait(ch); r.mu.Lock() }()
	for !acc.answered(immediate) {
		r.mu.Unlock()
		select {
		case <-ctx.Done():
			r.mu.Lock()
			return nil, context.Cause(ctx)
		case <-ch:
		}
		r.mu.Lock()
	}
	if r.reply != nil {
		return &a2a.SendMessageResponse{Payload: &a2a.SendMessageResponse_Message{Message: r.reply}}, nil
	}
	if r.task == nil {
		return nil, a2a.NewError(a2a.CodeInternal, "the agent produced no result")
	}
	t := withHistory(r.task, historyOf(req.GetConfiguration()), false)
	return &a2a.SendMessageResponse{Payload: &a2a.SendMessageResponse_Task{Task: t}}, nil
}

// answered reports whether a blocking send can return: there is a direct
// reply; or the task exists and either the caller asked to return at once,
// or the task changed since the message was accepted and is now terminal or
// interrupted; or the execution is over. Callers hold acc.r.mu.
func (acc *accepted) answered(immediate bool) bool {
	r := acc.r
	switch {
	case r.reply != nil:
		return true
	case r.task == nil:
		return acc.ex == nil || acc.ex.done
	case immediate, acc.ex == nil, acc.ex.done:
		return true
	}
	return r.seq > acc.seq && settled(r.task.GetStatus().GetState())
}

// SendStreamingMessage implements a2a.Service (brief §3.2). A task stream
// starts with the Task and closes after a terminal state or INPUT_REQUIRED;
// it stays open through AUTH_REQUIRED (DESIGN B2). A direct reply streams
// one Message.
func (s *Server) SendStreamingMessage(ctx context.Context, req *a2a.SendMessageRequest) iter.Seq2[a2a.StreamEvent, error] {
	return func(yield func(a2a.StreamEvent, error) bool) {
		acc, err := s.accept(ctx, req, true)
		if err != nil {
			yield(a2a.StreamEvent{}, err)
			return
		}
		defer s.release(acc.r)
		if acc.sub != nil {
			defer acc.r.unsubscribe(acc.sub)
		}
		hl := historyOf(req.GetConfiguration())
		if acc.snap != nil {
			acc.snap.Response.GetTask().History = withHistory(acc.snap.Response.GetTask(), hl, true).History
			if !yield(*acc.snap, nil) {
				return
			}
			if acc.sub == nil {
				return
			}
		}
		if acc.sub == nil {
			acc.r.mu.Lock()
			reply := acc.r.reply
			acc.r.mu.Unlock()
			if reply != nil {
				yield(a2a.StreamEvent{Response: &a2a.StreamResponse{Payload: &a2a.StreamResponse_Message{Message: reply}}}, nil)
			}
			return
		}
		pump(ctx, acc.sub, hl, true, yield)
	}
}

// pump forwards a subscription's events until the stream must end.
func pump(ctx context.Context, sub *subscriber, hl *int32, closeOnInput bool, yield func(a2a.StreamEvent, error) bool) {
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-sub.ch:
			if !ok {
				if sub.err != nil {
					yield(a2a.StreamEvent{}, sub.err)
				}
				return
			}
			if t := ev.Response.GetTask(); t != nil && hl != nil {
				// The event is shared by every subscriber: trim a copy.
				ev.Response = &a2a.StreamResponse{Payload: &a2a.StreamResponse_Task{Task: withHistory(t, hl, false)}}
			}
			if !yield(ev, nil) {
				return
			}
			if ev.Response.GetMessage() != nil {
				return
			}
			if su := ev.Response.GetStatusUpdate(); su != nil {
				st := su.GetStatus().GetState()
				if a2a.IsTerminal(st) || (closeOnInput && st == a2a.TaskState_TASK_STATE_INPUT_REQUIRED) {
					return
				}
			}
		}
	}
}

// accept validates a send, handles a resend of a known messageId, resolves
// the task and starts the agent. On success the caller owns a reference on
// acc.r and, when acc.sub is set (streams only), the subscription.
func (s *Server) accept(ctx context.Context, req *a2a.SendMessageRequest, stream bool) (*accepted, error) {
	c, err := s.begin(ctx, req.GetTenant())
	if err != nil {
		return nil, err
	}
	if stream && !s.streaming() {
		return nil, a2a.NewError(a2a.CodeUnsupportedOperation, "this agent does not support streaming")
	}
	if err := s.validateSend(req); err != nil {
		return nil, err
	}
	if p := req.GetConfiguration().GetTaskPushNotificationConfig(); p != nil {
		if err := s.checkPushURL(ctx, "configuration.taskPushNotificationConfig.url", p.GetUrl()); err != nil {
			return nil, err
		}
	}
	msg := proto.Clone(req.Message).(*a2a.Message)
	digest := digestOf(msg)
	key := msgKey{c.scope, msg.MessageId}

	// DESIGN B14: one first send per messageId at a time; later ones wait
	// and then see its record.
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
	defer func() {
		s.mu.Lock()
		close(s.inflight[key])
		delete(s.inflight, key)
		s.mu.Unlock()
	}()
	rec, err := s.store.GetMessage(ctx, c.scope, msg.MessageId)
	switch {
	case err == nil:
		if rec.Digest != digest {
			return nil, a2a.InvalidParams(a2a.FieldViolation{Field: "message.messageId",
				Description: "this messageId was already used for a different message; use a new messageId"})
		}
		return s.replay(ctx, c, rec, stream)
	case !errors.Is(err, taskstore.ErrNotFound):
		return nil, a2a.Internal(err)
	}

	areq := &Request{
		Principal: c.info.Principal, Extensions: append([]string(nil), c.info.Activated...),
		Configuration: req.GetConfiguration(), Metadata: req.GetMetadata(),
	}
	var push *a2a.TaskPushNotificationConfig
	if p := req.GetConfiguration().GetTaskPushNotificationConfig(); p != nil {
		push = proto.Clone(p).(*a2a.TaskPushNotificationConfig)
		push.Tenant = req.GetTenant()
		if push.Id == "" {
			push.Id = a2a.NewID()
		}
	}

	if msg.TaskId != "" {
		return s.continueTask(ctx, c, msg, digest, areq, push, stream)
	}

	// A new task: the ids are minted now; the task itself is created when
	// the agent first updates it (brief §4.4: task ids are server-minted).
	id := a2a.NewID()
	ctxID := msg.ContextId
	if ctxID == "" {
		ctxID = a2a.NewID()
	}
	msg.TaskId, msg.ContextId = id, ctxID
	if push != nil {
		push.TaskId = id
	}
	areq.TaskID, areq.ContextID = id, ctxID
	areq.Message = proto.Clone(msg).(*a2a.Message) // the agent's own copy
	r := s.acquire(id, c.scope)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.loaded = true
	r.pendingMessage, r.pendingContextID, r.pendingMessageID, r.pendingPush = msg, ctxID, msg.MessageId, push
	if _, err := s.store.PutMessage(ctx, c.scope, &taskstore.MessageRecord{
		MessageID: msg.MessageId, Digest: digest, TaskID: id, Created: s.now(),
	}); err != nil {
		s.releaseLocked(r)
		return nil, a2a.Internal(err)
	}
	sub := r.subscribeIf(stream)
	seq := r.seq
	ex := r.start(areq)
	return &accepted{r: r, sub: sub, ex: ex, seq: seq}, nil
}

// releaseLocked releases a run whose lock the caller holds.
func (s *Server) releaseLocked(r *run) {
	r.mu.Unlock()
	s.release(r)
	r.mu.Lock()
}

// continueTask handles a message for an existing task (brief §4.4, §4.5).
func (s *Server) continueTask(ctx context.Context, c call, msg *a2a.Message, digest string, areq *Request, push *a2a.TaskPushNotificationConfig, stream bool) (*accepted, error) {
	r := s.acquire(msg.TaskId, c.scope)
	r.mu.Lock()
	defer r.mu.Unlock()
	fail := func(err error) (*accepted, error) {
		s.releaseLocked(r)
		return nil, err
	}
	if err := r.load(ctx); err != nil {
		return fail(err)
	}
	// An agent that just reported an interrupted state may not have returned
	// yet: wait for that execution to end (bounded by the caller's context)
	// instead of refusing the follow-up the task asked for.
	for ex := r.exec; ex != nil && !ex.detached && settled(r.task.GetStatus().GetState()); ex = r.exec {
		r.mu.Unlock()
		select {
		case <-ex.ended:
			r.mu.Lock()
		case <-ctx.Done():
			r.mu.Lock()
			return fail(context.Cause(ctx))
		}
	}
	t := r.task
	// DESIGN B10 before B6: a mismatched contextId is invalid whatever the
	// task's state.
	if msg.ContextId != "" && msg.ContextId != t.ContextId {
		return fail(a2a.InvalidParams(a2a.FieldViolation{Field: "message.contextId",
			Description: "does not match the contextId of task " + t.Id}))
	}
	if a2a.IsTerminal(t.GetStatus().GetState()) {
		return fail(a2a.NewError(a2a.CodeUnsupportedOperation,
			"task %q is %s: a terminal task accepts no more messages; start a new task in the same context", t.Id, t.GetStatus().GetState()).
			WithMeta("taskId", t.Id))
	}
	if r.exec != nil {
		return fail(a2a.NewError(a2a.CodeUnsupportedOperation,
			"task %q is still working on an earlier message; send more input once it asks for it", t.Id).WithMeta("taskId", t.Id))
	}
	// DESIGN B9: the context is inferred from the task and stamped on the
	// stored message.
	msg.ContextId = t.ContextId
	areq.TaskID, areq.ContextID = t.Id, t.ContextId
	areq.Task = proto.Clone(t).(*a2a.Task)
	areq.Message = proto.Clone(msg).(*a2a.Message)
	t.History = append(t.History, msg)
	if err := s.store.UpdateTask(ctx, c.scope, t, taskstore.Event{}); err != nil {
		t.History = t.History[:len(t.History)-1]
		return fail(a2a.Internal(err))
	}
	if push != nil {
		push.TaskId = t.Id
		if err := r.putPushConfig(ctx, push); err != nil {
			return fail(a2a.Internal(err))
		}
	}
	if _, err := s.store.PutMessage(ctx, c.scope, &taskstore.MessageRecord{
		MessageID: msg.MessageId, Digest: digest, TaskID: t.Id, Created: s.now(),
	}); err != nil {
		return fail(a2a.Internal(err))
	}
	r.reply = nil
	snap := &a2a.StreamEvent{Seq: r.seq, Response: &a2a.StreamResponse{Payload: &a2a.StreamResponse_Task{Task: proto.Clone(t).(*a2a.Task)}}}
	sub := r.subscribeIf(stream)
	seq := r.seq
	ex := r.start(areq)
	return &accepted{r: r, sub: sub, snap: snap, ex: ex, seq: seq}, nil
}

// replay answers a resend of a known messageId with the original result,
// without running the agent again (DESIGN B14): the direct reply, or the
// task, followed live while it is still running.
func (s *Server) replay(ctx context.Context, c call, rec *taskstore.MessageRecord, stream bool) (*accepted, error) {
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
			return nil, err
		}
	}
	acc := &accepted{r: r, replay: rec}
	if r.task != nil {
		acc.snap = &a2a.StreamEvent{Seq: r.seq, Response: &a2a.StreamResponse{Payload: &a2a.StreamResponse_Task{Task: proto.Clone(r.task).(*a2a.Task)}}}
		if settled(r.task.GetStatus().GetState()) {
			return acc, nil
		}
	}
	acc.sub = r.subscribeIf(stream)
	acc.ex, acc.seq = r.exec, r.seq
	return acc, nil
}

// historyOf returns the configuration's historyLength (nil when unset).
func historyOf(cfg *a2a.SendMessageConfiguration) *int32 {
	if cfg == nil {
		return nil
	}
	return cfg.HistoryLength
}

// digestOf identifies a message's content for DESIGN B14.
func digestOf(m *a2a.Message) string {
	b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// validateSend checks a SendMessageRequest before anything runs (brief §7.3).
func (s *Server) validateSend(req *a2a.SendMessageRequest) error {
	var v []a2a.FieldViolation
	v = append(v, a2a.CheckRequired(req)...)
	if m := req.GetMessage(); m != nil && m.Role == a2a.Role_ROLE_AGENT {
		v = append(v, a2a.FieldViolation{Field: "message.role", Description: "a client message must have role ROLE_USER"})
	}
	cfg := req.GetConfiguration()
	if cfg != nil && cfg.HistoryLength != nil && *cfg.HistoryLength < 0 {
		v = append(v, a2a.FieldViolation{Field: "configuration.historyLength", Description: "must be zero or positive"})
	}
	if p := cfg.GetTaskPushNotificationConfig(); p != nil {
		if !s.pushEnabled() {
			return a2a.NewError(a2a.CodePushNotificationNotSupported, "this agent does not support push notifications")
		}
		v = append(v, validatePushURL("configuration.taskPushNotificationConfig.url", p.GetUrl())...)
	}
	if len(v) > 0 {
		return a2a.InvalidParams(v...)
	}
	for i, p := range req.GetMessage().GetParts() {
		mt := p.GetMediaType()
		if mt == "" {
			switch p.GetContent().(type) {
			case *a2a.Part_Text:
				mt = "text/plain"
			case *a2a.Part_Data:
				mt = "application/json"
			}
		}
		if mt != "" && !acceptsMedia(s.card.GetDefaultInputModes(), mt) {
			return a2a.NewError(a2a.CodeContentTypeNotSupported,
				"message.parts[%d]: media type %q is not accepted; the agent accepts %s", i, mt, strings.Join(s.card.GetDefaultInputModes(), ", ")).
				WithMeta("mediaType", mt)
		}
	}
	return nil
}

// acceptsMedia reports whether a media type matches one of the modes
// (exact, "type/*" or "*/*"; parameters ignored).
func acceptsMedia(modes []string, mt string) bool {
	base, _, err := mime.ParseMediaType(mt)
	if err != nil {
		base = strings.ToLower(strings.TrimSpace(mt))
	}
	for _, m := range modes {
		mb, _, err := mime.ParseMediaType(m)
		if err != nil {
			mb = strings.ToLower(strings.TrimSpace(m))
		}
		if mb == "*/*" || mb == base || (strings.HasSuffix(mb, "/*") && strings.HasPrefix(base, strings.TrimSuffix(mb, "*"))) {
			return true
		}
	}
	return false
}

// validatePushURL checks a webhook URL is an absolute http(s) URL with a
// host (brief §6.1).
func validatePushURL(field, raw string) []a2a.FieldViolation {
	u, err := url.Parse(raw)
	if raw == "" {
		return []a2a.FieldViolation{{Field: field, Description: "is required"}}
	}
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return []a2a.FieldViolation{{Field: field, Description: "must be an absolute http or https URL"}}
	}
	return nil
}
