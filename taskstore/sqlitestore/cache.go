package sqlitestore

import (
	"hash/maphash"
	"sync"

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
type taskCache struct {
	seed maphash.Seed

	mu      sync.Mutex
	gen     uint64      // bumped by every drop and clear
	dropped [256]uint64 // per key hash, the generation of its last drop
	cleared uint64      // the generation of the last clear
	tasks   map[cacheKey]*a2a.Task
}

type cacheKey struct {
	scope taskstore.Scope
	id    string
}

func newTaskCache() *taskCache {
	return &taskCache{seed: maphash.MakeSeed(), tasks: make(map[cacheKey]*a2a.Task, cachedTasks)}
}

func (c *taskCache) slot(k cacheKey) uint8 {
	return uint8(maphash.String(c.seed, k.id))
}

// get returns the cached task, or nil, and the generation to give put.
func (c *taskCache) get(k cacheKey) (*a2a.Task, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tasks[k], c.gen
}

// put caches t, read from the store after get returned gen,
// unless the key may have been written since or t is too large.
func (c *taskCache) put(k cacheKey, t *a2a.Task, gen uint64) {
	if proto.Size(t) > cachedTaskBytes {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dropped[c.slot(k)] > gen || c.cleared > gen {
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
	c.mu.Unlock()
}

// clear forgets every task: tasks were deleted.
func (c *taskCache) clear() {
	c.mu.Lock()
	c.gen++
	c.cleared = c.gen
	clear(c.tasks)
	c.mu.Unlock()
}
