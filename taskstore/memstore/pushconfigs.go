package memstore

import (
	"context"
	"maps"
	"slices"
	"strings"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
)

// PutPushConfig creates or replaces a copy of c (its version included)
// under its task, which must
// be in the scope. A replaced configuration loses its queued notifications
// and its suspension; with ev.Push, ev.Response is queued for it.
func (s *Store) PutPushConfig(ctx context.Context, sc taskstore.Scope, c *taskstore.PushConfig, ev taskstore.Event) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	cp := cloneConfig(c)
	var first *a2a.StreamResponse // immutable: kept as it is (package taskstore)
	if ev.Push {
		first = ev.Response
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.lookup(sc, cp.GetTaskId())
	if e == nil {
		return taskstore.ErrNotFound
	}
	if e.configs == nil {
		e.configs = make(map[string]*taskstore.PushConfig)
	}
	e.configs[cp.GetId()] = cp
	k := configKey{cp.GetTaskId(), cp.GetId()}
	s.resetConfig(k)
	if first != nil {
		s.queue(k, ev.Seq, first)
	}
	return nil
}

// GetPushConfig returns a copy of one configuration of a task in the scope.
func (s *Store) GetPushConfig(ctx context.Context, sc taskstore.Scope, taskID, id string) (*taskstore.PushConfig, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	var c *taskstore.PushConfig
	if e := s.lookup(sc, taskID); e != nil {
		c = e.configs[id]
	}
	s.mu.RUnlock()
	if c == nil {
		return nil, taskstore.ErrNotFound
	}
	// Stored configs are replaced, never modified, so cloning outside the
	// lock is safe.
	return cloneConfig(c), nil
}

// ListPushConfigs returns copies of a task's configurations ordered by id.
// It returns ErrNotFound when the task is not in the scope.
func (s *Store) ListPushConfigs(ctx context.Context, sc taskstore.Scope, taskID string) ([]*taskstore.PushConfig, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	e := s.lookup(sc, taskID)
	if e == nil {
		s.mu.RUnlock()
		return nil, taskstore.ErrNotFound
	}
	out := slices.AppendSeq(make([]*taskstore.PushConfig, 0, len(e.configs)), maps.Values(e.configs))
	s.mu.RUnlock()
	slices.SortFunc(out, func(a, b *taskstore.PushConfig) int {
		return strings.Compare(a.GetId(), b.GetId())
	})
	for i, c := range out {
		out[i] = cloneConfig(c)
	}
	return out, nil
}

// DeletePushConfig removes one configuration of a task in the scope. A
// missing configuration is not an error; a task outside the scope is
// ErrNotFound.
func (s *Store) DeletePushConfig(ctx context.Context, sc taskstore.Scope, taskID, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.lookup(sc, taskID)
	if e == nil {
		return taskstore.ErrNotFound
	}
	delete(e.configs, id)
	s.resetConfig(configKey{taskID, id})
	return nil
}
