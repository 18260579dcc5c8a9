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
	// changes once logged. It is nil once packed (entry.pack).
	resp   *a2a.StreamResponse
	packed []byte
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
		r, err := ev.response() // immutable: shared, or a copy decoded
		if err != nil {
			return nil, err
		}
		out[i] = a2a.StreamEvent{Seq: ev.seq, Response: r}
	}
	return out, nil
}

// loggedAt is one logged event in the order PruneEvents looks at them: the
// entry whose log it joined, and when (Unix nanoseconds).
type loggedAt struct {
	e  *entry
	at int64
}

// logEvent appends event seq to the entry's log l and returns the log. The
// caller holds the write lock.
func (s *Store) logEvent(e *entry, l eventLog, seq uint64, r *a2a.StreamResponse) eventLog {
	at := s.now().UnixNano()
	s.logged = append(s.logged, loggedAt{e, at})
	return append(l, logged{seq: seq, at: at, resp: r})
}

// PruneEvents drops the events appended before the given time (by the
// store's clock), except each task's last one. It walks the events logged
// since its last call in the order they were logged and stops at the first
// one at or after the time, so its cost is what it drops (an event kept
// because it was its task's last is dropped later, by the look at its
// task's next event), whatever the number of tasks.
func (s *Store) PruneEvents(ctx context.Context, before time.Time) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	cut := before.UnixNano()
	s.mu.Lock()
	defer s.mu.Unlock()
	total, i := 0, 0
	for ; i < len(s.logged) && s.logged[i].at < cut; i++ {
		e := s.logged[i].e
		if e.gone && s.deadLogged > 0 {
			s.deadLogged-- // a removed task's event: forget counted it
		}
		var n int
		e.log, n = e.log.prune(cut)
		total += n
		s.logged[i] = loggedAt{} // let a deleted task's entry be collected
	}
	s.logged = s.logged[i:]
	return total, nil
}
