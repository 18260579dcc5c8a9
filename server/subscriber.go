package server

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
)

// subscriber receives a task's events through a bounded queue. It is never
// cut off for falling behind while its reader reads: when its bound of
// events wait (run.publish sets it), it stops queuing and only notes how
// far the task has gone, and its reader, once it has written what was
// queued, reads the events it missed from the task's event log (every
// store keeps it, and every event is stored before it is published), then
// takes live events again. So the agent is never held back by a slow
// reader, the memory a subscriber holds is bounded, and the reader gets
// every event once, in order. A reader that stops reading is the
// binding's to cut (its write deadline).
//
// The queue is a slice that grows only while events wait, so an idle
// subscriber costs a few hundred bytes, not a buffer sized for the worst
// case (the aim: an idle stream costs little, and 10,000 may watch one
// task).
type subscriber struct {
	ready chan struct{} // capacity 1: signalled when events arrive or on close
	task  string        // the task's id, for errors
	log   eventLog      // the task's event log, read while behind

	mu     sync.Mutex
	queue  []a2a.StreamEvent
	closed bool
	err    error  // why the subscriber was closed early (cut off), if it was
	last   uint64 // sequence number of the last event queued or read from the log
	behind bool   // events after last were published but not queued
	head   uint64 // while behind: the last event published
	idler  Idler
}

// eventLog reads a task's logged events after a sequence number, as
// taskstore.Tasks.Events does.
type eventLog func(ctx context.Context, after uint64, limit int) ([]a2a.StreamEvent, error)

// newSubscriber returns a subscriber that has been given every event up to
// last (as a snapshot or from the log).
func newSubscriber(last uint64, task string, log eventLog) *subscriber {
	return &subscriber{last: last, task: task, log: log, ready: make(chan struct{}, 1)}
}

// offer queues ev, or, when limit events already wait, notes that the
// reader must read it from the log. An event the reader already got from
// the log is dropped. An event without a sequence number (a direct reply,
// which is not logged and comes only first) is always queued.
func (s *subscriber) offer(ev a2a.StreamEvent, limit int) {
	s.mu.Lock()
	switch {
	case s.closed || (ev.Seq != 0 && ev.Seq <= s.last):
		s.mu.Unlock()
		return
	case ev.Seq != 0 && (s.behind || len(s.queue) >= limit):
		wake := !s.behind
		s.behind, s.head = true, ev.Seq
		idler := s.idler
		s.mu.Unlock()
		if wake {
			s.signal(idler)
		}
		return
	}
	s.queue = append(s.queue, ev)
	s.last = max(s.last, ev.Seq)
	idler := s.idler
	s.mu.Unlock()
	s.signal(idler)
}

// lastSeq returns the sequence number of the last event queued or read
// from the log.
func (s *subscriber) lastSeq() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

// close ends the subscription after the queued events; err, when not nil,
// is what the reader gets after them (and the events it would have read
// from the log are not read). Only the first close counts.
func (s *subscriber) close(err error) {
	s.mu.Lock()
	if !s.closed {
		s.closed, s.err = true, err
	}
	idler := s.idler
	s.mu.Unlock()
	s.signal(idler)
}

// signal wakes the reader: through ready, and through its stream's Idler
// when it has one (a parked stream does not watch ready).
func (s *subscriber) signal(idler Idler) {
	select {
	case s.ready <- struct{}{}:
	default:
	}
	if idler != nil {
		idler.Wake()
	}
}

// idleWith has the reader wait through the stream's Idler, when ctx
// carries one (WithIdler), from now on.
func (s *subscriber) idleWith(ctx context.Context) {
	if id := IdlerFrom(ctx); id != nil {
		s.mu.Lock()
		s.idler = id
		s.mu.Unlock()
	}
}

// batch is what one take hands the reader.
type batch struct {
	evs    []a2a.StreamEvent // the queued events, in order
	behind bool              // then events to read from the log (catchUp)
	closed bool              // then the end of the subscription
	err    error             // and why, when it was cut off
}

// take returns the queued events and what follows them. buf, a slice take
// returned earlier that the caller is done with, becomes the next queue,
// so two slices serve a busy stream.
func (s *subscriber) take(buf []a2a.StreamEvent) batch {
	clear(buf)
	s.mu.Lock()
	defer s.mu.Unlock()
	b := batch{evs: s.queue, behind: s.behind, closed: s.closed, err: s.err}
	s.queue = buf[:0]
	return b
}

// missed returns the next range of logged events the reader lacks, (after,
// upto]; when there is none it has caught up, and takes live events again.
func (s *subscriber) missed() (after, upto uint64, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last >= s.head {
		s.behind = false
		return 0, 0, false
	}
	return s.last, s.head, true
}

// caughtUpTo records that the reader got the logged events up to seq.
func (s *subscriber) caughtUpTo(seq uint64) {
	s.mu.Lock()
	s.last = max(s.last, seq)
	s.mu.Unlock()
}

// catchUp yields the logged events the reader missed while it was behind,
// page by page, until it has every event published so far. It reports
// whether the stream goes on. A log that cannot be read (pruned, or the
// store failing) ends the stream with an UnavailableError naming the last
// event yielded, where a SubscribeToTask with Last-Event-ID picks up.
func (s *subscriber) catchUp(ctx context.Context, hl *int32, closeOnInput bool, yield func(a2a.StreamEvent, error) bool) bool {
	for {
		after, upto, ok := s.missed()
		if !ok {
			return true
		}
		evs, err := s.log(ctx, after, min(resumePage, int(upto-after)))
		if err == nil && len(evs) == 0 {
			err = errors.New("the event log ended early")
		}
		if err != nil {
			if ctx.Err() == nil {
				yield(a2a.StreamEvent{}, a2a.NewError(a2a.CodeUnavailable,
					"stream closed: reading the events after %d of task %q: %v; call SubscribeToTask with Last-Event-ID %d to resume",
					after, s.task, err, after).WithMeta("taskId", s.task).WithMeta("lastEventId", strconv.FormatUint(after, 10)))
			}
			return false
		}
		last := evs[len(evs)-1].Seq
		evs = streamed(evs)
		for i, ev := range evs {
			ev.More = i < len(evs)-1
			if !pass(ev, hl, closeOnInput, yield) {
				return false
			}
		}
		s.caughtUpTo(last)
	}
}

// streamed returns the events of a page of a task's log that its streams
// are sent: all but the clients' messages (taskstore.IsClientMessage),
// timeline entries that reach a stream as a gap in the numbers (spec
// §3.2.7). A page holding none is returned as it is, any other as a copy
// (the store's page may be shared).
func streamed(evs []a2a.StreamEvent) []a2a.StreamEvent {
	isMsg := func(ev a2a.StreamEvent) bool { return taskstore.IsClientMessage(ev.Response) }
	if !slices.ContainsFunc(evs, isMsg) {
		return evs
	}
	return slices.DeleteFunc(slices.Clone(evs), isMsg)
}

// next waits until events may be queued or the subscriber closed. It
// reports false when ctx ended first, or the stream's Idler saw its reader
// go.
func (s *subscriber) next(ctx context.Context) bool {
	s.mu.Lock()
	idler := s.idler
	s.mu.Unlock()
	if idler != nil {
		return idler.Idle(ctx, s.ready)
	}
	select {
	case <-ctx.Done():
		return false
	case <-s.ready:
		return true
	}
}
