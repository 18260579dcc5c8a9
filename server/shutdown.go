package server

// Shutdown: a drain before the stop. Close stops at once; Shutdown first
// lets the work in progress end.

import (
	"context"
	"time"

	"parley.dev/parley/a2a"
)

// ShutdownGrace is how long Shutdown gives the agents it cancels to
// return before it ends their tasks itself.
const ShutdownGrace = time.Second

// shutdownMessage is the status message of a task that was still running
// when the server stopped (Close, or Shutdown past its deadline).
const shutdownMessage = "server shutting down: the server shut down before the task finished"

// Shutdown stops the server gracefully, in two steps.
//
// The drain: from the moment Shutdown is called, SendMessage and
// SendStreamingMessage refuse every message, resends and follow-ups
// included, with an UnavailableError (HTTP 503 with Retry-After, gRPC
// UNAVAILABLE) whose message says the server is shutting down and that
// the message was not accepted (a system error, spec §3.3.2: the caller
// may send it again, with the same messageId, to another replica or once
// the server is back). Every other operation is
// served as before, except that a long-poll GetTask is held no more: the
// holds answer at once with the task as it is, and a new one is answered
// without a hold (spec §3.2.7 allows it), so that its caller's next poll
// finds a server that stays. Executions in progress, calls of Agent.Execute and
// detached background work alike, go on undisturbed: a blocking send gets
// its task when the task settles, a stream gets its events through the
// terminal one (spec §3.1.2, §3.1.6). Shutdown waits for them until ctx is
// done.
//
// The stop: then Shutdown does what Close does, giving the agents still
// running ShutdownGrace to return after their context is canceled (cause
// ErrShutdown). A task they leave unfinished ends FAILED with a status
// message saying the server is shutting down; that status reaches every
// stream of the task as its terminal event, and the blocking send waiting
// on it returns the task. A task already INPUT_REQUIRED or AUTH_REQUIRED
// stays so: its open streams (SubscribeToTask; SendStreamingMessage
// through AUTH_REQUIRED) get no terminal event, and end only when their
// requests do.
//
// With Options.Cluster a task still running at the stop ends FAILED as
// well: it is not handed to another replica.
//
// Shutdown returns ctx's error when executions were still running when
// ctx was done (they were then stopped as described), else what Close
// returns. As with Close, the HTTP side must let the answers out: stop
// accepting connections (http.Server.Shutdown) before or while Shutdown
// drains, and end the requests still open only after it returns.
func (s *Server) Shutdown(ctx context.Context) error {
	s.draining.Store(true)
	s.drainMu.Do(func() { close(s.drainCh) })
	err := s.awaitExecutions(ctx)
	grace, cancel := context.WithTimeout(context.WithoutCancel(ctx), ShutdownGrace)
	defer cancel()
	if cerr := s.Close(grace); err == nil {
		err = cerr
	}
	return err
}

// refuseWhileDraining returns the error a new message gets while the server
// drains (Shutdown), or nil.
func (s *Server) refuseWhileDraining() error {
	if !s.draining.Load() {
		return nil
	}
	// A server unavailable for a while is a system error (spec §3.3.2):
	// UnavailableError, HTTP 503 with Retry-After or gRPC UNAVAILABLE,
	// which clients retry (with the same messageId, so nothing runs
	// twice), reaching another replica or this one once it is back.
	return a2a.Unavailable(
		"the server is shutting down: the message was not accepted; send it again, to another replica or once the server is back",
		a2a.DefaultRetryAfter, nil).
		WithMeta("shuttingDown", "true")
}

// execStarted counts one more execution in progress.
func (s *Server) execStarted() {
	s.mu.Lock()
	s.execs++
	s.mu.Unlock()
}

// execEnded counts one execution less, and wakes Shutdown when none is
// left.
func (s *Server) execEnded() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.execs--
	if s.execs == 0 && s.idle != nil {
		close(s.idle)
		s.idle = nil
	}
}

// awaitExecutions waits until no execution is in progress, or ctx is done
// (then it returns ctx's error).
func (s *Server) awaitExecutions(ctx context.Context) error {
	for {
		s.mu.Lock()
		if s.execs == 0 {
			s.mu.Unlock()
			return nil
		}
		if s.idle == nil {
			s.idle = make(chan struct{})
		}
		idle := s.idle
		s.mu.Unlock()
		select {
		case <-idle:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
