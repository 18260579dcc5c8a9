// Package share lets the calls that read one value at once share one read
// of it, and the calls that come while any caller still holds a value
// share that value (a weak pointer: kept for no one else). The stores'
// GetTask of a large task uses it, so that many calls reading one such
// task at once (say, clients that do not take their answers) hold one
// decoded tree of it, not one each, and the store keeps none once the
// answers are gone; reads of different tasks do not wait for each other.
package share

import (
	"context"
	"sync"
	"weak"
)

// sweepAt is how many held values a Group keeps before a new one makes it
// forget those no caller holds any more.
const sweepAt = 128

// Group shares reads and held values by key; its zero value is ready. Its
// methods may be called concurrently.
type Group[K comparable, V any] struct {
	mu    sync.Mutex
	held  map[K]weak.Pointer[V]
	reads map[K]*read[V]
}

// read is a read in progress, which the calls for its key that come
// meanwhile wait for.
type read[V any] struct {
	done chan struct{} // closed when v is set
	v    *V            // nil when the read failed
}

// Do returns the value with the key k that a caller still holds; else the
// value of the read of it in progress, waiting for it (until ctx ends:
// ctx.Err()); else the value read makes, which the calls that come
// meanwhile share and which, when read says hold, later calls share while
// a caller holds it. A call whose shared read failed reads on its own
// (the error may have been the other caller's context's). A read that
// Forget or Clear overtook is not shared past them.
func (g *Group[K, V]) Do(ctx context.Context, k K, read func() (v *V, hold bool, err error)) (*V, error) {
	g.mu.Lock()
	if w, ok := g.held[k]; ok {
		if v := w.Value(); v != nil {
			g.mu.Unlock()
			return v, nil
		}
		delete(g.held, k)
	}
	if r := g.reads[k]; r != nil {
		g.mu.Unlock()
		select {
		case <-r.done:
			if r.v != nil {
				return r.v, nil
			}
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		v, _, err := read()
		return v, err
	}
	r := g.start(k)
	g.mu.Unlock()
	v, hold, err := read()
	g.mu.Lock()
	if g.reads[k] == r {
		delete(g.reads, k)
		if v != nil && hold {
			g.hold(k, v)
		}
	}
	g.mu.Unlock()
	r.v = v
	close(r.done)
	return v, err
}

// start records a read of k in progress. Callers hold g.mu.
func (g *Group[K, V]) start(k K) *read[V] {
	if g.reads == nil {
		g.reads, g.held = map[K]*read[V]{}, map[K]weak.Pointer[V]{}
	}
	r := &read[V]{done: make(chan struct{})}
	g.reads[k] = r
	return r
}

// hold keeps v for the calls for k while a caller holds it. Callers hold
// g.mu.
func (g *Group[K, V]) hold(k K, v *V) {
	if len(g.held) >= sweepAt {
		for old, w := range g.held {
			if w.Value() == nil {
				delete(g.held, old)
			}
		}
	}
	g.held[k] = weak.Make(v)
}

// Forget ends the sharing of k's value and of a read of it in progress
// (the value changed): a call that comes after reads anew.
func (g *Group[K, V]) Forget(k K) {
	g.mu.Lock()
	delete(g.held, k)
	delete(g.reads, k)
	g.mu.Unlock()
}

// Clear forgets every key.
func (g *Group[K, V]) Clear() {
	g.mu.Lock()
	clear(g.held)
	clear(g.reads)
	g.mu.Unlock()
}

// Held reports whether a value of k is kept for later calls (tests).
func (g *Group[K, V]) Held(k K) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	w, ok := g.held[k]
	return ok && w.Value() != nil
}
