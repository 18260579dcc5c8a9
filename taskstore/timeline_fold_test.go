package taskstore_test

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
)

// randomLog returns a task's log of n events after its creation, of every
// kind a timeline reads: client messages, status updates with and without
// a message (terminal ones too, and updates after them), a whole task
// logged again, and updates of three artifacts that append, replace and
// say lastChunk, in any order.
func randomLog(r *rand.Rand, n int) []*a2a.StreamResponse {
	states := []a2a.TaskState{a2a.TaskState_TASK_STATE_WORKING, a2a.TaskState_TASK_STATE_INPUT_REQUIRED,
		a2a.TaskState_TASK_STATE_COMPLETED, a2a.TaskState_TASK_STATE_FAILED}
	status := func(i int) *a2a.TaskStatus {
		st := &a2a.TaskStatus{State: states[r.IntN(len(states))]}
		if r.IntN(2) == 0 {
			st.Message = &a2a.Message{MessageId: fmt.Sprint("s", i), Role: a2a.Role_ROLE_AGENT, Parts: []*a2a.Part{a2a.TextPart("x")}}
		}
		return st
	}
	ids := []string{"a", "b", ""}
	created := &a2a.Task{Id: "t", Status: &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_SUBMITTED}}
	for i := range r.IntN(3) {
		created.History = append(created.History, a2a.UserMessage(fmt.Sprint("hi ", i)))
	}
	for _, id := range ids[:r.IntN(2)] {
		created.Artifacts = append(created.Artifacts, &a2a.Artifact{ArtifactId: id})
	}
	log := []*a2a.StreamResponse{{Payload: &a2a.StreamResponse_Task{Task: created}}}
	for i := range n {
		var ev *a2a.StreamResponse
		switch k := r.IntN(10); {
		case k == 0:
			ev = taskstore.ClientMessage(a2a.UserMessage(fmt.Sprint("more ", i)))
		case k < 3:
			ev = &a2a.StreamResponse{Payload: &a2a.StreamResponse_StatusUpdate{StatusUpdate: &a2a.TaskStatusUpdateEvent{TaskId: "t", Status: status(i)}}}
		case k == 3:
			ev = &a2a.StreamResponse{Payload: &a2a.StreamResponse_Task{Task: &a2a.Task{Id: "t", Status: status(i)}}}
		default:
			ev = &a2a.StreamResponse{Payload: &a2a.StreamResponse_ArtifactUpdate{ArtifactUpdate: &a2a.TaskArtifactUpdateEvent{
				TaskId: "t", Append: r.IntN(3) > 0, LastChunk: r.IntN(4) == 0,
				Artifact: &a2a.Artifact{ArtifactId: ids[r.IntN(len(ids))], Parts: []*a2a.Part{a2a.TextPart("chunk")}}}}}
		}
		log = append(log, ev)
	}
	return log
}

// TestFoldRandom: logs of every shape (randomLog), folded into a base in
// pieces at random cuts, each event decoded or encoded at random and a
// piece sometimes folded again with the one before, read from the base
// and the events after it as the timeline of the whole log at every cut:
// its entries and every artifact's span.
func TestFoldRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for round := range 300 {
		log := randomLog(r, r.IntN(40))
		evs := make([]a2a.StreamEvent, len(log))
		var whole taskstore.Timeline
		for i, resp := range log {
			evs[i] = a2a.StreamEvent{Seq: uint64(i + 1), Response: resp}
			whole.Add(evs[i])
		}
		var base []byte
		done := 0 // events in the base
		for done < len(evs) {
			cut := done + 1 + r.IntN(len(evs)-done)
			from := done
			if from > 0 && r.IntN(3) == 0 {
				from = r.IntN(from) // again, from an event the base holds
			}
			base = foldPiece(t, base, evs[from:cut], func() bool { return r.IntN(2) == 0 })
			done = cut
			checkBase(t, fmt.Sprintf("round %d, base to %d of %d", round, done, len(evs)), base, uint64(done), evs, &whole)
		}
	}
}

// foldPiece returns base with evs folded in, each encoded when enc says.
func foldPiece(t *testing.T, base []byte, evs []a2a.StreamEvent, enc func() bool) []byte {
	t.Helper()
	f, err := taskstore.NewFold(base)
	if err != nil {
		t.Fatalf("NewFold: %v", err)
	}
	for _, ev := range evs {
		if !enc() {
			f.Add(ev)
			continue
		}
		b, err := proto.Marshal(ev.Response)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.AddEncoded(ev.Seq, b); err != nil {
			t.Fatalf("AddEncoded %d: %v", ev.Seq, err)
		}
	}
	if base, err = f.Base(); err != nil {
		t.Fatalf("Base: %v", err)
	}
	return base
}

// checkBase fails t unless base holds the events to upto and reads, with
// the events of evs after it, as whole, the timeline of all of evs.
func checkBase(t *testing.T, what string, base []byte, upto uint64, evs []a2a.StreamEvent, whole *taskstore.Timeline) {
	t.Helper()
	var got taskstore.Timeline
	after, err := got.Start(base)
	if err != nil || after != upto {
		t.Fatalf("%s: Start = %d, %v; want %d", what, after, err, upto)
	}
	for _, ev := range evs[after:] {
		got.Add(ev)
	}
	if !slices.EqualFunc(got.Entries, whole.Entries, func(a, b *a2a.TimelineEntry) bool { return proto.Equal(a, b) }) ||
		!maps.Equal(got.Spans, whole.Spans) {
		t.Errorf("%s: timeline %v, spans %v; want %v, %v", what, got.Entries, got.Spans, whole.Entries, whole.Spans)
	}
}

// TestFoldLostStart: a fold whose events do not start right after its
// base (a log pruned without a base, by a Parley before this one, or an
// event skipped) keeps a base that reads as no timeline (ErrTimelineLost,
// an ErrPruned), up to its last event, however many folds follow; a fold
// of the events that follow on is not lost.
func TestFoldLostStart(t *testing.T) {
	_, _, log := sampleLog()
	fold := func(base []byte, from, to int) []byte {
		t.Helper()
		f, err := taskstore.NewFold(base)
		if err != nil {
			t.Fatalf("NewFold: %v", err)
		}
		for i := from; i <= to; i++ {
			f.Add(a2a.StreamEvent{Seq: uint64(i), Response: log[i-1]})
		}
		b, err := f.Base()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, c := range []struct {
		what string
		base []byte
	}{
		{"events 3 to 5 without a base", fold(nil, 3, 5)},
		{"events 1 to 2, then 4 to 5", fold(fold(nil, 1, 2), 4, 5)},
		{"events 3 to 4 without a base, then 5", fold(fold(nil, 3, 4), 5, 5)},
		{"events 2 to 3 without a base, then 1 to 5", fold(fold(nil, 2, 3), 1, 5)},
	} {
		var tl taskstore.Timeline
		after, err := tl.Start(c.base)
		if !errors.Is(err, taskstore.ErrTimelineLost) || !errors.Is(err, taskstore.ErrPruned) || after != 5 || len(tl.Entries) != 0 {
			t.Errorf("%s: Start = %d, %v, %d entries; want 5, ErrTimelineLost, none", c.what, after, err, len(tl.Entries))
		}
	}
	var tl taskstore.Timeline
	if after, err := tl.Start(fold(fold(nil, 1, 2), 3, 5)); err != nil || after != 5 {
		t.Errorf("events 1 to 2, then 3 to 5: Start = %d, %v; want 5, nil", after, err)
	}
}
