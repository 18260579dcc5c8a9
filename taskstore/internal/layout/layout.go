// Package layout encodes a task into the pieces the SQL stores keep
// (sqlitestore, pgstore) and folds them back: the header row, one row per
// history message and one per artifact update ("chunk"; one per artifact
// for the updates of a pipelined run, EncodeRun), so that an event costs a
// few small writes whatever the size of the task. Every payload is
// protobuf binary.
package layout

import (
	"errors"
	"fmt"
	"slices"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/internal/order"
)

// Header is the tasks row of a task, encoded: Data is the task without
// its status, history and artifacts; Status is nil when the task has none;
// the other fields are the columns ListTasks sorts and filters on.
type Header struct {
	Data, Status []byte
	ContextID    string
	State        int32
	StatusMS     int64
}

// EncodeHeader returns the header of t.
func EncodeHeader(t *a2a.Task) (Header, error) { return encodeHeader(t, false) }

// encodeHeader returns the header of t, with t's history and artifacts in
// its data when whole.
func encodeHeader(t *a2a.Task, whole bool) (Header, error) {
	h := Header{ContextID: t.GetContextId(), State: int32(t.GetStatus().GetState()), StatusMS: order.StatusMillis(t)}
	data := &a2a.Task{Id: t.GetId(), ContextId: t.GetContextId(), Metadata: t.GetMetadata()}
	if whole {
		data.History, data.Artifacts = t.GetHistory(), t.GetArtifacts()
	}
	var err error
	if h.Data, err = Marshal(data); err != nil {
		return h, err
	}
	if t.Status != nil {
		if h.Status, err = Marshal(t.Status); err != nil {
			return h, err
		}
	}
	return h, nil
}

// EncodedChunk is one artifact row: the artifact id, whether the chunk is
// appended, and the chunk (an Artifact), encoded.
type EncodedChunk struct {
	ID       string
	AppendTo bool
	Data     []byte
}

// Parts is a task's history and artifacts, encoded one row each.
type Parts struct {
	History   [][]byte
	Artifacts []EncodedChunk
}

// EncodeParts encodes a task's history and artifacts, one row each.
func EncodeParts(t *a2a.Task) (Parts, error) {
	var p Parts
	for _, m := range t.GetHistory() {
		b, err := Marshal(m)
		if err != nil {
			return p, err
		}
		p.History = append(p.History, b)
	}
	for _, a := range t.GetArtifacts() {
		b, err := Marshal(a)
		if err != nil {
			return p, err
		}
		p.Artifacts = append(p.Artifacts, EncodedChunk{ID: a.GetArtifactId(), Data: b})
	}
	return p, nil
}

// Chunk is one artifact row, decoded.
type Chunk struct {
	AppendTo bool
	A        *a2a.Artifact
}

// FoldArtifacts folds a task's chunks, in row order, into its artifacts by
// the rule of taskstore.Apply: an appended chunk adds its parts to the
// artifact with its id, another replaces it, a new id starts an artifact.
func FoldArtifacts(chunks []Chunk) []*a2a.Artifact {
	if len(chunks) == 0 {
		return nil
	}
	var out []*a2a.Artifact
	at := make(map[string]int, 4)
	for _, c := range chunks {
		id := c.A.GetArtifactId()
		i, known := at[id]
		switch {
		case !known:
			at[id] = len(out)
			out = append(out, c.A)
		case c.AppendTo:
			a2a.AppendChunk(out[i], c.A)
		default:
			out[i] = c.A
		}
	}
	return out
}

// Marshal encodes m; an empty message is an empty, not a nil, slice, so
// that it is stored as an empty value rather than NULL.
func Marshal(m proto.Message) ([]byte, error) {
	b, err := proto.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	if b == nil {
		b = []byte{}
	}
	return b, nil
}

// Append is what one taskstore Append writes, encoded before the store's
// transaction starts.
type Append struct {
	Event  []byte        // the logged event; nil for a message alone
	Msg    []byte        // a history message without an event (a follow-up)
	Hist   []byte        // a status update's message, added to the history
	Status *Header       // a status update: the header's status columns
	Chunk  *EncodedChunk // an artifact update
	Task   *Header       // a Task event, which replaces everything: its header
	Parts  Parts         // and its history and chunks
	// Joined is an artifact update without a Chunk of its own: an earlier
	// event of its run carries it, joined (EncodeRun).
	Joined bool
}

// ErrNoArtifact refuses an artifact update without an artifact, which no
// task could hold.
var ErrNoArtifact = errors.New("artifact update without an artifact")

// EncodeAppend encodes what an Append of ev writes.
func EncodeAppend(ev taskstore.Event) (Append, error) {
	u := ev.Response.GetArtifactUpdate()
	return encodeAppend(ev, u.GetArtifact(), u.GetAppend())
}

// encodeAppend is EncodeAppend with the chunk an artifact update writes:
// the artifact, and whether it is appended; a nil artifact when another
// event of its run carries it (Joined).
func encodeAppend(ev taskstore.Event, chunk *a2a.Artifact, appendTo bool) (Append, error) {
	var a Append
	var err error
	if ev.Message != nil {
		if a.Msg, err = Marshal(ev.Message); err != nil {
			return a, err
		}
	}
	if ev.Response == nil {
		return a, nil
	}
	if a.Event, err = Marshal(ev.Response); err != nil {
		return a, err
	}
	switch p := ev.Response.GetPayload().(type) {
	case *a2a.StreamResponse_StatusUpdate:
		st := p.StatusUpdate.GetStatus()
		h, err := EncodeHeader(&a2a.Task{Status: st})
		if err != nil {
			return a, err
		}
		a.Status = &h
		if m := st.GetMessage(); m != nil {
			if a.Hist, err = Marshal(m); err != nil {
				return a, err
			}
		}
	case *a2a.StreamResponse_ArtifactUpdate:
		u := p.ArtifactUpdate
		switch {
		case u.GetArtifact() == nil:
			return a, ErrNoArtifact
		case chunk == nil:
			a.Joined = true
			return a, nil
		}
		b, err := Marshal(chunk)
		if err != nil {
			return a, err
		}
		a.Chunk = &EncodedChunk{ID: chunk.GetArtifactId(), AppendTo: appendTo, Data: b}
	case *a2a.StreamResponse_Task:
		h, err := EncodeHeader(p.Task)
		if err != nil {
			return a, err
		}
		a.Task = &h
		if a.Parts, err = EncodeParts(p.Task); err != nil {
			return a, err
		}
	}
	return a, nil
}

// applyCopy returns a copy of t that taskstore.Apply may change without
// changing t: its own lists, and copies of its artifacts, which an
// appended chunk changes in place. It shares the status, the messages and
// the metadata, which Apply replaces but never changes (events are
// immutable). It holds what EncodeHeader and EncodeParts read, every
// field of a Task.
func applyCopy(t *a2a.Task) *a2a.Task {
	c := &a2a.Task{Id: t.Id, ContextId: t.ContextId, Status: t.Status, Metadata: t.Metadata,
		History: slices.Clone(t.History), Artifacts: make([]*a2a.Artifact, len(t.Artifacts))}
	for i, a := range t.Artifacts {
		c.Artifacts[i] = a2a.CloneArtifact(a)
	}
	return c
}

// ListFilter says which optional conditions a ListTasks query has. The
// SQL stores pick a query (and an index) by it, and their task counters
// are keyed by its WithContext and WithState bits.
type ListFilter uint8

// The conditions of a ListFilter.
const (
	WithContext ListFilter = 1 << iota
	WithState
	WithSince
	WithAfter
)

// FilterOf returns the conditions q asks for.
func FilterOf(q taskstore.ListQuery) ListFilter {
	var f ListFilter
	if q.ContextID != "" {
		f |= WithContext
	}
	if q.State != a2a.TaskState_TASK_STATE_UNSPECIFIED {
		f |= WithState
	}
	if !q.Since.IsZero() {
		f |= WithSince
	}
	if q.After != nil {
		f |= WithAfter
	}
	return f
}

// Create is what one taskstore CreateTask or CreateTaskBatch writes,
// encoded before the store's transaction starts: the task as its events
// leave it, and the events to log. The push configuration, which each
// store seals with its own keys, is not part of it.
type Create struct {
	Header Header
	Parts  Parts
	Seq    uint64   // the task's last sequence number
	Events []Logged // the events to log, in order; none for a task made without one
}

// Logged is one event to log, encoded, and whether to queue it in the
// push outbox.
type Logged struct {
	Seq  uint64
	Data []byte
	Push bool
}

// EncodeCreate checks and encodes a CreateTaskBatch of t with evs (a
// CreateTask is a batch of one): the task is t with the events after the
// first applied (taskstore.Apply), so that it is inserted once, as they
// leave it, instead of inserted and then updated.
func EncodeCreate(t *a2a.Task, evs []taskstore.Event) (Create, error) {
	var c Create
	switch {
	case t.GetId() == "":
		return c, errors.New("task has no id")
	case len(evs) == 0:
		return c, errors.New("a task is created by an event")
	}
	if cfg := evs[0].PushConfig; cfg != nil && cfg.GetTaskId() != t.Id {
		return c, errors.New("the push config is not the new task's")
	}
	if err := taskstore.CheckBatch(evs[0].Seq+1, evs[1:]); err != nil {
		return c, err
	}
	if len(evs) > 1 {
		t = applyCopy(t)
	}
	c.Seq = evs[len(evs)-1].Seq
	for i, ev := range evs {
		if i > 0 {
			taskstore.Apply(t, ev.Response)
		}
		if ev.Response == nil {
			continue
		}
		b, err := Marshal(ev.Response)
		if err != nil {
			return c, err
		}
		c.Events = append(c.Events, Logged{Seq: ev.Seq, Data: b, Push: ev.Push})
	}
	// Stored whole: a task that is made finished (a blocking send that
	// completes at once) is not written again, so its history and
	// artifacts go in its header rather than in rows of their own, which
	// cost a SQLite send about a tenth of its CPU. An event that comes
	// after all (a store does not refuse one) adds rows as to any task,
	// and Pieces.Assemble reads them after. A task made unfinished is
	// split, so that its events cost what they change, not what it holds.
	whole := a2a.IsTerminal(t.GetStatus().GetState())
	var err error
	if c.Header, err = encodeHeader(t, whole); err != nil || whole {
		return c, err
	}
	c.Parts, err = EncodeParts(t)
	return c, err
}
