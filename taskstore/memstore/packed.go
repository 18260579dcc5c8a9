package memstore

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
)

// Finished tasks are kept encoded. A task in a terminal state changes
// seldom and is read seldom, and a store holds many: as a tree of
// protobuf messages, each is some fifty small objects that the garbage
// collector walks at every cycle, which under load made up most of the
// heap and, on one core, of SendMessage's p99 latency. Encoded, it is a
// few byte slices, which the collector does not look into. A write to it
// decodes it first (live) and encodes it again after; a read decodes a
// copy, which is what it would have cloned.

// pack encodes the entry's task and logged events when the task is
// terminal. An encoding error leaves the task as it is. Callers hold s.mu
// for writing and have reindexed the entry.
func (e *entry) pack() {
	if e.task == nil || !a2a.IsTerminal(e.state) {
		return
	}
	b, err := proto.Marshal(e.task)
	if err != nil {
		return
	}
	e.task, e.packed = nil, b
	for i := range e.log {
		l := &e.log[i]
		if l.resp == nil {
			continue
		}
		if b, err := proto.Marshal(l.resp); err == nil {
			l.resp, l.packed = nil, b
		}
	}
}

// live returns the entry's task for a write, decoding it if it was
// packed; the write packs it again. Callers hold s.mu for writing.
func (e *entry) live() (*a2a.Task, error) {
	if e.task == nil {
		t, err := unpackTask(e.packed)
		if err != nil {
			return nil, err
		}
		e.task, e.packed = t, nil
	}
	return e.task, nil
}

// copyTask returns a copy of the entry's task. Callers hold s.mu.
// Its generation is the entry's (taskstore.Generation).
func (e *entry) copyTask() (*a2a.Task, error) {
	t := e.task
	if t == nil {
		var err error
		if t, err = unpackTask(e.packed); err != nil {
			return nil, err
		}
	} else {
		t = cloneTask(t)
	}
	t.Generation = taskstore.Generation(e.seq)
	return t, nil
}

// unpackTask decodes a packed task.
func unpackTask(b []byte) (*a2a.Task, error) {
	t := new(a2a.Task)
	if err := proto.Unmarshal(b, t); err != nil {
		return nil, fmt.Errorf("memstore: decode a finished task: %w", err)
	}
	return t, nil
}

// response returns the logged event, decoding it if it was packed.
func (l logged) response() (*a2a.StreamResponse, error) {
	if l.resp != nil {
		return l.resp, nil
	}
	r := new(a2a.StreamResponse)
	if err := proto.Unmarshal(l.packed, r); err != nil {
		return nil, fmt.Errorf("memstore: decode a logged event: %w", err)
	}
	return r, nil
}
