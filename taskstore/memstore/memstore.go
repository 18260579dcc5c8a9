// Package memstore is an in-memory taskstore.Store. It loses everything when
// the process exits, which makes it fit for tests, development and agents
// whose tasks need not outlive the process.
//
// Each scope keeps its tasks in sorted slices, one for every filter
// combination ListTasks accepts (none, context, state, context and state),
// so that a page, its total and its "more" flag are found with binary
// searches: a ListTasks call costs O(log n + page size) whatever the
// filters. The slices run oldest first, so a new task, the newest, is
// appended at the end, and an update, which usually moves a recent task to
// the end, shifts only the tail.
package memstore

import (
	"context"
	"errors"
	"slices"
	"sort"
	"strings"
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

	// The push outbox: queued notifications per configuration, oldest
	// first, and the suspended configurations with their reasons.
	outbox    map[configKey][]*queued
	where     map[int64]configKey // the configuration of each queued row
	suspended map[configKey]string
	lastID    int64
}

// configKey names a push configuration (task ids are unique store-wide).
type configKey struct{ task, config string }

// queued is one outbox row. Rows are never modified once queued.
type queued struct {
	id    int64
	seq   uint64
	event *a2a.StreamResponse
}

var _ taskstore.Store = (*Store)(nil)

// entry is one stored task. Its fields never change once it is in the
// store: an update puts a new entry in its place, so a reader may keep and
// clone an entry after releasing the lock.
type entry struct {
	scope   taskstore.Scope
	key     order.Key
	seq     uint64
	task    *a2a.Task
	configs map[string]*a2a.TaskPushNotificationConfig
}

// index is a slice of entries sorted in reverse ListTasks order: oldest
// first, and among equal timestamps smallest id first.
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
		tasks:     make(map[string]*entry),
		scopes:    make(map[taskstore.Scope]*scopeIndex),
		messages:  make(map[taskstore.Scope]map[string]*taskstore.MessageRecord),
		outbox:    make(map[configKey][]*queued),
		where:     make(map[int64]configKey),
		suspended: make(map[configKey]string),
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

// position returns where k is or would be inserted in x. The entries
// before it sort after k in ListTasks order.
func (x index) position(k order.Key) (int, bool) {
	return slices.BinarySearchFunc(x, k, func(e *entry, k order.Key) int {
		return -order.Compare(e.key, k)
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

// prune removes the entries gone reports from every index in m and
// forgets the indexes left empty.
func prune[K comparable](m map[K]*index, gone func(*entry) bool) {
	for k, x := range m {
		*x = slices.DeleteFunc(*x, gone)
		if len(*x) == 0 {
			delete(m, k)
		}
	}
}

// link adds e to the task map and to every index of its scope. The caller
// holds the write lock.
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

// unlink removes e from the task map and from every index of its scope.
// The caller holds the write lock.
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
func (s *Store) CreateTask(ctx context.Context, sc taskstore.Scope, t *a2a.Task, ev taskstore.Event) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if t.GetId() == "" {
		return errNoID
	}
	c := cloneTask(t)
	e := &entry{scope: sc, key: order.TaskKey(c), task: c, seq: ev.Seq}
	if ev.PushConfig != nil {
		if ev.PushConfig.GetTaskId() != c.Id {
			return errors.New("memstore: the push config is not the new task's")
		}
		e.configs = map[string]*a2a.TaskPushNotificationConfig{ev.PushConfig.GetId(): cloneConfig(ev.PushConfig)}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.tasks[c.Id]; ok {
		return taskstore.ErrExists
	}
	s.link(e)
	s.queueAll(e, ev)
	return nil
}

// queueAll queues ev for every active configuration of the task when
// ev.Push is set. The caller holds the write lock.
func (s *Store) queueAll(e *entry, ev taskstore.Event) {
	if !ev.Push || ev.Response == nil {
		return
	}
	var r *a2a.StreamResponse
	for id := range e.configs {
		k := configKey{e.key.ID, id}
		if _, off := s.suspended[k]; off {
			continue
		}
		if r == nil {
			r = proto.Clone(ev.Response).(*a2a.StreamResponse)
		}
		s.queue(k, ev.Seq, r)
	}
}

// queue appends one row for k. The caller holds the write lock; r must not
// change afterwards.
func (s *Store) queue(k configKey, seq uint64, r *a2a.StreamResponse) {
	s.lastID++
	s.outbox[k] = append(s.outbox[k], &queued{id: s.lastID, seq: seq, event: r})
	s.where[s.lastID] = k
}

// drop removes a configuration's outbox rows. The caller holds the write
// lock.
func (s *Store) drop(k configKey) {
	for _, r := range s.outbox[k] {
		delete(s.where, r.id)
	}
	delete(s.outbox, k)
}

// forget drops a configuration's outbox rows and suspension. The caller
// holds the write lock.
func (s *Store) forget(k configKey) {
	s.drop(k)
	delete(s.suspended, k)
}

// UpdateTask replaces the task with t's id in the scope by a copy of t.
func (s *Store) UpdateTask(ctx context.Context, sc taskstore.Scope, t *a2a.Task, ev taskstore.Event) error {
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
	seq := max(old.seq, ev.Seq)
	s.unlink(old)
	e := &entry{scope: sc, key: order.TaskKey(c), task: c, configs: old.configs, seq: seq}
	s.link(e)
	s.queueAll(e, ev)
	return nil
}

// LastSeq returns the task's last event sequence number.
func (s *Store) LastSeq(ctx context.Context, sc taskstore.Scope, id string) (uint64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	e := s.lookup(sc, id)
	if e == nil {
		return 0, taskstore.ErrNotFound
	}
	return e.seq, nil
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
	// x is oldest first. x[lo:] are the tasks at or after Since, x[:hi]
	// the tasks strictly after the cursor in ListTasks order; the page is
	// x[lo:hi] read backwards.
	lo, hi := 0, len(x)
	if !q.Since.IsZero() {
		since := order.CeilMillis(q.Since)
		lo = sort.Search(len(x), func(i int) bool { return x[i].key.MS >= since })
	}
	if q.After != nil {
		hi, _ = x.position(order.Key{MS: order.FloorMillis(q.After.Time), ID: q.After.ID})
	}
	res.Total = len(x) - lo
	hi = max(hi, lo)
	from := lo
	if hi-lo > limit {
		from = hi - limit
		res.More = true
	}
	// Copy the entry pointers: x may be shifted by a writer once the lock
	// is released, but the entries themselves are immutable.
	page = slices.Clone(x[from:hi])
	s.mu.RUnlock()

	res.Tasks = make([]*a2a.Task, len(page))
	for i, e := range page {
		res.Tasks[len(page)-1-i] = cloneTask(e.task)
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
	n := 0
	for sc, si := range s.scopes {
		doomed := make(map[*entry]bool)
		for _, st := range order.Terminal {
			x := deref(si.byState[st])
			// The old tasks are a prefix of the oldest-first index.
			i := sort.Search(len(x), func(i int) bool { return x[i].key.MS >= cut })
			for _, e := range x[:i] {
				doomed[e] = true
			}
		}
		if len(doomed) == 0 {
			continue
		}
		// Removing them one by one would shift the slices once per task;
		// filter every index of the scope once instead.
		gone := func(e *entry) bool { return doomed[e] }
		si.all = slices.DeleteFunc(si.all, gone)
		prune(si.byCtx, gone)
		prune(si.byState, gone)
		prune(si.byCtxState, gone)
		for e := range doomed {
			delete(s.tasks, e.key.ID)
			for id := range e.configs {
				s.forget(configKey{e.key.ID, id})
			}
		}
		if len(si.all) == 0 {
			delete(s.scopes, sc)
		}
		n += len(doomed)
	}
	return n, nil
}

// PutPushConfig creates or replaces a copy of c under its task, which must
// be in the scope. A replaced configuration loses its queued notifications
// and its suspension; with ev.Push, ev.Response is queued for it.
func (s *Store) PutPushConfig(ctx context.Context, sc taskstore.Scope, c *a2a.TaskPushNotificationConfig, ev taskstore.Event) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	cp := cloneConfig(c)
	var first *a2a.StreamResponse
	if ev.Push && ev.Response != nil {
		first = proto.Clone(ev.Response).(*a2a.StreamResponse)
	}
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
	k := configKey{cp.GetTaskId(), cp.GetId()}
	s.forget(k)
	if first != nil {
		s.queue(k, ev.Seq, first)
	}
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
	s.forget(configKey{taskID, id})
	return nil
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
		if a.TaskID != b.TaskID {
			return strings.Compare(a.TaskID, b.TaskID)
		}
		return strings.Compare(a.ConfigID, b.ConfigID)
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
	var cfg *a2a.TaskPushNotificationConfig
	if e := s.target(t); e != nil {
		rows = s.outbox[configKey{t.TaskID, t.ConfigID}]
		rows = slices.Clone(rows[:min(len(rows), max(limit, 1))])
		cfg = e.configs[t.ConfigID]
	}
	s.mu.RUnlock()
	out := make([]*taskstore.Notification, len(rows))
	for i, r := range rows {
		out[i] = &taskstore.Notification{ID: r.id, Target: t, Config: cloneConfig(cfg), Seq: r.seq,
			Event: proto.Clone(r.event).(*a2a.StreamResponse)}
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
	s.drop(k)
	s.suspended[k] = reason
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
	c.Created = time.UnixMilli(r.Created.UnixMilli()).UTC()
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
