package memstore

import (
	"slices"
	"sync/atomic"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/internal/order"
)

// entry is one stored task. An append changes it in place under the write
// lock, so readers copy what they return while they hold the read lock.
// key, ctx and state are the values the entry is indexed under; they
// change only while the entry is out of the indexes (see reindex).
type entry struct {
	scope  taskstore.Scope
	key    order.Key
	ctx    string
	state  a2a.TaskState
	queued bool // in Store.finished, the eviction queue (Store.makeRoom)
	gone   bool // removed from the store
	seq    uint64
	task   *a2a.Task // nil while packed (Store.pack)
	packed []byte    // the task encoded, when finished
	// decoded is packed decoded, kept for the GetTask calls of a finished
	// task read again (Store.readTask); only ever copied. nil while the
	// task is live, or not among the last tasks so read.
	decoded  atomic.Pointer[a2a.Task]
	readOnce atomic.Bool // GetTask read the packed task
	log      eventLog
	configs  map[string]*taskstore.PushConfig
	// msgs are the message records that name the task, marked when the
	// bound on tasks evicts it (Store.evict); kept only with a bound.
	msgs []*record
}

// newEntry returns the entry of task t (the store's own copy) in the scope,
// indexed by its current values.
func newEntry(sc taskstore.Scope, t *a2a.Task, seq uint64) *entry {
	e := &entry{scope: sc, task: t, seq: seq}
	e.indexAs(t)
	return e
}

// indexAs sets the values e is indexed under to task t's. The entry must
// not be in the indexes (see reindex).
func (e *entry) indexAs(t *a2a.Task) {
	e.key, e.ctx, e.state = order.TaskKey(t), t.GetContextId(), t.GetStatus().GetState()
}

// reindex moves e in its scope's indexes when the task's sort key, context
// or state changed. The caller holds the write lock. Every status change
// comes here, so e keeps its place in the task map, and an index that e
// leaves empty becomes the one it joins when that one does not exist yet
// (a task's state index, when it is the only task in that state): no
// allocation, no map entry removed and added again.
func (s *Store) reindex(e *entry) {
	key, ctx, st := order.TaskKey(e.task), e.task.GetContextId(), e.task.GetStatus().GetState()
	if key == e.key && ctx == e.ctx && st == e.state {
		return
	}
	si := s.scopes[e.scope]
	si.all.remove(e)
	byCtx := take(si.byCtx, e.ctx, ctx, e)
	byState := take(si.byState, e.state, st, e)
	e.key, e.ctx, e.state = key, ctx, st
	si.all.insert(e)
	byCtx.insert(e)
	byState.insert(e)
	si.byCtx[ctx], si.byState[st] = byCtx, byState
}

// take removes e (indexed under e.key) from m's index for from, and
// returns m's index for to, for the caller to insert e into and store in
// m: the index e left empty, when to has none yet.
func take[K comparable](m map[K]index, from, to K, e *entry) index {
	if x, ok := m[from]; ok {
		x.remove(e)
		switch {
		case from == to:
			return x
		case len(x) > 0:
			m[from] = x
		default:
			delete(m, from)
			if _, ok := m[to]; !ok {
				return x
			}
		}
	}
	return m[to]
}

// index is a slice of entries sorted in reverse ListTasks order: oldest
// first, and among equal timestamps smallest id first.
type index []*entry

// scopeIndex holds the ordered indexes of one scope. The maps hold the
// indexes themselves, not pointers to them: a scope whose tasks each have
// a context of their own holds as many indexes as tasks, and each pointer
// would be one more object for the garbage collector to walk.
type scopeIndex struct {
	all     index
	byCtx   map[string]index
	byState map[a2a.TaskState]index
}

// position returns where k is or would be inserted in x. The entries
// before it sort after k in ListTasks order.
//
// The search gallops back from the end before it bisects: the key looked
// for is almost always among the newest (a task just made or changed, its
// status stamped a moment before the write, within the same millisecond
// as many others), and the entries near the end are the ones the cache
// holds, where a bisection of the whole index would read one entry from
// memory at each of its steps.
func (x index) position(k order.Key) (int, bool) {
	before := func(e *entry, k order.Key) int { return -order.Compare(e.key, k) }
	lo, hi := 0, len(x) // the position is in [lo, hi]
	for step := 1; hi > 0; step *= 2 {
		i := max(hi-step, 0)
		if before(x[i], k) < 0 {
			lo = i + 1
			break
		}
		hi = i
	}
	p, _ := slices.BinarySearchFunc(x[lo:hi], k, before)
	p += lo
	return p, p < len(x) && before(x[p], k) == 0
}

func (x *index) insert(e *entry) {
	// Most inserts are of the newest task, which goes last: one
	// comparison instead of a search.
	if s := *x; len(s) == 0 || order.Compare(s[len(s)-1].key, e.key) > 0 {
		*x = append(s, e)
		return
	}
	i, _ := x.position(e.key)
	*x = slices.Insert(*x, i, e)
}

// remove takes e out of x, shifting whichever side of it is shorter: the
// oldest tasks, which the bound on tasks evicts, are near the
// front, where removing one costs the few entries before it.
func (x *index) remove(e *entry) {
	// The newest entry (a task that just changed) and the oldest (the
	// one evicted) are found without a search.
	var i int
	switch s := *x; {
	case len(s) > 0 && s[len(s)-1] == e:
		i = len(s) - 1
	case len(s) > 0 && s[0] == e:
		i = 0
	default:
		var found bool
		if i, found = x.position(e.key); !found || s[i] != e {
			return
		}
	}
	if s := *x; i < len(s)/2 {
		copy(s[1:i+1], s[:i])
		s[0] = nil // let the entry be collected
		*x = s[1:]
		return
	}
	*x = slices.Delete(*x, i, i+1)
}

// addTo inserts e into the index m holds for k, making it if needed.
func addTo[K comparable](m map[K]index, k K, e *entry) {
	x := m[k]
	x.insert(e)
	m[k] = x
}

// removeFrom removes e from the index m holds for k and forgets the index
// once it is empty, so that contexts that come and go do not leak.
func removeFrom[K comparable](m map[K]index, k K, e *entry) {
	if x, ok := m[k]; ok {
		x.remove(e)
		if len(x) == 0 {
			delete(m, k)
		} else {
			m[k] = x
		}
	}
}

// prune removes the entries gone reports from every index in m and
// forgets the indexes left empty.
func prune[K comparable](m map[K]index, gone func(*entry) bool) {
	for k, x := range m {
		if x = slices.DeleteFunc(x, gone); len(x) == 0 {
			delete(m, k)
		} else {
			m[k] = x
		}
	}
}

// link adds e to the task map and to every index of its scope. The caller
// holds the write lock.
func (s *Store) link(e *entry) {
	si := s.scopes[e.scope]
	if si == nil {
		si = &scopeIndex{
			byCtx:   make(map[string]index),
			byState: make(map[a2a.TaskState]index),
		}
		s.scopes[e.scope] = si
	}
	ctx, st := e.ctx, e.state
	si.all.insert(e)
	addTo(si.byCtx, ctx, e)
	addTo(si.byState, st, e)
	s.tasks[e.key.ID] = e
}

// unlink removes e from the task map and from every index of its scope.
// The caller holds the write lock.
func (s *Store) unlink(e *entry) {
	si := s.scopes[e.scope]
	ctx, st := e.ctx, e.state
	si.all.remove(e)
	removeFrom(si.byCtx, ctx, e)
	removeFrom(si.byState, st, e)
	if len(si.all) == 0 {
		delete(s.scopes, e.scope)
	}
	delete(s.tasks, e.key.ID)
}

// unlinkAll removes the doomed entries of one scope, filtering each of its
// indexes once rather than shifting the slices once per entry. The caller
// holds the write lock.
func (s *Store) unlinkAll(sc taskstore.Scope, doomed map[*entry]bool) {
	si := s.scopes[sc]
	gone := func(e *entry) bool { return doomed[e] }
	si.all = slices.DeleteFunc(si.all, gone)
	prune(si.byCtx, gone)
	prune(si.byState, gone)
	for e := range doomed {
		delete(s.tasks, e.key.ID)
	}
	if len(si.all) == 0 {
		delete(s.scopes, sc)
	}
}
