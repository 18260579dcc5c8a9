package memstore

import (
	"context"
	"slices"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
)

// logged is one event of a task's log.
type logged struct {
	seq uint64
	// at is when the store appended the event, in Unix nanoseconds.
	at int64
	// resp is the store's own copy, shared with the push outbox; it never
	// changes once logged.
	resp *a2a.StreamResponse
}

// eventLog is the kept events of one task, oldest first. Their sequence
// numbers are consecutive: Append takes only the next one, and PruneEvents
// removes a prefix.
type eventLog []logged

// after returns the events with sequence numbers greater than after, up
// to limit of them (all when limit is not positive), in the log's own
// slice. last is the task's last sequence number. It reports false when
// event after+1 is no longer kept.
func (l eventLog) after(after, last uint64, limit int) (eventLog, bool) {
	if after >= last {
		return nil, true
	}
	if len(l) == 0 || l[0].seq > after+1 {
		return nil, false
	}
	l = l[after+1-l[0].seq:]
	if limit > 0 && len(l) > limit {
		l = l[:limit]
	}
	return l, true
}

// prune drops the events appended before cut (Unix nanoseconds), always
// keeping the last one, and returns the log left and how many went. The
// log left is a new slice, so the dropped events can be collected.
func (l eventLog) prune(cut int64) (eventLog, int) {
	n := 0
	for n < len(l)-1 && l[n].at < cut {
		n++
	}
	if n == 0 {
		return l, 0
	}
	return slices.Clone(l[n:]), n
}

// Events returns copies of up to limit of the task's logged events after
// the sequence number after, oldest first (every one when limit is not
// positive). It returns taskstore.ErrPruned when event after+1 is no
// longer kept, and no events and no error when after is the last sequence
// number or beyond it.
func (s *Store) Events(ctx context.Context, sc taskstore.Scope, id string, after uint64, limit int) ([]a2a.StreamEvent, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	e := s.lookup(sc, id)
	if e == nil {
		s.mu.RUnlock()
		return nil, taskstore.ErrNotFound
	}
	l, ok := e.log.after(after, e.seq, limit)
	// The logged responses never change; only the slice must be copied
	// under the lock (PruneEvents replaces it, appends may grow it).
	l = slices.Clone(l)
	s.mu.RUnlock()
	if !ok {
		return nil, taskstore.ErrPruned
	}
	if len(l) == 0 {
		return nil, nil
	}
	out := make([]a2a.StreamEvent, len(l))
	for i, ev := range l {
		out[i] = a2a.StreamEvent{Seq: ev.seq, Response: ev.resp} // immutable: shared
	}
	return out, nil
}

// PruneEvents drops the events appended before the given time (by the
// store's clock), except each task's last one. It looks at every task
// with a log, and at no event it keeps beyond the first.
func (s *Store) PruneEvents(ctx context.Context, before time.Time) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	cut := before.UnixNano()
	s.mu.Lock()
	defer s.mu.Unlock()
	total := 0
	for _, e := range s.tasks {
		var n int
		e.log, n = e.log.prune(cut)
		total += n
	}
	return total, nil
}
