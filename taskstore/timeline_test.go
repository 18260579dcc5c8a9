package taskstore_test

import (
	"fmt"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
)

// sampleLog returns a task's log: its creation, a turn that streams
// artifact a beside b and asks for input, a follow-up that replaces a and
// completes; and its makers of a client message and a status update.
func sampleLog() (msg func(string) *a2a.StreamResponse, status func(a2a.TaskState) *a2a.StreamResponse, log []*a2a.StreamResponse) {
	msg = func(text string) *a2a.StreamResponse { return taskstore.ClientMessage(a2a.UserMessage(text)) }
	status = func(st a2a.TaskState) *a2a.StreamResponse {
		return &a2a.StreamResponse{Payload: &a2a.StreamResponse_StatusUpdate{StatusUpdate: &a2a.TaskStatusUpdateEvent{Status: &a2a.TaskStatus{State: st}}}}
	}
	chunk := func(id string, appendTo, last bool) *a2a.StreamResponse {
		return &a2a.StreamResponse{Payload: &a2a.StreamResponse_ArtifactUpdate{ArtifactUpdate: &a2a.TaskArtifactUpdateEvent{
			Artifact: &a2a.Artifact{ArtifactId: id, Parts: []*a2a.Part{a2a.TextPart("x")}}, Append: appendTo, LastChunk: last}}}
	}
	created := &a2a.StreamResponse{Payload: &a2a.StreamResponse_Task{Task: &a2a.Task{Id: "t",
		Status: &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_SUBMITTED}, History: []*a2a.Message{a2a.UserMessage("hi")}}}}
	return msg, status, []*a2a.StreamResponse{
		created,                                         // 1
		status(a2a.TaskState_TASK_STATE_WORKING),        // 2
		chunk("a", false, false),                        // 3
		chunk("b", false, false),                        // 4
		chunk("a", true, true),                          // 5
		status(a2a.TaskState_TASK_STATE_INPUT_REQUIRED), // 6
		msg("more"),                                     // 7
		chunk("a", false, false),                        // 8: a replaced, streaming again
		status(a2a.TaskState_TASK_STATE_COMPLETED),      // 9
	}
}

// TestFold: a log folded into a base in pieces, each piece as a prune
// removes it (decoded, or encoded, a piece again included as a repeated
// fold), then read from the base with the events after it, is the
// timeline of the whole log at every cut; a base that does not decode
// and an event that does not decode are errors.
func TestFold(t *testing.T) {
	_, _, log := sampleLog()
	var whole taskstore.Timeline
	evs := make([]a2a.StreamEvent, len(log))
	for i, r := range log {
		evs[i] = a2a.StreamEvent{Seq: uint64(i + 1), Response: r}
		whole.Add(evs[i])
	}
	for _, encoded := range []bool{false, true} {
		for _, cuts := range [][]int{{9}, {1, 9}, {3, 5, 8}, {2, 2, 6, 7}} {
			var base []byte
			from := 0
			for _, cut := range cuts {
				base = foldPiece(t, base, evs[max(from-1, 0):cut], func() bool { return encoded })
				from = cut
			}
			checkBase(t, fmt.Sprintf("encoded %v, cuts %v", encoded, cuts), base, uint64(from), evs, &whole)
		}
	}
	if _, err := taskstore.NewFold([]byte("not a base")); err == nil {
		t.Error("NewFold onto bytes that are no base: no error")
	}
	f, _ := taskstore.NewFold(nil)
	if err := f.AddEncoded(1, []byte("not an event")); err == nil {
		t.Error("AddEncoded of bytes that are no event: no error")
	}
}

// TestTimeline: the entries and artifact spans a log gives, event by
// event: the creating message at 1 (its SUBMITTED no entry), a status per
// status update, a client message per follow-up; an artifact without an
// end while it streams, ended by lastChunk, its start kept when it is
// replaced, and every open one ended at a terminal state.
func TestTimeline(t *testing.T) {
	msg, status, log := sampleLog()
	var tl taskstore.Timeline
	spans := func() [][2]int64 {
		a, b := tl.Span("a"), tl.Span("b")
		return [][2]int64{{a.Start, a.End}, {b.Start, b.End}}
	}
	for i, ev := range log {
		tl.Add(a2a.StreamEvent{Seq: uint64(i + 1), Response: ev})
		switch i + 1 {
		case 4:
			if got := spans(); !slices.Equal(got, [][2]int64{{3, 0}, {4, 0}}) {
				t.Errorf("while streaming: spans %v, want no end", got)
			}
		case 8:
			if got := spans(); !slices.Equal(got, [][2]int64{{3, 0}, {4, 0}}) {
				t.Errorf("a replaced: spans %v, want a [3 0] (its start kept), b still open", got)
			}
		}
	}
	if got := spans(); !slices.Equal(got, [][2]int64{{3, 8}, {4, 4}}) {
		t.Errorf("at COMPLETED: spans %v, want a [3 8], b [4 4]", got)
	}
	var kinds []string
	var gens []int64
	for _, e := range tl.Entries {
		k := e.GetStatus().GetState().String()
		if m := e.GetMessage(); m != nil {
			k = "message:" + a2a.FirstText(m)
		}
		kinds = append(kinds, k)
		gens = append(gens, e.GetGeneration())
	}
	wantKinds := []string{"message:hi", "TASK_STATE_WORKING", "TASK_STATE_INPUT_REQUIRED", "message:more", "TASK_STATE_COMPLETED"}
	if !slices.Equal(kinds, wantKinds) || !slices.Equal(gens, []int64{1, 2, 6, 7, 9}) {
		t.Errorf("entries %v at %v; want %v at [1 2 6 7 9]", kinds, gens, wantKinds)
	}
	for _, c := range []struct {
		n    *int32
		want int
	}{{nil, 5}, {proto.Int32(0), 0}, {proto.Int32(2), 2}, {proto.Int32(9), 5}} {
		if got := tl.Last(c.n); len(got) != c.want || (c.want > 0 && got[len(got)-1].GetGeneration() != 9) {
			t.Errorf("Last(%v): %d entries, want the last %d", c.n, len(got), c.want)
		}
	}
	if !taskstore.IsClientMessage(msg("x")) || taskstore.IsClientMessage(status(a2a.TaskState_TASK_STATE_WORKING)) {
		t.Error("IsClientMessage")
	}
}

// TestTimelineKeep: with Keep set, a long log's timeline holds about the
// last Keep entries while it is read (not every entry of the log), and
// Last answers the same entries as without Keep.
func TestTimelineKeep(t *testing.T) {
	const n = 10000
	status := &a2a.StreamResponse{Payload: &a2a.StreamResponse_StatusUpdate{StatusUpdate: &a2a.TaskStatusUpdateEvent{
		Status: &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_WORKING}}}}
	for _, keep := range []int32{0, 1, 3, 200} {
		all, kept := taskstore.Timeline{}, taskstore.Timeline{Keep: proto.Int32(keep)}
		most := 0
		for seq := uint64(2); seq <= n; seq++ {
			all.Add(a2a.StreamEvent{Seq: seq, Response: status})
			kept.Add(a2a.StreamEvent{Seq: seq, Response: status})
			most = max(most, cap(kept.Entries))
		}
		if bound := 4*int(keep) + 256; most > bound {
			t.Errorf("Keep %d: held up to %d entries' room while reading %d, want at most %d", keep, most, n, bound)
		}
		got, want := kept.Last(proto.Int32(keep)), all.Last(proto.Int32(keep))
		if !slices.EqualFunc(got, want, func(a, b *a2a.TimelineEntry) bool { return a.GetGeneration() == b.GetGeneration() }) {
			t.Errorf("Keep %d: Last gave %d entries, want the %d of the whole timeline", keep, len(got), len(want))
		}
	}
}
