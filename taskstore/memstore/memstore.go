// Package memstore is an in-memory taskstore.Store. It loses everything when
// the process exits, which makes it fit for tests, development and agents
// whose tasks need not outlive the process.
//
// Each scope keeps its tasks in sorted slices, one for every filter
// combination ListTasks accepts (none, context, state, context and state),
// so that a page, its total and its "more" flag are found with binary
// searches: a ListTasks call costs O(log n + page size) whatever the
// filters. Creating or updating a task costs four binary searches and four
// slice shifts.
package memstore

import (
	"context"
	"errors"
	"slices"
	"sort"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/internal/order"
)

var errNoID = errors.New("memstore: task has no id")

// Store is an in-memory taskstore.Store. Create one with New; it is safe
// for concurrent use.
type Store struct {
	mu       sync.RWMutex
	tasks    map[string]*entry
	scopes   map[taskstore.Scope]*scopeIndex
	messages map[taskstore.Scope]map[string]*taskstore.MessageRecord
}

var _ taskstore.Store = (*Store)(nil)

// entry is one stored task. Its fields never change once it is in the
// store: an update puts a new entry in its place, so a reader may keep and
// clone an entry after releasing the lock.
type entry struct {
	scope   taskstore.Scope
	key     order.Key
	task    *a2a.Task
	configs map[string]*a2a.TaskPushNotificationConfig
}

// index is a slice of entries sorted in ListTasks order.
type index []*entry

type ctxState struct {
	ctx   string
	state a2a.TaskState
}

// scopeIndex holds the ordered indexes of one scope.
type scopeIndex struct {
	all        index
	byCtx      map[string]*index
	byState    map[a2a.TaskState]*index
	byCtxState map[ctxState]*index
}

// New returns an empty store.
func New() *Store {
	return &Store{
		tasks:    make(map[string]*entry),
		scopes:   make(map[taskstore.Scope]*scopeIndex),
		messages: make(map[taskstore.Scope]map[string]*taskstore.MessageRecord),
	}
}

func cloneTask(t *a2a.Task) *a2a.Task {
	return proto.Clone(t).(*a2a.Task)
}

func cloneConfig(c *a2a.TaskPushNotificationConfig) *a2a.TaskPushNotificationConfig {
	return proto.Clone(c).(*a2a.TaskPushNotificationConfig)
}

func cloneRecord(r *taskstore.MessageRecord) *taskstore.MessageRecord {
	c := *r
	if r.Reply != nil {
		c.Reply = proto.Clone(r.Reply).(*a2a.Message)
	}
	return &c
}

// position returns where k is or would be inserted in x.
func (x index) position(k order.Key) (int, bool) {
	return slices.BinarySearchFunc(x, k, func(e *entry, k order.Key) int {
		return order.Compare(e.key, k)
	})
}

func (x *index) insert(e *entry) {
	i, _ := x.position(e.key)
	*x = slices.Insert(*x, i, e)
}

func (x *index) remove(e *entry) {
	i, found := x.position(e.key)
	if found && (*x)[i] == e {
		*x = slices.Delete(*x, i, i+1)
	}
}

// sub returns the index m holds for k, creating it when create is set.
func sub[K comparable](m map[K]*index, k K, create bool) *index {
	x := m[k]
	if x == nil && create {
		x = new(index)
		m[k] = x
	}
	return x
}

// drop removes e from the index m holds for k and forgets the index once
// it is empty, so that contexts that come and go do not leak.
func drop[K comparable](m map[K]*index, k K, e *entry) {
	if x := m[k]; x != nil {
		x.remove(e)
		if len(*x) == 0 {
			delete(m, k)
		}
	}
}

func (s *Store) link(e *entry) {
	si := s.scopes[e.scope]
	if si == nil {
		si = &scopeIndex{
			byCtx:      make(map[string]*index),
			byState:    make(map[a2a.TaskState]*index),
			byCtxState: make(map[ctxState]*index),
		}
		s.scopes[e.scope] = si
	}
	ctx, st := e.task.GetContextId(), e.task.GetStatus().GetState()
	si.all.insert(e)
	sub(si.byCtx, ctx, true).insert(e)
	sub(si.byState, st, true).insert(e)
	sub(si.byCtxState, ctxState{ctx, st}, true).insert(e)
	s.tasks[e.key.ID] = e
}

func (s *Store) unlink(e *entry) {
	si := s.scopes[e.scope]
	ctx, st := e.task.GetContextId(), e.task.GetStatus().GetState()
	si.all.remove(e)
	drop(si.byCtx, ctx, e)
	drop(si.byState, st, e)
	drop(si.byCtxState, ctxState{ctx, st}, e)
	if len(si.all) == 0 {
		delete(s.scopes, e.scope)
	}
	delete(s.tasks, e.key.ID)
}

// CreateTask stores a copy of t; the id must be new in the whole store.
func (s *Store) CreateTask(ctx context.Context, sc taskstore.Scope, t *a2a.Task) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if t.GetId() == "" {
		return errNoID
	}
	c := cloneTask(t)
	e := &entry{scope: sc, key: order.TaskKey(c), task: c}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.tasks[c.Id]; ok {
		return taskstore.ErrExists
	}
	s.link(e)
	return nil
}

// UpdateTask replaces the task with t's id in the scope by a copy of t.
func (s *Store) UpdateTask(ctx context.Context, sc taskstore.Scope, t *a2a.Task) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c := cloneTask(t)
	s.mu.Lock()
	defer s.mu.Unlock()
	old, ok := s.tasks[c.GetId()]
	if !ok || old.scope != sc {
		return taskstore.ErrNotFound
	}
	s.unlink(old)
	s.link(&entry{scope: sc, key: order.TaskKey(c), task: c, configs: old.configs})
	return nil
}

// lookup returns the task's entry when it is in the scope. The caller
// holds s.mu.
func (s *Store) lookup(sc taskstore.Scope, id string) *entry {
	e, ok := s.tasks[id]
	if !ok || e.scope != sc {
		return nil
	}
	return e
}

// GetTask returns a copy of the task with the id in the scope.
func (s *Store) GetTask(ctx context.Context, sc taskstore.Scope, id string) (*a2a.Task, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	e := s.lookup(sc, id)
	s.mu.RUnlock()
	if e == nil {
		return nil, taskstore.ErrNotFound
	}
	return cloneTask(e.task), nil
}

// ListTasks returns one page of the scope's tasks. It picks the index that
// matches the filters exactly, so no task is ever looked at that the page
// does not return.
func (s *Store) ListTasks(ctx context.Context, sc taskstore.Scope, q taskstore.ListQuery) (taskstore.ListResult, error) {
	if err := ctx.Err(); err != nil {
		return taskstore.ListResult{}, err
	}
	limit := max(q.Limit, 1)
	var page []*entry
	var res taskstore.ListResult

	s.mu.RLock()
	var x index
	if si := s.scopes[sc]; si != nil {
		unspecified := q.State == a2a.TaskState_TASK_STATE_UNSPECIFIED
		switch {
		case q.ContextID != "" && !unspecified:
			x = deref(si.byCtxState[ctxState{q.ContextID, q.State}])
		case q.ContextID != "":
			x = deref(si.byCtx[q.ContextID])
		case !unspecified:
			x = deref(si.byState[q.State])
		default:
			x = si.all
		}
	}
	// x[:end] are the tasks at or after Since; x is sorted newest first.
	end := len(x)
	if !q.Since.IsZero() {
		since := order.CeilMillis(q.Since)
		end = sort.Search(len(x), func(i int) bool { return x[i].key.MS < since })
	}
	start := 0
	if q.After != nil {
		i, found := x.position(order.Key{MS: order.FloorMillis(q.After.Time), ID: q.After.ID})
		if found {
			i++
		}
		start = i
	}
	stop := end
	if start > end {
		start = end
	}
	if start+limit < end {
		stop = start + limit
		res.More = true
	}
	res.Total = end
	// Copy the entry pointers: x may be shifted by a writer once the lock
	// is released, but the entries themselves are immutable.
	page = slices.Clone(x[start:stop])
	s.mu.RUnlock()

	res.Tasks = make([]*a2a.Task, len(page))
	for i, e := range page {
		res.Tasks[i] = cloneTask(e.task)
	}
	return res, nil
}

func deref(x *index) index {
	if x == nil {
		return nil
	}
	return *x
}

// ListActive returns copies of every SUBMITTED or WORKING task with its
// scope.
func (s *Store) ListActive(ctx context.Context) ([]taskstore.ScopedTask, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var found []*entry
	s.mu.RLock()
	for _, si := range s.scopes {
		for _, st := range order.Active {
			found = append(found, deref(si.byState[st])...)
		}
	}
	s.mu.RUnlock()
	out := make([]taskstore.ScopedTask, len(found))
	for i, e := range found {
		out[i] = taskstore.ScopedTask{Scope: e.scope, Task: cloneTask(e.task)}
	}
	return out, nil
}

// DeleteFinished removes terminal tasks whose status timestamp is before
// the given time, together with their push configurations.
func (s *Store) DeleteFinished(ctx context.Context, before time.Time) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	cut := order.CeilMillis(before)
	s.mu.Lock()
	defer s.mu.Unlock()
	var doomed []*entry
	for _, si := range s.scopes {
		for _, st := range order.Terminal {
			x := deref(si.byState[st])
			// The old tasks are a suffix of the newest-first index.
			i := sort.Search(len(x), func(i int) bool { return x[i].key.MS < cut })
			doomed = append(doomed, x[i:]...)
		}
	}
	for _, e := range doomed {
		s.unlink(e)
	}
	return len(doomed), nil
}

// PutPushConfig creates or replaces a copy of c under its task, which must
// be in the scope.
func (s *Store) PutPushConfig(ctx context.Context, sc taskstore.Scope, c *a2a.TaskPushNotificationConfig) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	cp := cloneConfig(c)
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.lookup(sc, cp.GetTaskId())
	if e == nil {
		return taskstore.ErrNotFound
	}
	// The configs map is shared by the successive entries of one task and
	// only touched under the write lock.
	if e.configs == nil {
		e.configs = make(map[string]*a2a.TaskPushNotificationConfig)
	}
	e.configs[cp.GetId()] = cp
	return nil
}

// GetPushConfig returns a copy of one configuration of a task in the scope.
func (s *Store) GetPushConfig(ctx context.Context, sc taskstore.Scope, taskID, id string) (*a2a.TaskPushNotificationConfig, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	var c *a2a.TaskPushNotificationConfig
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
func (s *Store) ListPushConfigs(ctx context.Context, sc taskstore.Scope, taskID string) ([]*a2a.TaskPushNotificationConfig, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	e := s.lookup(sc, taskID)
	if e == nil {
		s.mu.RUnlock()
		return nil, taskstore.ErrNotFound
	}
	out := make([]*a2a.TaskPushNotificationConfig, 0, len(e.configs))
	for _, c := range e.configs {
		out = append(out, c)
	}
	s.mu.RUnlock()
	slices.SortFunc(out, func(a, b *a2a.TaskPushNotificationConfig) int {
		switch {
		case a.GetId() < b.GetId():
			return -1
		case a.GetId() > b.GetId():
			return 1
		}
		return 0
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
	return nil
}

// PutMessage records r if its message id is new in the scope and returns
// (nil, nil); otherwise it returns a copy of the existing record.
func (s *Store) PutMessage(ctx context.Context, sc taskstore.Scope, r *taskstore.MessageRecord) (*taskstore.MessageRecord, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c := cloneRecord(r)
	// Keep the same precision as the durable stores.
	c.Created = time.UnixMilli(r.Created.UnixMilli())
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.messages[sc]
	if m == nil {
		m = make(map[string]*taskstore.MessageRecord)
		s.messages[sc] = m
	}
	if old, ok := m[c.MessageID]; ok {
		return cloneRecord(old), nil
	}
	m[c.MessageID] = c
	return nil, nil
}

// GetMessage returns a copy of the record of a message id in the scope.
func (s *Store) GetMessage(ctx context.Context, sc taskstore.Scope, messageID string) (*taskstore.MessageRecord, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	r, ok := s.messages[sc][messageID]
	if !ok {
		return nil, taskstore.ErrNotFound
	}
	return cloneRecord(r), nil
}

// SetMessageReply stores a copy of the reply on a recorded message.
func (s *Store) SetMessageReply(ctx context.Context, sc taskstore.Scope, messageID string, reply *a2a.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var c *a2a.Message
	if reply != nil {
		c = proto.Clone(reply).(*a2a.Message)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.messages[sc][messageID]
	if !ok {
		return taskstore.ErrNotFound
	}
	r.Reply = c
	return nil
}

// DeleteMessagesBefore forgets the records created before the time.
func (s *Store) DeleteMessagesBefore(ctx context.Context, before time.Time) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	cut := order.CeilMillis(before)
	n := 0
	s.mu.Lock()
	defer s.mu.Unlock()
	for sc, m := range s.messages {
		for id, r := range m {
			if r.Created.UnixMilli() < cut {
				delete(m, id)
				n++
			}
		}
		if len(m) == 0 {
			delete(s.messages, sc)
		}
	}
	return n, nil
}

// Close releases nothing; the store stays usable.
func (s *Store) Close() error { return nil }
