package server

// Long polls (A2A 1.1, spec §3.2.7 "Long-Polling", §3.5.1): a GetTask
// whose currentGeneration is at or above the task's generation is held
// until the task changes, then answered with the task as it is then.
//
// A hold waits on the task's run, as a blocking SendMessage does: it is
// one of the run's waiters (run.wait), woken by the same publish that
// feeds the task's streams, so it costs no store read while it waits.
// With Options.Cluster the run follows the store's log while it is
// watched (run.follow), woken by the Bus when another replica appends,
// with the follower's bounded fallback read every Cluster.Poll (default
// 2 s) should a wake-up be lost: a hold sees other replicas' changes as a
// stream does, and adds no polling of its own.
//
// What the specification leaves to the server, decided here:
//   - The hold ends at Options.LongPollTimeout (default 30 s) with the
//     task unchanged, a normal answer; negative turns holds off.
//   - The owner check comes first: GetTask reads the task's last
//     sequence number in the caller's scope before any hold, so another
//     principal's task or a missing one is TaskNotFoundError at once.
//   - A hold keeps the task's generation, not the task: neither the
//     GetTask nor its hold reads the task until it is answered, so many
//     holds on large tasks cost what they hold, not what they point at.
//   - A hold counts as an open stream of its caller for the HTTP
//     handler's per-caller limit (a2ahttp.Options.MaxStreams): over it
//     the call is refused as a stream would be (streamctx.Slot).
//   - A terminal task never changes: its hold lasts until the timeout,
//     which paces a client that polls it in a loop.
//   - The drain (Shutdown) and the stop (Close) end every hold at once
//     with the task as it is, and a GetTask while draining is not held:
//     the caller's next poll finds a server that stays.
//   - The caller's deadline or cancellation ends a hold with the
//     context's error, as it ends other calls.

import (
	"context"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/streamctx"
	"parley.dev/parley/taskstore"
)

// hold serves a long-poll GetTask of a task found in the caller's scope at
// or below req.currentGeneration. It returns the task once its generation
// is above it, or as it is at the timeout, the drain or the stop.
func (s *Server) hold(ctx context.Context, scope taskstore.Scope, req *a2a.GetTaskRequest) (*a2a.Task, error) {
	if s.opts.LongPollTimeout < 0 || s.draining.Load() || s.base.Err() != nil {
		t, err := s.store.GetTask(ctx, scope, req.Id)
		if err != nil {
			return nil, storeErr(err, req.Id)
		}
		return s.answer(ctx, t, req.HistoryLength, t.GetGeneration(), true), nil
	}
	release, err := streamctx.TakeSlot(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	after := req.GetCurrentGeneration()
	r := s.acquire(req.Id, scope)
	defer s.release(r)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.position(ctx); err != nil {
		return nil, err // removed meanwhile (Options.Retention)
	}
	ch := r.wait()
	r.follow() // with Options.Cluster: other replicas' changes wake it too
	r.holds++
	defer func() { r.holds--; r.mu.Unlock(); r.unwait(ch); r.mu.Lock() }()
	// The hold needs the task's generation only, until it changes: it
	// keeps no copy of the task meanwhile (whatever changes it loads it).
	r.shed()
	limit := time.NewTimer(s.opts.LongPollTimeout)
	defer limit.Stop()
	for held := true; held && taskstore.Generation(r.seq) <= after; {
		r.mu.Unlock()
		select {
		case <-ch:
		case <-limit.C:
			held = false
		case <-s.drainCh:
			held = false
		case <-s.base.Done():
			held = false
		case <-ctx.Done():
			r.mu.Lock()
			return nil, context.Cause(ctx)
		}
		r.mu.Lock()
	}
	if err := r.load(ctx); err != nil {
		return nil, err // removed meanwhile (Options.Retention)
	}
	return s.answerRun(ctx, r, req.HistoryLength), nil
}

// position makes r.seq the task's last sequence number, for a hold: the
// run's own when it has the task, else the store's, read without the task
// (a hold keeps no copy of it, and a large task is not decoded for it).
// With Options.Cluster the run loads the task, which following the log
// needs. Callers hold r.mu.
func (r *run) position(ctx context.Context) error {
	if r.loaded || r.s.opts.Cluster != nil {
		return r.load(ctx)
	}
	seq, err := r.s.store.LastSeq(ctx, r.scope, r.id)
	if err != nil {
		return storeErr(err, r.id)
	}
	r.seq = seq
	return nil
}
