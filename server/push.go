package server

import (
	"context"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
)

// Pusher delivers push notifications (decision B3) from the store's
// outbox; package push implements it. With a Pusher set, every task event is
// queued in the outbox in the same store write that records it, for every
// active configuration of the task. Methods may be called concurrently;
// Queued and Forget must not block.
type Pusher interface {
	// CheckURL vets a webhook URL when a configuration is registered; an
	// error is answered with InvalidParams carrying its message.
	CheckURL(ctx context.Context, rawURL string) error
	// Queued tells the pusher that a write queued notifications for the
	// task.
	Queued(taskID string)
	// Forget tells the pusher that a configuration was deleted or
	// replaced: what it holds for the old one must not be sent.
	Forget(t taskstore.PushTarget)
}

// delivering reports whether push delivery is on.
func (s *Server) delivering() bool { return s.opts.Push != nil }

// queued tells the pusher about a write that queued notifications.
func (s *Server) queued(taskID string) {
	if p := s.opts.Push; p != nil {
		p.Queued(taskID)
	}
}

// queued tells the pusher that the run's last write may have queued
// notifications, unless the task is known to have no push configuration
// (run.mayPush): then the store queued nothing, and the pusher need not
// look. With Options.Cluster, a replica that adds a configuration to a
// task tells the one running it (pushKey, watchOthers), which from then
// on tells its pusher too. Callers hold r.mu.
func (r *run) queued() {
	if r.mayPush {
		r.s.queued(r.id)
	}
}

// checkPushURL vets a webhook URL with the pusher's guard.
func (s *Server) checkPushURL(ctx context.Context, field, raw string) error {
	if p := s.opts.Push; p != nil {
		if err := p.CheckURL(ctx, raw); err != nil {
			return a2a.InvalidParams(a2a.FieldViolation{Field: field, Description: err.Error()})
		}
	}
	return nil
}

// putPushConfig stores a configuration of the run's task. With delivery on,
// a Task snapshot is queued for it in the same write, so that every
// configuration's first notification is a Task (like a SubscribeToTask
// stream), followed by the events after the snapshot. Callers hold r.mu
// and have loaded the task.
func (r *run) putPushConfig(ctx context.Context, cfg *taskstore.PushConfig) error {
	s := r.s
	// The snapshot numbered r.seq must hold every event stored before the
	// configuration: pipelined chunks are stored first (run.drain).
	r.drain(ctx)
	ev := taskstore.Event{}
	if s.delivering() {
		ev = taskstore.Event{Seq: r.seq, Push: true,
			Response: &a2a.StreamResponse{Payload: &a2a.StreamResponse_Task{Task: a2a.CloneTask(r.task)}}}
	}
	if err := s.store.PutPushConfig(ctx, r.scope, cfg, ev); err != nil {
		return err
	}
	r.mayPush = true
	if p := s.opts.Push; p != nil {
		p.Forget(taskstore.PushTarget{Scope: r.scope, TaskID: cfg.TaskId, ConfigID: cfg.Id})
		p.Queued(cfg.TaskId)
	}
	if c := s.opts.Cluster; c != nil && r.exec == nil && !a2a.IsTerminal(r.task.GetStatus().GetState()) {
		// The task may be running on another replica, whose pusher
		// must now look at its events (watchOthers). A failed wake-up
		// delays them until the pushers' next scan of the outbox.
		if err := c.Bus.Notify(ctx, pushKey(cfg.TaskId), 0); err != nil {
			s.log.Warn("cluster: telling the replica running a task about its new push configuration failed", "task", cfg.TaskId, "err", err)
		}
	}
	return nil
}
