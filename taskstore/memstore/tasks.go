package memstore

import (
	"context"
	"errors"
	"slices"
	"sort"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/internal/order"
)

// CreateTask stores a copy of t; the id must be new in the whole store.
// ev.Response, when set, is the first event of the task's log.
func (s *Store) CreateTask(ctx context.Context, sc taskstore.Scope, t *a2a.Task, ev taskstore.Event) error {
	return s.CreateTaskBatch(ctx, sc, t, []taskstore.Event{ev})
}

// CreateTaskBatch stores a new task created by evs[0], with the events
// after it applied, in one step (taskstore.BatchAppender).
func (s *Store) CreateTaskBatch(ctx context.Context, sc taskstore.Scope, t *a2a.Task, evs []taskstore.Event) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if t.GetId() == "" {
		return errNoID
	}
	if len(evs) == 0 {
		return errors.New("memstore: a task is created by an event")
	}
	if err := taskstore.CheckBatch(evs[0].Seq+1, evs[1:]); err != nil {
		return err
	}
	ev := evs[0]
	// A task the batch finishes is packed at once (Store.pack) and its
	// tree dropped: it is made from t and the events without the copies
	// that a task the store keeps as a tree needs (applyShared).
	finishing := a2a.IsTerminal(finalState(t, evs[1:]))
	var e *entry
	if finishing {
		e = newEntry(sc, shallowTask(t), ev.Seq)
	} else {
		e = newEntry(sc, cloneTask(t), ev.Seq)
	}
	if ev.PushConfig != nil {
		if ev.PushConfig.GetTaskId() != t.GetId() {
			return errors.New("memstore: the push config is not the new task's")
		}
		e.configs = map[string]*taskstore.PushConfig{ev.PushConfig.GetId(): cloneConfig(ev.PushConfig)}
	}
	r := ev.Response // immutable: kept as it is (package taskstore)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.tasks[e.key.ID]; ok {
		return taskstore.ErrExists
	}
	s.makeRoom()
	if r != nil {
		e.log.live = make([]*a2a.StreamResponse, 0, len(evs)) // the batch's events, in one allocation
		s.logEvent(e, ev.Seq, r)
		s.queueAll(e, ev.Push, ev.Seq, r)
	}
	var borrowed []*a2a.Artifact
	if finishing {
		borrowed = slices.Clone(e.task.Artifacts) // t's, shared by shallowTask
		for _, ev := range evs[1:] {
			s.recordShared(e, ev, &borrowed)
		}
	} else {
		for _, ev := range evs[1:] {
			s.record(e, ev)
		}
	}
	// The entry joins the indexes once, as the events left it: no move
	// from the first event's state to the last one's.
	e.indexAs(e.task)
	s.link(e)
	s.linkMessages(e, e.task.GetHistory())
	s.noteFinished(e)
	s.pack(e)
	if finishing {
		e.own()
	}
	return nil
}

// Append records one change of the task with the id in the scope: a client
// message added to its history, and/or an event added to its log and
// applied to the stored task (taskstore.Apply). Its cost is that of the
// event: the task is changed in place, never copied, and is moved in the
// ListTasks indexes only when its status timestamp, context or state
// changed. An artifact update without an artifact is refused.
func (s *Store) Append(ctx context.Context, sc taskstore.Scope, id string, ev taskstore.Event) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if u := ev.Response.GetArtifactUpdate(); u != nil && u.GetArtifact() == nil {
		return errNoArtifact
	}
	// The event is immutable (package taskstore): the log keeps it as it
	// is, and Apply copies only an artifact it starts.
	r := ev.Response
	var m *a2a.Message
	if ev.Message != nil {
		m = a2a.CloneMessage(ev.Message)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.lookup(sc, id)
	if e == nil {
		return taskstore.ErrNotFound
	}
	if (r != nil && ev.Seq != e.seq+1) || (r == nil && ev.Seq != 0) {
		return taskstore.ErrSeq
	}
	t, err := s.live(e)
	if err != nil {
		return err
	}
	if m != nil {
		t.History = append(t.History, m)
	}
	if r != nil {
		s.record(e, ev)
		s.reindex(e)
		s.noteFinished(e)
	}
	s.pack(e)
	return nil
}

// AppendBatch records consecutive events of the task at once, all or
// none (taskstore.BatchAppender).
func (s *Store) AppendBatch(ctx context.Context, sc taskstore.Scope, id string, evs []taskstore.Event) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(evs) == 0 {
		return nil
	}
	if err := taskstore.CheckBatch(evs[0].Seq, evs); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.lookup(sc, id)
	if e == nil {
		return taskstore.ErrNotFound
	}
	if evs[0].Seq != e.seq+1 {
		return taskstore.ErrSeq
	}
	t, err := s.live(e)
	if err != nil {
		return err
	}
	if finishing := a2a.IsTerminal(finalState(t, evs)); finishing {
		// Packed at once: the artifacts the events start are not copied
		// (applyShared).
		var borrowed []*a2a.Artifact
		for _, ev := range evs {
			s.recordShared(e, ev, &borrowed)
		}
		s.reindex(e)
		s.noteFinished(e)
		s.pack(e)
		e.own()
		return nil
	}
	for _, ev := range evs {
		s.record(e, ev)
	}
	s.reindex(e)
	s.noteFinished(e)
	s.pack(e)
	return nil
}

// record logs an event of the task and applies it, queuing it in the push
// outbox with ev.Push; the caller then reindexes the task. Callers hold
// s.mu for writing and have checked the event's sequence number.
func (s *Store) record(e *entry, ev taskstore.Event) {
	s.logEvent(e, ev.Seq, ev.Response)
	e.seq = ev.Seq
	taskstore.Apply(e.task, ev.Response)
	s.queueAll(e, ev.Push, ev.Seq, ev.Response)
}

// recordShared is record for a task the write leaves terminal, which
// Store.pack encodes and drops before the write returns: the event is applied
// with applyShared. Callers hold s.mu for writing.
func (s *Store) recordShared(e *entry, ev taskstore.Event, borrowed *[]*a2a.Artifact) {
	s.logEvent(e, ev.Seq, ev.Response)
	e.seq = ev.Seq
	applyShared(e.task, ev.Response, borrowed)
	s.queueAll(e, ev.Push, ev.Seq, ev.Response)
}

// LastSeq returns the task's last event sequence number.
func (s *Store) LastSeq(ctx context.Context, sc taskstore.Scope, id string) (uint64, error) {
	seq, _, err := s.logHead(ctx, sc, id)
	return seq, err
}

// TimelineBase returns the task's timeline base (taskstore.Fold),
// shared: it is replaced, never changed.
func (s *Store) TimelineBase(ctx context.Context, sc taskstore.Scope, id string) ([]byte, error) {
	_, base, err := s.logHead(ctx, sc, id)
	return base, err
}

// logHead returns the task's last event sequence number and its timeline
// base.
func (s *Store) logHead(ctx context.Context, sc taskstore.Scope, id string) (uint64, []byte, error) {
	if err := ctx.Err(); err != nil {
		return 0, nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	e := s.lookup(sc, id)
	if e == nil {
		return 0, nil, taskstore.ErrNotFound
	}
	return e.seq, e.log.base, nil
}

// GetTask returns a copy of the task with the id in the scope.
func (s *Store) GetTask(ctx context.Context, sc taskstore.Scope, id string) (*a2a.Task, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	e := s.lookup(sc, id)
	if e == nil {
		return nil, taskstore.ErrNotFound
	}
	return s.readTask(e)
}

// ListTasks returns one page of the scope's tasks. It picks the index that
// matches the filters exactly, so no task is ever looked at that the page
// does not return.
func (s *Store) ListTasks(ctx context.Context, sc taskstore.Scope, q taskstore.ListQuery) (taskstore.ListResult, error) {
	if err := ctx.Err(); err != nil {
		return taskstore.ListResult{}, err
	}
	limit := max(q.Limit, 1)
	var res taskstore.ListResult

	s.mu.RLock()
	x := s.matching(sc, q)
	// x is oldest first. x[lo:] are the tasks at or after Since, x[:hi]
	// the tasks strictly after the cursor in ListTasks order; the page is
	// x[lo:hi] read backwards.
	lo, hi := 0, len(x)
	if !q.Since.IsZero() {
		since := order.CeilMillis(q.Since)
		lo = sort.Search(len(x), func(i int) bool { return x[i].key.MS >= since })
	}
	if q.After != nil {
		hi, _ = x.position(order.Key{MS: q.After.Time.UnixMilli(), ID: q.After.ID})
	}
	res.Total = len(x) - lo
	hi = max(hi, lo)
	from := lo
	if hi-lo > limit {
		from = hi - limit
		res.More = true
	}
	// Appends change tasks in place: copy them under the lock.
	page := x[from:hi]
	res.Tasks = make([]*a2a.Task, len(page))
	for i, e := range page {
		t, err := e.copyTask()
		if err != nil {
			s.mu.RUnlock()
			return taskstore.ListResult{}, err
		}
		res.Tasks[len(page)-1-i] = t
	}
	s.mu.RUnlock()
	return res, nil
}

// matching returns an index of the scope that holds exactly the tasks
// matching q's context and state filters. The caller holds s.mu.
func (s *Store) matching(sc taskstore.Scope, q taskstore.ListQuery) index {
	si := s.scopes[sc]
	if si == nil {
		return nil
	}
	anyState := q.State == a2a.TaskState_TASK_STATE_UNSPECIFIED
	switch {
	case q.ContextID != "" && !anyState:
		// A context holds a conversation's tasks, a few: its tasks in one
		// state are picked from its index, which is what the SQLite store
		// does too, rather than kept in an index of their own, which cost
		// every new task one more and every change of state a move.
		var x index
		for _, e := range si.byCtx[q.ContextID] {
			if e.state == q.State {
				x = append(x, e)
			}
		}
		return x
	case q.ContextID != "":
		return si.byCtx[q.ContextID]
	case !anyState:
		return si.byState[q.State]
	}
	return si.all
}

// ListActive returns copies of every SUBMITTED or WORKING task with its
// scope.
func (s *Store) ListActive(ctx context.Context) ([]taskstore.ScopedTask, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []taskstore.ScopedTask
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, si := range s.scopes {
		for _, st := range order.Active {
			for _, e := range si.byState[st] {
				out = append(out, taskstore.ScopedTask{Scope: e.scope, Task: cloneTask(e.task)}) // active: never packed
			}
		}
	}
	return out, nil
}

// DeleteFinished removes terminal tasks whose status timestamp is before
// the given time, together with their push configurations and queued
// notifications.
func (s *Store) DeleteFinished(ctx context.Context, before time.Time) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	cut := order.CeilMillis(before)
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for sc, si := range s.scopes {
		doomed := make(map[*entry]bool)
		for _, st := range order.Terminal {
			x := si.byState[st]
			// The old tasks are a prefix of the oldest-first index.
			i := sort.Search(len(x), func(i int) bool { return x[i].key.MS >= cut })
			for _, e := range x[:i] {
				doomed[e] = true
			}
		}
		if len(doomed) == 0 {
			continue
		}
		s.unlinkAll(sc, doomed)
		for e := range doomed {
			for id := range e.configs {
				s.resetConfig(configKey{e.key.ID, id})
			}
			s.forget(e)
		}
		n += len(doomed)
	}
	return n, nil
}
