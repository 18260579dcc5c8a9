package memstore

import (
	"context"
	"slices"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
)

// eventLog is the kept events of one task, oldest first. Their sequence
// numbers are consecutive from first: Append takes only the next one, and
// PruneEvents removes a prefix. A running task's events are the trees the
// writes stored (live), which readers share; a finished task's are
// encoded into one buffer (old, packedEvents), with the events logged
// after it finished, if any, as trees until the write that logs them
// packs them too (Store.pack).
//
// The arrays of a log are never written below their length once
// published: an append writes past it, and packing and pruning make new
// ones, so a reader may keep a part of them after s.mu is released.
type eventLog struct {
	first uint64
	base  []byte                // the timeline base (taskstore.Fold); replaced, never changed
	old   *packedEvents         // the oldest events, encoded; nil when none
	live  []*a2a.StreamResponse // the events after them, immutable
	spans []span                // when the events were logged, oldest first
	open  bool                  // the last span may take more events
}

// span says when a run of a log's events was logged: the events up to
// sequence number last, after those of the spans before it, were all
// logged at or before at (Unix nanoseconds). A log keeps one span per
// second in which it took events: at is the time of its events rounded up
// to the second (spanOf), so the kept times cost nothing per event, and
// PruneEvents may keep an event up to a second longer than asked, never
// drop it sooner.
type span struct {
	last uint64
	at   int64
}

// spanOf returns the time, in Unix nanoseconds, of the span of an event
// logged at t: t rounded up to the second.
func spanOf(t time.Time) int64 {
	s := t.Unix()
	if t.Nanosecond() > 0 {
		s++
	}
	return s * int64(time.Second)
}

// count returns how many events the log keeps.
func (l *eventLog) count() int {
	return l.old.len() + len(l.live)
}

// add appends event seq, logged in the span at (spanOf), to the log, and
// reports whether it opened a new span.
func (l *eventLog) add(seq uint64, r *a2a.StreamResponse, at int64) bool {
	if l.count() == 0 {
		l.first = seq
	}
	l.live = append(l.live, r)
	if n := len(l.spans); l.open && n > 0 && l.spans[n-1].at == at {
		l.spans[n-1].last = seq
		return false
	}
	l.spans = append(l.spans, span{last: seq, at: at})
	l.open = true
	return true
}

// logView is a run of a log's events, read after s.mu is released:
// events from to to of old, then live, the first with sequence number seq.
type logView struct {
	seq      uint64
	old      *packedEvents
	from, to int
	live     []*a2a.StreamResponse
}

// after returns the events with sequence numbers greater than after, up
// to limit of them (all when limit is not positive). last is the task's
// last sequence number. It reports false when event after+1 is no longer
// kept.
func (l *eventLog) after(after, last uint64, limit int) (logView, bool) {
	if after >= last {
		return logView{}, true
	}
	n := l.count()
	if n == 0 || l.first > after+1 {
		return logView{}, false
	}
	from := int(after + 1 - l.first)
	if from >= n {
		return logView{}, true
	}
	to := n
	if limit > 0 && to-from > limit {
		to = from + limit
	}
	v := logView{seq: after + 1}
	if k := l.old.len(); from < k {
		v.old, v.from, v.to = l.old, from, min(to, k)
		from = k
	}
	if from < to {
		k := l.old.len()
		v.live = l.live[from-k : to-k]
	}
	return v, true
}

// events returns the view's events, decoding those that are encoded; the
// live ones are shared.
func (v logView) events() ([]a2a.StreamEvent, error) {
	out := make([]a2a.StreamEvent, 0, v.to-v.from+len(v.live))
	seq := v.seq
	for i := v.from; i < v.to; i++ {
		r, err := v.old.event(i)
		if err != nil {
			return nil, err
		}
		out = append(out, a2a.StreamEvent{Seq: seq, Response: r})
		seq++
	}
	for _, r := range v.live {
		out = append(out, a2a.StreamEvent{Seq: seq, Response: r})
		seq++
	}
	return out, nil
}

// prune drops the events logged before cut (Unix nanoseconds, by their
// spans), always keeping the last one, folds them into the timeline base,
// and returns how many went. What is left is in new arrays, so the
// dropped events can be collected. A log whose events do not decode or
// fold is left as it is.
func (l *eventLog) prune(cut int64) int {
	k := 0
	for k < len(l.spans) && l.spans[k].at < cut {
		k++
	}
	n := l.count()
	if k == 0 || n == 0 {
		return 0
	}
	keep := l.spans[k-1].last + 1 // the first event kept
	if last := l.first + uint64(n) - 1; keep > last {
		keep = last
	}
	drop := int(keep - l.first)
	if drop <= 0 {
		return 0
	}
	base, err := l.fold(drop)
	if err != nil {
		return 0
	}
	l.base = base
	if o := l.old.len(); drop >= o {
		l.old = nil
		l.live = slices.Clone(l.live[drop-o:])
	} else {
		l.old = l.old.drop(drop)
	}
	j := 0
	for l.spans[j].last < keep {
		j++
	}
	l.spans = slices.Clone(l.spans[j:])
	l.first = keep
	return drop
}

// fold returns the log's timeline base with its first n events folded in
// (taskstore.Fold).
func (l *eventLog) fold(n int) ([]byte, error) {
	f, err := taskstore.NewFold(l.base)
	if err != nil {
		return nil, err
	}
	k := min(n, l.old.len())
	for i := range k {
		b, _, err := l.old.encoded(i)
		if err != nil {
			return nil, err
		}
		if err := f.AddEncoded(l.first+uint64(i), b); err != nil {
			return nil, err
		}
	}
	for i, r := range l.live[:n-k] {
		f.Add(a2a.StreamEvent{Seq: l.first + uint64(k+i), Response: r})
	}
	return f.Base()
}

// Events returns copies of up to limit of the task's logged events after
// the sequence number after, oldest first (every one when limit is not
// positive). It returns taskstore.ErrPruned when event after+1 is no
// longer kept, and no events and no error when after is the last sequence
// number or beyond it. A finished task's events are decoded, only those
// asked for; a running task's are shared, as they never change.
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
	v, ok := e.log.after(after, e.seq, limit)
	s.mu.RUnlock()
	if !ok {
		return nil, taskstore.ErrPruned
	}
	if v.seq == 0 {
		return nil, nil
	}
	return v.events()
}

// loggedAt is one span of a task's log in the order PruneEvents looks at
// them: the entry whose log it is in, and its time (span.at).
type loggedAt struct {
	e  *entry
	at int64
}

// logEvent appends event seq to the entry's log. The caller holds the
// write lock.
func (s *Store) logEvent(e *entry, seq uint64, r *a2a.StreamResponse) {
	at := spanOf(s.now())
	if e.log.add(seq, r, at) {
		s.logged = append(s.logged, loggedAt{e, at})
	}
}

// PruneEvents drops the events appended before the given time (by the
// store's clock), except each task's last one. The store keeps when its
// events were logged to the second (span), rounded up: an event is kept
// up to a second longer than asked, never dropped sooner. PruneEvents
// walks the spans logged since its last call in the order they were
// logged and stops at the first one at or after the time, so its cost is
// what it drops (an event kept because it was its task's last is dropped
// later, by the look at its task's next span), whatever the number of
// tasks.
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
			s.deadLogged-- // a removed task's span: forget counted it
		}
		total += e.log.prune(cut)
		// The task's next event opens a span of its own, which this walk
		// will look at again.
		e.log.open = false
		s.logged[i] = loggedAt{} // let a deleted task's entry be collected
	}
	s.logged = s.logged[i:]
	return total, nil
}
