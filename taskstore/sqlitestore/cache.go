package sqlitestore

import (
	"context"
	"hash/maphash"
	"sync"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/internal/share"
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
// generation before it reads (generation), and put refuses its task when
// a drop of a key with the same hash came since.
//
// Calls that ask for a task another call is reading wait for that read
// rather than read it again, and a task too large to keep is still shared
// while an answer holds it (shared, a share.Group): many calls reading one
// large task at once (say, clients that do not take their answers) hold
// one tree of it, not one each, and the cache keeps none once the answers
// are gone. A drop ends the sharing of a read in progress: a call that
// comes after a write reads after it.
type taskCache struct {
	seed   maphash.Seed
	shared share.Group[cacheKey, a2a.Task]

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

// get returns the task with the key: cached, shared, or read with read
// (once for the calls that come meanwhile) and cached unless a write came
// since it began; a task too large to keep is shared while an answer
// holds it.
func (c *taskCache) get(ctx context.Context, k cacheKey, read func() (*a2a.Task, error)) (*a2a.Task, error) {
	c.mu.Lock()
	t := c.tasks[k]
	c.mu.Unlock()
	if t != nil {
		return t, nil
	}
	return c.shared.Do(ctx, k, func() (*a2a.Task, bool, error) {
		c.mu.Lock()
		gen := c.gen
		c.mu.Unlock()
		t, err := read()
		if err != nil {
			return nil, false, err
		}
		return t, c.put(k, t, gen), nil
	})
}

// put caches t, read from the store at generation gen, unless the key may
// have been written since or t is too large, which it reports (then the
// shared group holds it while an answer does).
func (c *taskCache) put(k cacheKey, t *a2a.Task, gen uint64) (large bool) {
	large = proto.Size(t) > cachedTaskBytes
	c.mu.Lock()
	defer c.mu.Unlock()
	if large || c.dropped[c.slot(k)] > gen || c.cleared > gen {
		return large
	}
	if len(c.tasks) >= cachedTasks {
		for old := range c.tasks { // any one
			delete(c.tasks, old)
			break
		}
	}
	c.tasks[k] = t
	return false
}

// drop forgets the task with the key: it was written.
func (c *taskCache) drop(k cacheKey) {
	c.mu.Lock()
	c.gen++
	c.dropped[c.slot(k)] = c.gen
	delete(c.tasks, k)
	c.shared.Forget(k)
	c.mu.Unlock()
}

// clear forgets every task: tasks were deleted.
func (c *taskCache) clear() {
	c.mu.Lock()
	c.gen++
	c.cleared = c.gen
	clear(c.tasks)
	c.shared.Clear()
	c.mu.Unlock()
}
