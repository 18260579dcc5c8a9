package proxyagent

import (
	"sync"

	"parley.dev/parley/a2a"
	"parley.dev/parley/server"
)

// maxPairs bounds each table of idMap and refusals; the oldest entries go
// first.
const maxPairs = 100_000

// fifo is a map that forgets its oldest keys beyond maxPairs.
type fifo[K comparable, V any] struct {
	m     map[K]V
	order []K
}

func (f *fifo[K, V]) set(k K, v V) {
	if f.m == nil {
		f.m = map[K]V{}
	}
	if _, ok := f.m[k]; !ok {
		f.order = append(f.order, k)
	}
	f.m[k] = v
	for len(f.order) > maxPairs {
		delete(f.m, f.order[0])
		f.order = f.order[1:]
	}
}

// taskKey names a Parley task within the scope of the caller it belongs
// to (decision B12: tasks belong to the principal that created them).
type taskKey struct{ tenant, principal, id string }

// taskOfRequest is the key of the task a request goes to.
func taskOfRequest(req *server.Request) taskKey {
	return taskKey{req.Tenant, req.Principal, req.TaskID}
}

// idMap pairs Parley's task and context ids with the upstream's. Both
// sides are keyed by the caller's scope as well as the id: a contextId is
// the caller's own name for a context, so the same contextId from two
// callers names two Parley contexts, paired with two upstream contexts.
type idMap struct {
	mu       sync.Mutex
	tasks    fifo[taskKey, *upTask]
	contexts fifo[server.ContextKey, string]
}

// upTask is the upstream side of a Parley task.
type upTask struct {
	id       string
	canceled bool // a CancelTask was sent upstream
}

func newIDMap() *idMap { return &idMap{} }

// put records that the task and context of req are the upstream's
// upTaskID and upContextID ("" leaves a side unrecorded).
func (m *idMap) put(req *server.Request, upTaskID, upContextID string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if k := taskOfRequest(req); upTaskID != "" {
		if t := m.tasks.m[k]; t == nil || t.id != upTaskID {
			m.tasks.set(k, &upTask{id: upTaskID})
		}
	}
	if k := req.Context(); upContextID != "" && m.contexts.m[k] != upContextID {
		m.contexts.set(k, upContextID)
	}
}

// task returns the upstream id of a Parley task, "" when unknown.
func (m *idMap) task(k taskKey) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if t := m.tasks.m[k]; t != nil {
		return t.id
	}
	return ""
}

// context returns the upstream id of a Parley context, "" when unknown.
func (m *idMap) context(k server.ContextKey) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.contexts.m[k]
}

// markCanceled records that the upstream task of a Parley task is being
// canceled; it reports false when it already was.
func (m *idMap) markCanceled(k taskKey) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.tasks.m[k]
	if t == nil || t.canceled {
		return false
	}
	t.canceled = true
	return true
}

// refusals keeps the A2A error the upstream answered a message with,
// by Parley task id, until Middleware hands it to the caller.
type refusals struct {
	mu   sync.Mutex
	errs fifo[string, *a2a.Error]
}

func newRefusals() *refusals { return &refusals{} }

func (r *refusals) put(taskID string, e *a2a.Error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs.set(taskID, e)
}

// take returns and forgets the error kept for taskID, nil when none.
func (r *refusals) take(taskID string) *a2a.Error {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.errs.m[taskID]
	delete(r.errs.m, taskID) // its place in order goes when it ages out
	return e
}

// unmarkCanceled forgets a cancel the upstream refused.
func (m *idMap) unmarkCanceled(k taskKey) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if t := m.tasks.m[k]; t != nil {
		t.canceled = false
	}
}
