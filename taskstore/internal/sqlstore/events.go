package sqlstore

import (
	"cmp"
	"slices"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/internal/layout"
)

// Op is one Append, encoded before it joins a write.
type Op struct {
	layout.Append
	Scope taskstore.Scope
	ID    string
	Seq   uint64
	Push  bool
	Fence int64 // the writer's lease epoch, where the store has leases (0: none)
}

// EncodeOp encodes what an Append of ev to the task writes.
func (d *Dialect) EncodeOp(sc taskstore.Scope, id string, ev taskstore.Event) (*Op, error) {
	a, err := layout.EncodeAppend(ev)
	if err != nil {
		return nil, d.Err(err)
	}
	return &Op{Append: a, Scope: sc, ID: id, Seq: ev.Seq, Push: ev.Push}, nil
}

// EncodeBatch checks that the events of an AppendBatch follow each other
// and encodes them, the chunks of a run joined (layout.EncodeRun); no
// events are no ops.
func (d *Dialect) EncodeBatch(sc taskstore.Scope, id string, evs []taskstore.Event) ([]*Op, error) {
	if len(evs) == 0 {
		return nil, nil
	}
	if err := taskstore.CheckBatch(evs[0].Seq, evs); err != nil {
		return nil, err
	}
	as, err := layout.EncodeRun(evs)
	if err != nil {
		return nil, d.Err(err)
	}
	ops := make([]*Op, len(evs))
	for i, ev := range evs {
		ops[i] = &Op{Append: as[i], Scope: sc, ID: id, Seq: ev.Seq, Push: ev.Push}
	}
	return ops, nil
}

// QueuedEvent returns the encoded event that ev queues in the push
// outbox, or nil when it queues nothing.
func (d *Dialect) QueuedEvent(ev taskstore.Event) ([]byte, error) {
	if !ev.Push || ev.Response == nil {
		return nil, nil
	}
	return d.Marshal(ev.Response)
}

// Marshal encodes m for a column; an empty message is an empty value,
// not NULL.
func (d *Dialect) Marshal(m proto.Message) ([]byte, error) {
	b, err := layout.Marshal(m)
	if err != nil {
		return nil, d.Err(err)
	}
	return b, nil
}

// ReadEvents reads the rows of an Events query: the task's last sequence
// number, then the sequence number (0 for none), first_seq and bytes of
// one of its log rows with an event after `after`, in order
// (layout.JoinEvents). No row at all is a task not in the scope
// (taskstore.ErrNotFound); an event log that no longer starts right after
// `after` is taskstore.ErrPruned. The query limits rows, and a row may
// hold several events: at most limit are returned (every one when limit
// is not positive).
func ReadEvents[B ~[]byte](d *Dialect, rows Rows, after uint64, limit int) ([]a2a.StreamEvent, error) {
	found := false
	var last, seq int64
	var first *int64
	var data B
	var out []a2a.StreamEvent
	add := func(seq uint64, b []byte) error {
		if seq <= after || (limit > 0 && len(out) == limit) {
			return nil
		}
		if len(out) == 0 && seq != after+1 {
			return taskstore.ErrPruned
		}
		r := new(a2a.StreamResponse)
		if err := proto.Unmarshal(b, r); err != nil {
			return d.Wrap("decode event", err)
		}
		out = append(out, a2a.StreamEvent{Seq: seq, Response: r})
		return nil
	}
	for rows.Next() {
		found = true
		if err := rows.Scan(&last, &seq, &first, &data); err != nil {
			return nil, d.Wrap("events", err)
		}
		if seq == 0 {
			break // no event after `after`
		}
		if err := d.eachEvent(seq, first, data, add); err != nil {
			return nil, err
		}
	}
	if err := rows.Err(); err != nil {
		return nil, d.Wrap("events", err)
	}
	switch {
	case !found:
		return nil, taskstore.ErrNotFound
	case after >= uint64(last):
		return nil, nil
	case len(out) == 0:
		return nil, taskstore.ErrPruned
	}
	return out, nil
}

// eachEvent calls fn with the sequence number and bytes of each event of
// a log row (its seq, first_seq and bytes), oldest first: the row's own,
// or those it joins (layout.JoinEvents). An error of fn is returned as it
// is.
func (d *Dialect) eachEvent(seq int64, first *int64, data []byte, fn func(seq uint64, b []byte) error) error {
	if first == nil {
		return fn(uint64(seq), data)
	}
	evs, err := layout.SplitEvents(data, uint64(*first), uint64(seq))
	if err != nil {
		return d.Wrap("events", err)
	}
	for _, e := range evs {
		if err := fn(e.Seq, e.Data); err != nil {
			return err
		}
	}
	return nil
}

// PrunedEvents appends to evs the events of a log row that a prune
// removes (its seq, first_seq and bytes), those numbered below keep: a
// task's last row, trimmed to its last event, keeps that one. A row that
// does not split adds nothing: Events reports it, and it does not stop
// the prune.
func (d *Dialect) PrunedEvents(evs []layout.Logged, seq int64, first *int64, data []byte, keep uint64) []layout.Logged {
	d.eachEvent(seq, first, data, func(seq uint64, b []byte) error {
		if seq < keep {
			evs = append(evs, layout.Logged{Seq: seq, Data: b})
		}
		return nil
	})
	return evs
}

// FoldPruned returns the task's timeline base base (nil: none) with evs,
// the events a prune removes from its log, in any order, folded in
// (taskstore.Fold). An event that does not decode says nothing: Events
// reports it, and it does not stop the prune.
func (d *Dialect) FoldPruned(base []byte, evs []layout.Logged) ([]byte, error) {
	f, err := taskstore.NewFold(base)
	if err != nil {
		return nil, d.Err(err)
	}
	slices.SortFunc(evs, func(a, b layout.Logged) int { return cmp.Compare(a.Seq, b.Seq) })
	for _, ev := range evs {
		_ = f.AddEncoded(ev.Seq, ev.Data)
	}
	b, err := f.Base()
	if err != nil {
		return nil, d.Err(err)
	}
	return b, nil
}
