package sqlitestore

import (
	"hash/maphash"
	"sync"
	"weak"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
)

// cachedTasks and cachedTaskBytes bound the tasks GetTask keeps
// (taskCache): at most 128 tasks of at most 32 KiB each in their
// protobuf encoding, 4 MiB at worst.
const (
	cachedTasks     = 128
	cachedTaskBytes = 32 << 10
)

// taskCache keeps the tasks GetTask read last, so that a task read again
// (a client polling the task it started, a finished task's GetTask) costs
// a map lookup instead of a statement on a reader connection: a read
// there under write load re-reads the pages the writer changed. GetTask's
// tasks are shared (taskstore.Tasks.GetTask), so the cache hands out and
// keeps the tasks themselves; nothing changes them.
//
// A write of a task drops it (drop) once committed, before the writer's
// caller learns it succeeded. A GetTask that read the store before that
// commit must not cache what it read after the drop: it notes the
// generation before it reads (get), and put refuses its task when a drop
// of a key with the same hash came since.
//
// A task too large to keep is still shared while an answer holds it
// (large, weak pointers), and calls that ask for a task another call is
// reading wait for that read (reading) rather than read it again: many
// calls reading one large task at once (say, clients that do not take
// their answers) hold one tree of it, not one each, and the cache keeps
// none once the answers are gone. A drop ends the sharing of a read in
// progress: a call that comes after a write reads after it.
type taskCache struct {
	seed maphash.Seed

	mu      sync.Mutex
	gen     uint64      // bumped by every drop and clear
	dropped [256]uint64 // per key hash, the generation of its last drop
	cleared uint64      // the generation of the last clear
	tasks   map[cacheKey]*a2a.Task
	large   map[cacheKey]weak.Pointer[a2a.Task]
	reading map[cacheKey]*read
}

// read is a GetTask's read of the store in progress, which the calls for
// the same task that come meanwhile wait for.
type read struct {
	done chan struct{} // closed when t is set
	t    *a2a.Task     // nil when the read failed
	gen  uint64        // the generation before it
}

type cacheKey struct {
	scope taskstore.Scope
	id    string
}

func newTaskCache() *taskCache {
	return &taskCache{seed: maphash.MakeSeed(), tasks: make(map[cacheKey]*a2a.Task, cachedTasks),
		large: map[cacheKey]weak.Pointer[a2a.Task]{}, reading: map[cacheKey]*read{}}
}

func (c *taskCache) slot(k cacheKey) uint8 {
	return uint8(maphash.String(c.seed, k.id))
}

// get returns the cached task; else the read of it in progress to wait
// for (own false); else a read of its own for the caller to make and give
// to done (own true).
func (c *taskCache) get(k cacheKey) (t *a2a.Task, rd *read, own bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t := c.tasks[k]; t != nil {
		return t, nil, false
	}
	if w, ok := c.large[k]; ok {
		if t := w.Value(); t != nil {
			return t, nil, false
		}
		delete(c.large, k)
	}
	if rd := c.reading[k]; rd != nil {
		return nil, rd, false
	}
	rd = &read{done: make(chan struct{}), gen: c.gen}
	c.reading[k] = rd
	return nil, rd, true
}

// done ends the caller's read rd of the task with the key: t is what it
// read (nil: it failed), cached unless a write came since.
func (c *taskCache) done(k cacheKey, rd *read, t *a2a.Task) {
	if t != nil {
		c.put(k, t, rd.gen)
	}
	c.mu.Lock()
	if c.reading[k] == rd {
		delete(c.reading, k)
	}
	c.mu.Unlock()
	rd.t = t
	close(rd.done)
}

// put caches t, read from the store after get returned gen,
// unless the key may have been written since or t is too large.
func (c *taskCache) put(k cacheKey, t *a2a.Task, gen uint64) {
	large := proto.Size(t) > cachedTaskBytes
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dropped[c.slot(k)] > gen || c.cleared > gen {
		return
	}
	if large {
		if len(c.large) >= cachedTasks {
			for old, w := range c.large { // those no answer holds
				if w.Value() == nil {
					delete(c.large, old)
				}
			}
		}
		c.large[k] = weak.Make(t)
		return
	}
	if len(c.tasks) >= cachedTasks {
		for old := range c.tasks { // any one
			delete(c.tasks, old)
			break
		}
	}
	c.tasks[k] = t
}

// drop forgets the task with the key: it was written.
func (c *taskCache) drop(k cacheKey) {
	c.mu.Lock()
	c.gen++
	c.dropped[c.slot(k)] = c.gen
	delete(c.tasks, k)
	delete(c.large, k)
	delete(c.reading, k)
	c.mu.Unlock()
}

// clear forgets every task: tasks were deleted.
func (c *taskCache) clear() {
	c.mu.Lock()
	c.gen++
	c.cleared = c.gen
	clear(c.tasks)
	clear(c.large)
	clear(c.reading)
	c.mu.Unlock()
}
