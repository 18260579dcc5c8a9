package server

import (
	"context"

	"parley.dev/parley/taskstore"
)

// DigestOf is digestOf, for tests that write a message's idempotency
// record themselves.
var DigestOf = digestOf

// TaskLoaded reports whether the live run of task id (empty scope) holds
// a copy of the task, and whether there is a live run at all.
func (s *Server) TaskLoaded(id string) (loaded, live bool) {
	s.mu.Lock()
	var r *run
	for k, v := range s.runs {
		if k.id == id {
			r = v
		}
	}
	s.mu.Unlock()
	if r == nil {
		return false, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.task != nil, true
}

// Waiters returns how many calls wait on the live run of task id (any
// scope): blocking sends and long polls being held.
func (s *Server) Waiters(id string) int {
	n := 0
	for _, r := range s.liveRuns() {
		if r.id == id {
			r.mu.Lock()
			n += len(r.waiters)
			r.mu.Unlock()
		}
	}
	return n
}

// HeldRun is the live run of a task that a test keeps loaded, so that it
// lags what other replicas write to the store until the test applies it.
type HeldRun struct{ r *run }

// HoldRun loads the run of task id (empty scope) and keeps it live until
// Release.
func (s *Server) HoldRun(ctx context.Context, id string) (*HeldRun, error) {
	r := s.acquire(id, taskstore.Scope{})
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.load(ctx); err != nil {
		s.releaseLocked(r)
		return nil, err
	}
	return &HeldRun{r}, nil
}

// ApplyNext applies the store's next event after the run's last one, as
// the run's follower would, and returns the run's sequence number.
func (h *HeldRun) ApplyNext(ctx context.Context) (uint64, error) {
	r := h.r
	r.mu.Lock()
	defer r.mu.Unlock()
	evs, err := r.s.store.Events(ctx, r.scope, r.id, r.seq, 1)
	if err != nil {
		return 0, err
	}
	for _, ev := range evs {
		r.absorb(ev)
	}
	return r.seq, nil
}

// Release lets the run go.
func (h *HeldRun) Release() { h.r.s.release(h.r) }

// ReadTimeline is readTimeline: the task's timeline up to event upto.
func (s *Server) ReadTimeline(ctx context.Context, scope taskstore.Scope, id string, upto uint64) (*taskstore.Timeline, error) {
	return s.readTimeline(ctx, scope, id, upto, nil)
}
