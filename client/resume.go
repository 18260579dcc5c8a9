package client

import (
	"context"
	"errors"
	"fmt"
	"iter"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
)

// How a Client carries a task stream (SendStreamingMessage,
// SubscribeToTask) across a broken connection. Every event of a task has a
// sequence number (StreamEvent.Seq: 1 for the creation, then +1 per
// event). When a stream that has delivered numbered events breaks before
// its task settled, the Client calls SubscribeToTask for the task with the
// number of the last event it yielded (WithResumeAfter, sent as
// Last-Event-ID or the gRPC metadata last-event-id): the server sends the
// events after it, then live ones, and the caller's iterator goes on as if
// nothing happened. On the resumed stream, any event whose number is not
// above the last one yielded is dropped, so a server that repeats itself
// causes no duplicate. Only ids that behave as sequence numbers (one more
// per event) are trusted before a server has answered a resume: SSE ids
// of other servers may mean something else, and such a stream is neither
// filtered nor resumed.

// lastEventIDMeta is the error metadata key under which a server that cut
// a subscriber off (it read too slowly) names the last event it sent: such
// an error is a break to resume from, not the end of the stream.
const lastEventIDMeta = "lastEventId"

// streamRun is one ranging of a task stream.
type streamRun struct {
	c     *Client
	ctx   context.Context
	m     *a2a.Method
	tr    streamTracker
	yield func(a2a.StreamEvent, error) bool
	// last is the number of the last event yielded; 0 when unknown (no
	// event yet, or the binding did not number the last one), which rules
	// resumption out.
	last uint64
	// resumed is set once the stream continues as a SubscribeToTask.
	resumed bool
	// given is set when the caller asked for a SubscribeToTask after a
	// position of its own (WithResumeAfter).
	given bool
	// yielded counts the events yielded.
	yielded int
	// numbered says the events carry the task's sequence numbers: every
	// one numbered, one more than the one before (see forward).
	numbered bool
	// ignored is set when a server answered a resume with a fresh
	// subscription (a Task snapshot numbered at or before the position):
	// it does not honour Last-Event-ID, and the stream cannot go on
	// without a gap.
	ignored bool
}

// stream runs a streaming call with interface fallback, retries before the
// first event, resumption after it, and the check of how the stream ended
// (see ErrStreamEnded).
//
// Each ranging of the returned sequence is one independent call.
func (c *Client) stream(ctx context.Context, m *a2a.Method, req proto.Message, tr streamTracker) iter.Seq2[a2a.StreamEvent, error] {
	return func(yield func(a2a.StreamEvent, error) bool) {
		s := &streamRun{c: c, ctx: ctx, m: m, tr: tr, yield: yield}
		if seq, ok := ResumeAfter(ctx); ok && m.Name == a2a.MethodSubscribeToTask {
			s.last, s.given, s.numbered = seq, true, true // the caller resumes: nothing up to seq is news
		}
		s.run(proto.Clone(req))
	}
}

// run makes the call, retrying it while it fails before any event, and
// hands a stream broken after its start to resume.
func (s *streamRun) run(req proto.Message) {
	for attempt := 0; ; attempt++ {
		started, err := s.pass(s.ctx, s.m, req)
		switch {
		case err == nil:
			return
		case started:
			s.resume(err)
			return
		case attempt >= s.c.retries || !retryable(err, true) || s.ctx.Err() != nil:
			s.yield(a2a.StreamEvent{}, err)
			return
		}
		if werr := s.c.wait(s.ctx, attempt, err); werr != nil {
			s.yield(a2a.StreamEvent{}, werr)
			return
		}
	}
}

// pass makes one call of m, on the current interface and, while
// connections fail, on the next ones, forwarding its events. started says
// whether any event arrived. A nil error means the run is over: the stream
// ended (its end check yielded) or the consumer stopped; otherwise the
// error is the failure that ended the pass, not yet yielded.
func (s *streamRun) pass(ctx context.Context, m *a2a.Method, req proto.Message) (started bool, err error) {
	c := s.c
	start := int(c.cur.Load())
	for k := range c.cands {
		i := (start + k) % len(c.cands)
		setTenant(req, c.cands[i].iface.GetTenant())
		started, err = false, nil
		for ev, e := range c.cands[i].t.Stream(ctx, m, req) {
			if !started && k > 0 && !connectFailed(e) {
				c.cur.CompareAndSwap(int32(start), int32(i)) // this interface answers
			}
			if e != nil {
				err = e
				break
			}
			started = true
			if !s.forward(ev) {
				return true, nil
			}
		}
		if err == nil {
			s.ended()
			return started, nil
		}
		if started || !connectFailed(err) {
			return started, err
		}
	}
	return started, err
}

// ended judges a stream the server closed: an error unless the task
// settled (see ErrStreamEnded). A resumption the caller asked for that
// brings no event at all is whole: the server closes such a stream at
// once only when the position it was given is the end of a finished task.
func (s *streamRun) ended() {
	if s.given && s.yielded == 0 {
		return
	}
	if err := s.tr.end(); err != nil {
		s.yield(a2a.StreamEvent{}, err)
	}
}

// forward yields an event unless it was yielded already. It returns false
// when the run is over: the consumer stopped, or a resumed stream reached
// the point where the original one would have closed.
func (s *streamRun) forward(ev a2a.StreamEvent) bool {
	lenient := s.resumed || s.given // a position was sent: the server speaks resume
	if lenient && ev.Seq != 0 && ev.Seq <= s.last {
		if s.resumed && ev.Snapshot() {
			s.ignored = true
			return false
		}
		return true // already yielded before the break
	}
	switch {
	case ev.Seq == 0:
		s.numbered = false
	case s.yielded == 0 && !s.given:
		s.numbered = true
	case !lenient:
		// Until a server has answered a resume, its ids count as sequence
		// numbers only while they go up by one: other servers' SSE ids
		// may mean something else.
		s.numbered = s.numbered && ev.Seq == s.last+1
	}
	s.last = ev.Seq
	s.yielded++
	s.tr.observe(ev)
	if !s.yield(ev, nil) {
		return false
	}
	// A SendStreamingMessage stream closes at INPUT_REQUIRED
	// (decision B2); the subscription carrying it on after a
	// break would not, so the Client ends it there.
	return !(s.resumed && s.tr.send && s.tr.closesSend())
}

// resume carries a stream broken by err on as a SubscribeToTask after the
// last event yielded, as long as the break allows it (resumable), making at
// most Options.Resumes attempts in a row without receiving a new event,
// with backoff between them. The first attempt is made at once. A break
// after the task settled, on the first stream or on a resumed one, ends
// the run without error (closeLost).
func (s *streamRun) resume(err error) {
	m := a2a.MethodByName(a2a.MethodSubscribeToTask)
	for tries := 0; !s.closeLost(err) && s.resumable(err) && tries < s.c.resumes; {
		if tries > 0 {
			if werr := s.c.wait(s.ctx, tries-1, nil); werr != nil {
				s.yield(a2a.StreamEvent{}, werr)
				return
			}
		}
		tries++
		if s.c.onResume != nil {
			s.c.onResume(s.tr.taskID, s.last, err)
		}
		s.resumed = true
		s.tr.resumed()
		before := s.last
		sub := &a2a.SubscribeToTaskRequest{Id: s.tr.taskID}
		_, err = s.pass(WithResumeAfter(s.ctx, s.last), m, sub)
		if s.ignored {
			s.yield(a2a.StreamEvent{}, &StreamEndedError{TaskID: s.tr.taskID, State: s.tr.state,
				Err: fmt.Errorf("the server did not resume the stream after event %d: it started over", before)})
			return
		}
		if err == nil {
			return
		}
		if s.last != before {
			tries = 0 // progress: the next break gets its own attempts
		}
	}
	if !s.closeLost(err) {
		s.yield(a2a.StreamEvent{}, s.tr.cut(s.ctx, err))
	}
}

// closeLost reports whether a stream broken by err had delivered all
// there was: the task settled and the break is a transport failure, so
// only the stream's orderly close was lost.
func (s *streamRun) closeLost(err error) bool {
	var te *TransportError
	return s.tr.settled() && errors.As(err, &te)
}

// resumable reports whether a stream broken by err can be resumed: the
// task and the last event's number are known (the events were numbered
// as sequence numbers are, see forward), the task has not settled,
// the caller has not given up, and the break is a transport failure or the
// server's report that it ended the stream early and where to pick up (an
// UnavailableError, or an InternalError from servers before 2026-12, whose
// metadata names lastEventId). Any other error the server sent ends the
// stream.
func (s *streamRun) resumable(err error) bool {
	if s.c.resumes <= 0 || s.ctx.Err() != nil || s.tr.taskID == "" || !s.numbered || s.last == 0 || s.tr.over() {
		return false
	}
	var te *TransportError
	if errors.As(err, &te) {
		return true
	}
	var ae *a2a.Error
	return errors.As(err, &ae) && (ae.Code == a2a.CodeUnavailable || ae.Code == a2a.CodeInternal) && ae.Metadata[lastEventIDMeta] != ""
}
