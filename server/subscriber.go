package server

import (
	"context"
	"sync"

	"parley.dev/parley/a2a"
)

// subscriber receives a task's events through a bounded queue. A reader
// that lets limit events pile up is cut off (closed with an error) rather
// than slowing the agent or growing memory. The queue is a slice that
// grows only while events wait, so an idle subscriber costs a few hundred
// bytes, not a buffer sized for the worst case (the aim: an idle stream
// costs little, and 10,000 may watch one task).
type subscriber struct {
	limit int
	ready chan struct{} // capacity 1: signalled when events arrive or on close

	mu     sync.Mutex
	queue  []a2a.StreamEvent
	closed bool
	err    error  // why the subscriber was closed early (cut off), if it was
	last   uint64 // sequence number of the last event queued
	idler  Idler
}

// newSubscriber returns a subscriber that has been given every event up to
// last (as a snapshot or from the log).
func newSubscriber(limit int, last uint64) *subscriber {
	return &subscriber{limit: limit, last: last, ready: make(chan struct{}, 1)}
}

// offer queues ev. It reports false, queuing nothing, when the reader is
// already limit events behind.
func (s *subscriber) offer(ev a2a.StreamEvent) bool {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return true
	}
	if len(s.queue) >= s.limit {
		s.mu.Unlock()
		return false
	}
	s.queue = append(s.queue, ev)
	s.last = max(s.last, ev.Seq)
	idler := s.idler
	s.mu.Unlock()
	s.signal(idler)
	return true
}

// lastSeq returns the sequence number of the last event queued.
func (s *subscriber) lastSeq() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

// close ends the subscription after the queued events; err, when not nil,
// is what the reader gets after them. Only the first close counts.
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

// take returns the queued events and whether the subscriber is closed (and
// why). buf, a slice take returned earlier that the caller is done with,
// becomes the next queue, so two slices serve a busy stream.
func (s *subscriber) take(buf []a2a.StreamEvent) (evs []a2a.StreamEvent, closed bool, err error) {
	clear(buf)
	s.mu.Lock()
	defer s.mu.Unlock()
	evs, s.queue = s.queue, buf[:0]
	return evs, s.closed, s.err
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
