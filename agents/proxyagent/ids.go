package proxyagent

import (
	"sync"

	"parley.dev/parley/a2a"
)

// maxPairs bounds each table of idMap and refusals; the oldest entries go
// first.
const maxPairs = 100_000

// fifo is a map that forgets its oldest keys beyond maxPairs.
type fifo[V any] struct {
	m     map[string]V
	order []string
}

func (f *fifo[V]) set(k string, v V) {
	if f.m == nil {
		f.m = map[string]V{}
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

// idMap pairs Parley's task and context ids with the upstream's.
type idMap struct {
	mu       sync.Mutex
	tasks    fifo[*upTask]
	contexts fifo[string]
}

// upTask is the upstream side of a Parley task.
type upTask struct {
	id       string
	canceled bool // a CancelTask was sent upstream
}

func newIDMap() *idMap { return &idMap{} }

// put records that Parley's task and context are the upstream's upTaskID
// and upContextID ("" leaves a side unrecorded).
func (m *idMap) put(taskID, contextID, upTaskID, upContextID string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if upTaskID != "" {
		if t := m.tasks.m[taskID]; t == nil || t.id != upTaskID {
			m.tasks.set(taskID, &upTask{id: upTaskID})
		}
	}
	if upContextID != "" && m.contexts.m[contextID] != upContextID {
		m.contexts.set(contextID, upContextID)
	}
}

// task returns the upstream id of a Parley task, "" when unknown.
func (m *idMap) task(taskID string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if t := m.tasks.m[taskID]; t != nil {
		return t.id
	}
	return ""
}

// context returns the upstream id of a Parley context, "" when unknown.
func (m *idMap) context(contextID string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.contexts.m[contextID]
}

// markCanceled records that the upstream task of taskID is being
// canceled; it reports false when it already was.
func (m *idMap) markCanceled(taskID string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.tasks.m[taskID]
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
	errs fifo[*a2a.Error]
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
func (m *idMap) unmarkCanceled(taskID string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if t := m.tasks.m[taskID]; t != nil {
		t.canceled = false
	}
}
