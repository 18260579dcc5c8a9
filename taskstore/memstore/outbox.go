package memstore

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
)

// configKey names a push configuration (task ids are unique store-wide).
type configKey struct{ task, config string }

// queued is one outbox row. Rows are never modified once queued.
type queued struct {
	id    int64
	seq   uint64
	event *a2a.StreamResponse
}

// queueAll queues r, the store's copy of event seq, for every active
// configuration of the task when push is set. The caller holds the write
// lock; r must not change afterwards.
func (s *Store) queueAll(e *entry, push bool, seq uint64, r *a2a.StreamResponse) {
	if !push {
		return
	}
	for id := range e.configs {
		k := configKey{e.key.ID, id}
		if _, off := s.suspended[k]; !off {
			s.queue(k, seq, r)
		}
	}
}

// queue appends one row for k. The caller holds the write lock; r must not
// change afterwards.
func (s *Store) queue(k configKey, seq uint64, r *a2a.StreamResponse) {
	s.lastID++
	s.outbox[k] = append(s.outbox[k], &queued{id: s.lastID, seq: seq, event: r})
	s.where[s.lastID] = k
}

// dropQueued removes a configuration's outbox rows. The caller holds the
// write lock.
func (s *Store) dropQueued(k configKey) {
	for _, r := range s.outbox[k] {
		delete(s.where, r.id)
	}
	delete(s.outbox, k)
}

// resetConfig drops a configuration's outbox rows and lifts its
// suspension, for a configuration that was replaced or removed. The caller
// holds the write lock.
func (s *Store) resetConfig(k configKey) {
	s.dropQueued(k)
	delete(s.suspended, k)
}

// target returns the entry of t's task when t names a stored configuration
// in its scope. The caller holds s.mu.
func (s *Store) target(t taskstore.PushTarget) *entry {
	e := s.lookup(t.Scope, t.TaskID)
	if e == nil || e.configs[t.ConfigID] == nil {
		return nil
	}
	return e
}

// PushTargets returns the configurations with queued notifications, of one
// task or of all, ordered by task id and config id.
func (s *Store) PushTargets(ctx context.Context, taskID string) ([]taskstore.PushTarget, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []taskstore.PushTarget
	s.mu.RLock()
	for k, rows := range s.outbox {
		if len(rows) == 0 || (taskID != "" && k.task != taskID) {
			continue
		}
		if e := s.tasks[k.task]; e != nil {
			out = append(out, taskstore.PushTarget{Scope: e.scope, TaskID: k.task, ConfigID: k.config})
		}
	}
	s.mu.RUnlock()
	slices.SortFunc(out, func(a, b taskstore.PushTarget) int {
		return cmp.Or(strings.Compare(a.TaskID, b.TaskID), strings.Compare(a.ConfigID, b.ConfigID))
	})
	return out, nil
}

// PendingPush returns copies of up to limit of a configuration's queued
// notifications, oldest first.
func (s *Store) PendingPush(ctx context.Context, t taskstore.PushTarget, limit int) ([]*taskstore.Notification, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	var rows []*queued
	var cfg *taskstore.PushConfig
	if e := s.target(t); e != nil {
		rows = s.outbox[configKey{t.TaskID, t.ConfigID}]
		rows = slices.Clone(rows[:min(len(rows), max(limit, 1))])
		cfg = e.configs[t.ConfigID]
	}
	s.mu.RUnlock()
	out := make([]*taskstore.Notification, len(rows))
	for i, r := range rows {
		out[i] = &taskstore.Notification{ID: r.id, Target: t, Config: cloneConfig(cfg), Seq: r.seq,
			Event: r.event} // immutable: shared (package taskstore)
	}
	return out, nil
}

// DeletePush removes notifications by id.
func (s *Store) DeletePush(ctx context.Context, ids ...int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(ids) == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		k, ok := s.where[id]
		if !ok {
			continue
		}
		delete(s.where, id)
		// Readers copy the slice under the lock, so it may change in
		// place. Delivered rows are almost always at the front.
		rows := s.outbox[k]
		if i := slices.IndexFunc(rows, func(r *queued) bool { return r.id == id }); i >= 0 {
			rows = slices.Delete(rows, i, i+1)
		}
		if len(rows) == 0 {
			delete(s.outbox, k)
		} else {
			s.outbox[k] = rows
		}
	}
	return nil
}

// SuspendPush marks a configuration suspended and drops its queued
// notifications.
func (s *Store) SuspendPush(ctx context.Context, t taskstore.PushTarget, reason string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.target(t) == nil {
		return nil
	}
	k := configKey{t.TaskID, t.ConfigID}
	s.dropQueued(k)
	s.suspended[k] = reason
	return nil
}
