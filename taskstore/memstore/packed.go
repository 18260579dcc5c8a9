package memstore

import (
	"context"
	"fmt"
	"slices"
	"weak"

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
// terminal (packEvents for the events). An encoding error leaves the task,
// or its events, as they are. Callers hold s.mu for writing and have
// reindexed the entry.
func (s *Store) pack(e *entry) {
	if e.task == nil || !a2a.IsTerminal(e.state) {
		return
	}
	b, err := proto.Marshal(e.task)
	if err != nil {
		return
	}
	e.task, e.packed = nil, b
	l := &e.log
	if len(l.live) == 0 {
		return
	}
	p, buf, err := packEvents(l.old, l.live, e.key.ID, e.ctx, s.packBuf)
	if cap(buf) <= maxPackBuf {
		s.packBuf = buf[:0]
	}
	if err == nil {
		l.old, l.live = p, nil
	}
}

// maxPackBuf is the largest scratch buffer pack keeps for the next task.
const maxPackBuf = 1 << 20

// own makes the entry's task its own again when pack left it a tree
// (an encoding error): built with shallowTask and applyShared, it may
// share parts with the caller's task and the events. Callers hold s.mu
// for writing.
func (e *entry) own() {
	if e.task != nil {
		e.task = cloneTask(e.task)
	}
}

// finalState returns the state task t is in once evs are applied to it
// (taskstore.Apply): that of the last status update or Task among them,
// else t's own.
func finalState(t *a2a.Task, evs []taskstore.Event) a2a.TaskState {
	st := t.GetStatus().GetState()
	for _, ev := range evs {
		switch p := ev.Response.GetPayload().(type) {
		case *a2a.StreamResponse_StatusUpdate:
			st = p.StatusUpdate.GetStatus().GetState()
		case *a2a.StreamResponse_Task:
			st = p.Task.GetStatus().GetState()
		}
	}
	return st
}

// shallowTask returns a task with t's fields that shares what they point
// to (status, metadata, messages, artifacts) but has slices of its own,
// for a task the store packs before the write returns: what it shares is
// only read, by the encoding, while the caller's write is under way.
func shallowTask(t *a2a.Task) *a2a.Task {
	c := &a2a.Task{
		Id: t.Id, ContextId: t.ContextId, Status: t.Status, Metadata: t.Metadata,
		Artifacts: slices.Clone(t.Artifacts), History: slices.Clone(t.History),
	}
	if u := t.ProtoReflect().GetUnknown(); len(u) > 0 {
		c.ProtoReflect().SetUnknown(slices.Clone(u))
	}
	return c
}

// applyShared is taskstore.Apply for a task that is packed before the
// write returns (shallowTask): an artifact an event starts or replaces
// is the event's own, not a copy, and listed in borrowed; an append
// copies the artifact it extends first when that one is borrowed (an
// event's, or the caller's), so that no event nor the caller's task
// changes. The task encodes as taskstore.Apply would have left it.
func applyShared(t *a2a.Task, ev *a2a.StreamResponse, borrowed *[]*a2a.Artifact) {
	u := ev.GetArtifactUpdate()
	if u == nil {
		taskstore.Apply(t, ev)
		return
	}
	for i, a := range t.Artifacts {
		if a.ArtifactId != u.GetArtifact().GetArtifactId() {
			continue
		}
		if !u.Append {
			t.Artifacts[i] = u.Artifact
			*borrowed = append(*borrowed, u.Artifact)
			return
		}
		if j := slices.Index(*borrowed, a); j >= 0 {
			a = a2a.CloneArtifact(a)
			t.Artifacts[i] = a
			(*borrowed)[j] = nil
		}
		a2a.AppendChunk(a, u.Artifact)
		return
	}
	t.Artifacts = append(t.Artifacts, u.Artifact)
	*borrowed = append(*borrowed, u.Artifact)
}

// live returns the entry's task for a write, decoding it if it was
// packed; the write packs it again. Callers hold s.mu for writing.
func (s *Store) live(e *entry) (*a2a.Task, error) {
	if e.task == nil {
		t, err := unpackTask(e.packed)
		if err != nil {
			return nil, err
		}
		if len(e.packed) > cachedTaskBytes {
			s.large.Forget(weak.Make(e)) // the tree readLarge shares
		}
		e.task, e.packed = t, nil
		e.decoded.Store(nil) // of the packed task this write changes
	}
	return e.task, nil
}

// copyTask returns a copy of the entry's task. Callers hold s.mu.
// Its generation is the entry's (taskstore.Generation).
func (e *entry) copyTask() (*a2a.Task, error) {
	var t *a2a.Task
	var err error
	switch d := e.decoded.Load(); {
	case e.task != nil:
		t = cloneTask(e.task)
	case d != nil:
		t = cloneTask(d) // ListTasks's tasks are the caller's to change
	default:
		if t, err = unpackTask(e.packed); err != nil {
			return nil, err
		}
	}
	t.Generation = taskstore.Generation(e.seq)
	return t, nil
}

// cachedTasks and cachedTaskBytes bound the decoded finished tasks the
// store keeps for GetTask (readTask): at most 128 tasks of at most 32 KiB
// each in their encoding, as sqlitestore's cache of the tasks read last.
const (
	cachedTasks     = 128
	cachedTaskBytes = 32 << 10
)

// readTask returns the entry's task for GetTask, which may share it
// (taskstore.Tasks.GetTask). A finished task read a second time keeps its
// decoded tree while it is among the last cachedTasks so read, and its
// reads return that tree itself, which nothing changes: a write decodes a
// tree of its own (live). A task read once, as most are, costs one
// decoding, and a running task's tree, which writes change, a copy.
// Callers hold s.mu.
func (s *Store) readTask(e *entry) (*a2a.Task, error) {
	if d := e.decoded.Load(); d != nil && e.task == nil {
		return d, nil
	}
	if e.task == nil && len(e.packed) > cachedTaskBytes {
		return s.readLarge(e)
	}
	if e.task != nil || !e.readOnce.Swap(true) {
		return e.copyTask()
	}
	t, err := unpackTask(e.packed)
	if err != nil {
		return nil, err
	}
	t.Generation = taskstore.Generation(e.seq)
	s.readMu.Lock()
	if old := s.readRing[s.readNext]; old != nil {
		old.decoded.Store(nil)
	}
	s.readRing[s.readNext] = e
	s.readNext = (s.readNext + 1) % len(s.readRing)
	e.decoded.Store(t)
	s.readMu.Unlock()
	return t, nil
}

// readLarge returns the decoded tree of a large packed task for GetTask:
// the one an answer still holds, if any, else a new one, decoded once for
// the readers that arrive together (share.Group, keyed by the entry
// without keeping it). So many calls reading one large task at once (say,
// clients that do not take their answers) hold one tree of it, not one
// each, the store keeps none once the answers are gone, and reads of
// different tasks decode at once. Callers hold s.mu; a write (live), which
// holds it for writing, forgets the tree.
func (s *Store) readLarge(e *entry) (*a2a.Task, error) {
	return s.large.Do(context.Background(), weak.Make(e), func() (*a2a.Task, bool, error) {
		t, err := unpackLarge(e.packed)
		if err != nil {
			return nil, false, err
		}
		t.Generation = taskstore.Generation(e.seq)
		return t, true, nil
	})
}

// unpackLarge decodes a large packed task (readLarge); a variable for the
// tests, which watch the decodings.
var unpackLarge = unpackTask

// unpackTask decodes a packed task.
func unpackTask(b []byte) (*a2a.Task, error) {
	t := new(a2a.Task)
	if err := proto.Unmarshal(b, t); err != nil {
		return nil, fmt.Errorf("memstore: decode a finished task: %w", err)
	}
	return t, nil
}
