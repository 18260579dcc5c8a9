package taskstore

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"parley.dev/parley/a2a"
)

// A task's timeline (the A2A 1.1 preview, spec PR #2129 §3.2.8) and the
// generations of its artifacts are read from its event log, where every
// change is one event numbered by its generation (see Generation), so
// they survive restarts and replicas as the log does. The log is pruned
// (PruneEvents, the resume window), but its timeline is not: the prune
// folds what the events it removes say of the timeline into the task's
// timeline base (Fold), in the same atomic write, and a timeline is
// the base and the events after it (Timeline.Start). The base keeps the
// entries (client messages and statuses) for the task's life, and of the
// artifacts their spans alone, not their chunks.
//
// What the specification leaves open, decided here:
//   - The event that makes the task (a Task, generation 1) gives one
//     message entry per message of its history, the client's message that
//     made it, at generation 1. Its status (SUBMITTED) is no entry: a
//     status entry is a status update (a TaskStatusUpdateEvent), and one
//     change is one entry.
//   - A Task event later in the log (a whole task replaced) gives a status
//     entry of its status.
//   - An artifact's start generation is that of the first update of its
//     id; an update that replaces it (without append) keeps the start, as
//     the artifact first appeared then, and takes its end back. Its end is
//     the generation of the update that says lastChunk, or, when none did,
//     that of its last update once the task is terminal (it can change no
//     more); until then it has none (0, absent on the wire).

// Span is where an artifact lies among a task's generations: the first
// and, once it is complete, the last (0 while it still streams).
type Span struct{ Start, End int64 }

// Timeline is what a task's log says of its order: the timeline entries,
// in generation order, and the span of each artifact by id.
type Timeline struct {
	Entries []*a2a.TimelineEntry
	Spans   map[string]Span
	// Keep, when not nil, is how many of the last entries the caller
	// wants (timelineLength, §3.2.8): Add then holds no more than about
	// twice that many, dropping older ones, so that reading a long log
	// for its last few entries holds those, not every entry of the log.
	// Nil keeps every entry.
	Keep *int32
}

// keepSlack is how many entries past twice Keep Add lets pile up before
// it drops the older ones (at least this many entries are appended
// between two copies, so dropping costs O(1) per entry).
const keepSlack = 64

// Add folds the next logged event of the task into tl. The entries share
// the event's message and status (events are immutable).
func (tl *Timeline) Add(ev a2a.StreamEvent) {
	gen := Generation(ev.Seq)
	switch p := ev.Response.GetPayload().(type) {
	case *a2a.StreamResponse_Message:
		tl.entry(&a2a.TimelineEntry{Entry: &a2a.TimelineEntry_Message{Message: p.Message}, Generation: gen})
	case *a2a.StreamResponse_StatusUpdate:
		st := p.StatusUpdate.GetStatus()
		tl.entry(&a2a.TimelineEntry{Entry: &a2a.TimelineEntry_Status{Status: st}, Generation: gen})
		tl.ended(st.GetState())
	case *a2a.StreamResponse_Task:
		if gen > 1 {
			st := p.Task.GetStatus()
			tl.entry(&a2a.TimelineEntry{Entry: &a2a.TimelineEntry_Status{Status: st}, Generation: gen})
			tl.ended(st.GetState())
			return
		}
		for _, m := range p.Task.GetHistory() {
			tl.entry(&a2a.TimelineEntry{Entry: &a2a.TimelineEntry_Message{Message: m}, Generation: gen})
		}
		for _, a := range p.Task.GetArtifacts() {
			tl.span(a.GetArtifactId(), gen, false)
		}
	case *a2a.StreamResponse_ArtifactUpdate:
		u := p.ArtifactUpdate
		tl.span(u.GetArtifact().GetArtifactId(), gen, u.GetLastChunk())
	}
}

// entry appends e, then, past twice Keep entries (and keepSlack), drops
// all but the last Keep into a new array, so the dropped ones and their
// messages can be collected.
func (tl *Timeline) entry(e *a2a.TimelineEntry) {
	tl.Entries = append(tl.Entries, e)
	if tl.Keep == nil {
		return
	}
	k := int(max(*tl.Keep, 0))
	if len(tl.Entries) >= 2*k+keepSlack {
		tl.Entries = append([]*a2a.TimelineEntry(nil), tl.Entries[len(tl.Entries)-k:]...)
	}
}

// span records an update of artifact id at gen, the last one when last.
func (tl *Timeline) span(id string, gen int64, last bool) {
	if tl.Spans == nil {
		tl.Spans = map[string]Span{}
	}
	sp, ok := tl.Spans[id]
	if !ok {
		sp.Start = gen
	}
	sp.End = -gen // the last update so far, not complete
	if last {
		sp.End = gen
	}
	tl.Spans[id] = sp
}

// ended completes, at a terminal state, the artifacts no update completed:
// each ends at its last update.
func (tl *Timeline) ended(st a2a.TaskState) {
	if !a2a.IsTerminal(st) {
		return
	}
	for id, sp := range tl.Spans {
		if sp.End < 0 {
			sp.End = -sp.End
			tl.Spans[id] = sp
		}
	}
}

// Span returns the span of artifact id (zero when the log does not say).
func (tl *Timeline) Span(id string) Span {
	sp := tl.Spans[id]
	if sp.End < 0 {
		sp.End = 0 // still streaming
	}
	return sp
}

// Last returns the last n entries (all of them when n is nil, none for 0).
func (tl *Timeline) Last(n *int32) []*a2a.TimelineEntry {
	switch {
	case n == nil:
		return tl.Entries
	case *n <= 0:
		return nil
	case int(*n) < len(tl.Entries):
		return tl.Entries[len(tl.Entries)-int(*n):]
	}
	return tl.Entries
}

// Fold folds the events a prune removes from a task's log into the
// task's timeline base: NewFold of the base kept so far, Add or
// AddEncoded for each event removed, oldest first, then Base for the
// base to keep. An event the base already holds (numbered at or before
// its last) is passed over, so a fold that is repeated changes nothing.
// A fold whose events do not follow on from its base (from the first
// event, when there is no base) has lost the timeline's start: pruned
// without a base by a Parley before this one, or an event that did not
// decode. Its base then holds no timeline, and says so (Timeline.Start
// returns ErrTimelineLost) for the task's life, rather than a timeline
// that misses entries.
//
// A base is encoded as an a2a.Task holding the generation of the last
// event folded into it, every entry of the timeline, and one artifact per
// span: its id and generations (an end below zero is the generation of
// the last update of an artifact not complete yet, as Spans holds it); a
// base that lost the timeline's start, as an a2a.Task holding minus the
// generation of the last event folded into it, and nothing else.
type Fold struct {
	tl   Timeline
	seq  uint64 // the last event folded
	lost bool   // the timeline's start is lost: tl is empty
}

// NewFold starts a fold onto base (empty: none yet).
func NewFold(base []byte) (*Fold, error) {
	f := &Fold{}
	seq, err := f.tl.Start(base)
	f.seq = seq
	if errors.Is(err, ErrTimelineLost) {
		f.lost, err = true, nil
	}
	return f, err
}

// next reports whether event seq is to be folded in: not one the base
// holds already, nor one of a fold that lost the timeline's start, which
// it loses when seq does not follow the last event folded.
func (f *Fold) next(seq uint64) bool {
	if seq <= f.seq {
		return false
	}
	if seq != f.seq+1 && !f.lost {
		f.lost, f.tl = true, Timeline{}
	}
	if f.lost {
		f.seq = seq
		return false
	}
	return true
}

// Add folds ev in.
func (f *Fold) Add(ev a2a.StreamEvent) {
	if f.next(ev.Seq) {
		f.tl.Add(ev)
		f.seq = ev.Seq
	}
}

// AddEncoded folds in event seq, encoded as b (an a2a.StreamResponse). It
// reads of an artifact update, which the chunks of a long stream are, only
// its artifact's id and lastChunk, from a scan of its bytes; any other
// event it decodes. An event that does not decode is an error, and is
// not folded.
func (f *Fold) AddEncoded(seq uint64, b []byte) error {
	if !f.next(seq) {
		return nil
	}
	id, last, ok, err := scanArtifactUpdate(b)
	switch {
	case err != nil:
		return err
	case ok:
		f.tl.span(id, Generation(seq), last)
	default:
		r := new(a2a.StreamResponse)
		if err := proto.Unmarshal(b, r); err != nil {
			return err
		}
		f.tl.Add(a2a.StreamEvent{Seq: seq, Response: r})
	}
	f.seq = seq
	return nil
}

// Base returns the base with every event added.
func (f *Fold) Base() ([]byte, error) {
	if f.lost {
		return proto.Marshal(&a2a.Task{Generation: -Generation(f.seq)})
	}
	b := &a2a.Task{Generation: Generation(f.seq), Timeline: f.tl.Entries}
	for _, id := range slices.Sorted(maps.Keys(f.tl.Spans)) {
		sp := f.tl.Spans[id]
		b.Artifacts = append(b.Artifacts, &a2a.Artifact{ArtifactId: id, StartGeneration: sp.Start, EndGeneration: sp.End})
	}
	return proto.Marshal(b)
}

// ErrTimelineLost is returned by Timeline.Start for a base that lost the
// timeline's start (see Fold): the task has no timeline. It is an
// ErrPruned.
var ErrTimelineLost = fmt.Errorf("%w: the timeline's start is lost", ErrPruned)

// Start makes tl the timeline base base (empty: none, tl is left empty) and
// returns the sequence number of the last event the base holds: the
// task's timeline is tl once the logged events after it are added. For a
// base that lost the timeline's start it returns that number and
// ErrTimelineLost, tl left empty.
func (tl *Timeline) Start(base []byte) (uint64, error) {
	if len(base) == 0 {
		return 0, nil
	}
	var b a2a.Task
	if err := proto.Unmarshal(base, &b); err != nil {
		return 0, fmt.Errorf("taskstore: timeline base: %w", err)
	}
	if b.Generation < 0 {
		return uint64(-b.Generation), ErrTimelineLost
	}
	tl.Entries = b.Timeline
	tl.Spans = make(map[string]Span, len(b.Artifacts))
	for _, a := range b.Artifacts {
		tl.Spans[a.ArtifactId] = Span{Start: a.StartGeneration, End: a.EndGeneration}
	}
	return uint64(b.Generation), nil
}

// The fields scanArtifactUpdate reads: the members of a2a.StreamResponse's
// payload (artifact_update among them), TaskArtifactUpdateEvent's
// artifact and last_chunk, and Artifact's artifact_id.
var (
	payloadFields       = (&a2a.StreamResponse{}).ProtoReflect().Descriptor().Oneofs().ByName("payload").Fields()
	fieldArtifactUpdate = fieldNumber(&a2a.StreamResponse{}, "artifact_update")
	fieldArtifact       = fieldNumber(&a2a.TaskArtifactUpdateEvent{}, "artifact")
	fieldLastChunk      = fieldNumber(&a2a.TaskArtifactUpdateEvent{}, "last_chunk")
	fieldArtifactID     = fieldNumber(&a2a.Artifact{}, "artifact_id")
)

// fieldNumber returns the number of m's field of the name.
func fieldNumber(m proto.Message, name protoreflect.Name) protowire.Number {
	return m.ProtoReflect().Descriptor().Fields().ByName(name).Number()
}

// scanArtifactUpdate reads b, an encoded a2a.StreamResponse, as an
// artifact update (ok) or not: its artifact's id and lastChunk, without
// decoding the rest. It reads them as proto.Unmarshal does: the last
// member of the payload on the wire is the one set, and a member (or an
// artifact) that occurs more than once in a row is the merge of its
// occurrences, each field's last value winning.
func scanArtifactUpdate(b []byte) (id string, last, ok bool, err error) {
	var updates [][]byte // the occurrences of the update, in order
	err = eachField(b, func(num protowire.Number, typ protowire.Type, v []byte) error {
		switch {
		case num == fieldArtifactUpdate && typ == protowire.BytesType:
			u, _ := protowire.ConsumeBytes(v)
			updates = append(updates, u)
		case typ == protowire.BytesType && payloadFields.ByNumber(num) != nil:
			// Another member (each is a message; of another wire type it
			// is an unknown field): the update is gone.
			updates = updates[:0]
		}
		return nil
	})
	if err != nil || len(updates) == 0 {
		return "", false, false, err
	}
	for _, u := range updates {
		err = eachField(u, func(num protowire.Number, typ protowire.Type, v []byte) error {
			switch {
			case num == fieldLastChunk && typ == protowire.VarintType:
				x, _ := protowire.ConsumeVarint(v)
				last = x != 0
			case num == fieldArtifact && typ == protowire.BytesType:
				a, _ := protowire.ConsumeBytes(v)
				return eachField(a, func(num protowire.Number, typ protowire.Type, v []byte) error {
					if num == fieldArtifactID && typ == protowire.BytesType {
						s, _ := protowire.ConsumeBytes(v)
						id = string(s)
					}
					return nil
				})
			}
			return nil
		})
		if err != nil {
			return "", false, false, err
		}
	}
	return id, last, true, nil
}

// eachField calls fn with the number, type and encoded value of each
// field of the message encoded in b, in order (a later value of a field
// wins, as proto.Unmarshal has it).
func eachField(b []byte, fn func(num protowire.Number, typ protowire.Type, v []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return protowire.ParseError(m)
		}
		if err := fn(num, typ, b[n:n+m]); err != nil {
			return err
		}
		b = b[n+m:]
	}
	return nil
}
