package server

// SendMessage and SendStreamingMessage: how the answer to an accepted
// message reaches the caller, as one result or as a stream.

import (
	"context"
	"iter"

	"parley.dev/parley/a2a"
)

// SendMessage implements a2a.Service (spec §3.1.1). It blocks until the task
// is terminal or interrupted unless configuration.returnImmediately is set.
func (s *Server) SendMessage(ctx context.Context, req *a2a.SendMessageRequest) (out *a2a.SendMessageResponse, err error) {
	if err := s.refuseWhileDraining(); err != nil {
		return nil, err // Shutdown is draining
	}
	acc, err := s.accept(ctx, req, false)
	if err != nil {
		return nil, err
	}
	defer s.release(acc.r)
	defer func() { // after r.mu is let go
		if err == nil {
			err = s.timelined(ctx, acc.r.scope, out.GetTask(), timelineOf(req.GetConfiguration()))
		}
	}()
	r := acc.r // a blocking call waits on the run's state, not on a stream
	immediate := req.GetConfiguration().GetReturnImmediately() && acc.replay == nil
	r.mu.Lock()
	defer r.mu.Unlock()
	ch := r.wait()
	r.follow() // a resend of a message another replica runs
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
	if r.task == nil || !settled(r.task.GetStatus().GetState()) {
		if err := s.refuseUnfinished(r.scope, r.id); err != nil {
			return nil, err // the store did not take how the task ended
		}
	}
	if r.task == nil {
		return nil, a2a.NewError(a2a.CodeInternal, "the agent produced no result")
	}
	t := s.answerRun(ctx, r, historyOf(req.GetConfiguration()))
	return &a2a.SendMessageResponse{Payload: &a2a.SendMessageResponse_Task{Task: t}}, nil
}

// answered reports whether a blocking send can return: there is a direct
// reply; or the task exists and either the caller asked to return at once,
// or the task changed (not by a client's message) since the message was
// accepted and is now terminal or interrupted; or the execution is over.
// Callers hold acc.r.mu.
func (acc *accepted) answered(immediate bool) bool {
	r := acc.r
	switch {
	case r.reply != nil:
		return true
	case r.task == nil:
		return acc.ex == nil || acc.ex.done
	case immediate:
		return true
	case acc.remote, acc.ex != nil && acc.ex.taken:
		// A resend of a message another replica runs, or a follow-up
		// that gave way to one another replica accepted at once: the
		// answer the first gets there.
		return settled(r.task.GetStatus().GetState()) || r.tail == nil
	case acc.ex == nil, acc.ex.done:
		return true
	}
	// A change since: an event past acc.seq that is not another client's
	// message (entered, which changes no state).
	return r.seq-acc.seq > r.entries-acc.entries && settled(r.task.GetStatus().GetState())
}

// SendStreamingMessage implements a2a.Service (spec §3.1.2). A task stream
// starts with the Task and closes after a terminal state or INPUT_REQUIRED;
// it stays open through AUTH_REQUIRED (spec §7.6.1, decision B2). A direct
// reply streams one Message.
func (s *Server) SendStreamingMessage(ctx context.Context, req *a2a.SendMessageRequest) iter.Seq2[a2a.StreamEvent, error] {
	return s.viewStream(ctx, func(yield func(a2a.StreamEvent, error) bool) {
		if err := s.refuseWhileDraining(); err != nil {
			yield(a2a.StreamEvent{}, err) // Shutdown is draining
			return
		}
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
	})
}

// pump forwards a subscription's events until the stream must end: the
// queued ones, then those it missed from the log when it fell behind.
func pump(ctx context.Context, sub *subscriber, hl *int32, closeOnInput bool, yield func(a2a.StreamEvent, error) bool) {
	sub.idleWith(ctx)
	var evs []a2a.StreamEvent
	for {
		b := sub.take(evs)
		evs = b.evs
		for i, ev := range evs {
			ev.More = i < len(evs)-1 || (b.behind && !b.closed)
			if !pass(ev, hl, closeOnInput, yield) {
				return
			}
		}
		switch {
		case b.closed && b.err != nil:
			yield(a2a.StreamEvent{}, b.err)
			return
		case b.behind:
			if !sub.catchUp(ctx, hl, closeOnInput, yield) {
				return
			}
		case b.closed:
			return
		case len(evs) == 0 && !sub.next(ctx):
			return
		}
	}
}

// pass yields one event of pump, trimming a Task's history to hl. It
// reports whether the stream goes on: not after a direct reply, a terminal
// state or (with closeOnInput) INPUT_REQUIRED.
func pass(ev a2a.StreamEvent, hl *int32, closeOnInput bool, yield func(a2a.StreamEvent, error) bool) bool {
	if t := ev.Response.GetTask(); t != nil && hl != nil {
		// The event is shared by every subscriber: trim a copy.
		ev.Response = &a2a.StreamResponse{Payload: &a2a.StreamResponse_Task{Task: withHistory(t, hl, false)}}
		ev.Cache = nil // its encodings are this stream's own
	}
	if !yield(ev, nil) || ev.Response.GetMessage() != nil {
		return false
	}
	if su := ev.Response.GetStatusUpdate(); su != nil {
		st := su.GetStatus().GetState()
		if a2a.IsTerminal(st) || (closeOnInput && st == a2a.TaskState_TASK_STATE_INPUT_REQUIRED) {
			return false
		}
	}
	return true
}

// historyOf returns the configuration's historyLength (nil when unset).
func historyOf(cfg *a2a.SendMessageConfiguration) *int32 {
	if cfg == nil {
		return nil
	}
	return cfg.HistoryLength
}

// timelineOf returns the configuration's timelineLength (nil when unset).
func timelineOf(cfg *a2a.SendMessageConfiguration) *int32 {
	if cfg == nil {
		return nil
	}
	return cfg.TimelineLength
}

// withHistory returns a copy of t limited to the last n history messages
// (decision B4: nil means all, 0 means none).
func withHistory(t *a2a.Task, n *int32, owned bool) *a2a.Task {
	if !owned {
		t = a2a.CloneTask(t)
	}
	if n != nil {
		if *n == 0 {
			t.History = nil
		} else if int(*n) < len(t.History) {
			t.History = t.History[len(t.History)-int(*n):]
		}
	}
	return t
}
