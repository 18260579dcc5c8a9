package a2a

import (
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"
)

// chunkEvent is an artifact update event for the artifact id with one text
// part per text.
func chunkEvent(id string, appendTo, last bool, texts ...string) StreamEvent {
	a := &Artifact{ArtifactId: id}
	for _, t := range texts {
		a.Parts = append(a.Parts, TextPart(t))
	}
	return StreamEvent{Response: &StreamResponse{Payload: &StreamResponse_ArtifactUpdate{ArtifactUpdate: &TaskArtifactUpdateEvent{
		TaskId: "t-1", ContextId: "c-1", Artifact: a, Append: appendTo, LastChunk: last}}}}
}

func TestArtifactAssembler(t *testing.T) {
	t.Parallel()
	type want struct {
		id, text string
		done     bool
	}
	tests := []struct {
		name  string
		evs   []StreamEvent
		order []string
		want  []want
	}{
		{"token chunks join without separators",
			[]StreamEvent{chunkEvent("a", false, false, "Hel"), chunkEvent("a", true, true, "lo")},
			[]string{"a"}, []want{{"a", "Hello", true}}},
		{"append extends",
			[]StreamEvent{chunkEvent("a", false, false, "Once "), chunkEvent("a", true, false, "upon ", "a "), chunkEvent("a", true, false, "time.")},
			[]string{"a"}, []want{{"a", "Once upon a time.", false}}},
		{"no append replaces",
			[]StreamEvent{chunkEvent("a", false, true, "draft"), chunkEvent("a", false, false, "final")},
			[]string{"a"}, []want{{"a", "final", false}}},
		{"append to an unknown id starts it",
			[]StreamEvent{chunkEvent("a", true, false, "orphan")},
			[]string{"a"}, []want{{"a", "orphan", false}}},
		{"first-seen order, interleaved",
			[]StreamEvent{chunkEvent("b", false, false, "B1"), chunkEvent("a", false, false, "A1"),
				chunkEvent("b", true, true, "B2"), chunkEvent("a", false, true, "A2")},
			[]string{"b", "a"}, []want{{"a", "A2", true}, {"b", "B1B2", true}}},
		{"other events ignored",
			[]StreamEvent{{}, statusEvent(StateWorking), chunkEvent("a", false, false, "x"), msgEvent()},
			[]string{"a"}, []want{{"a", "x", false}, {"nope", "", false}}},
		{"snapshot then chunks extend it",
			[]StreamEvent{taskEvent(StateWorking, TextArtifact("a", "Hel")), chunkEvent("a", true, true, "lo")},
			[]string{"a"}, []want{{"a", "Hello", true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var as ArtifactAssembler
			for _, ev := range tt.evs {
				as.Add(ev)
			}
			var order []string
			for _, a := range as.Artifacts() {
				order = append(order, a.GetArtifactId())
			}
			if !slices.Equal(order, tt.order) {
				t.Errorf("Artifacts() ids = %q, want %q", order, tt.order)
			}
			for _, w := range tt.want {
				if got := as.Text(w.id); got != w.text {
					t.Errorf("Text(%q) = %q, want %q", w.id, got, w.text)
				}
				if got := as.Done(w.id); got != w.done {
					t.Errorf("Done(%q) = %v, want %v", w.id, got, w.done)
				}
			}
		})
	}
}

// TestArtifactAssemblerMerge: an appended chunk keeps its parts as sent,
// its name and description replace the artifact's when set, and a snapshot
// makes its artifacts done.
func TestArtifactAssemblerMerge(t *testing.T) {
	t.Parallel()
	var as ArtifactAssembler
	first := &TaskArtifactUpdateEvent{Artifact: &Artifact{ArtifactId: "a", Name: "n1", Description: "d1",
		Parts: []*Part{TextPart("x")}}}
	if got := as.AddChunk(first); got.GetName() != "n1" {
		t.Fatalf("AddChunk(first) = %v, want the artifact named n1", got)
	}
	got := as.AddChunk(&TaskArtifactUpdateEvent{Append: true, Artifact: &Artifact{ArtifactId: "a", Name: "n2",
		Parts: []*Part{TextPart("y"), {Content: &Part_Url{Url: "https://example.com/f"}}}}})
	want := &Artifact{ArtifactId: "a", Name: "n2", Description: "d1",
		Parts: []*Part{TextPart("x"), TextPart("y"), {Content: &Part_Url{Url: "https://example.com/f"}}}}
	if !proto.Equal(got, want) {
		t.Errorf("AddChunk(append) = %v, want %v", got, want)
	}
	if as.Text("a") != "xy" {
		t.Errorf("Text(a) = %q, want %q", as.Text("a"), "xy")
	}
	if as.AddChunk(&TaskArtifactUpdateEvent{}) != nil || as.AddChunk(nil) != nil {
		t.Error("AddChunk(no artifact) != nil")
	}
	if n := len(as.Artifacts()); n != 1 {
		t.Errorf("len(Artifacts()) = %d after updates without artifacts, want 1", n)
	}
	as.Add(taskEvent(StateCompleted, TextArtifact("b", "whole")))
	if !as.Done("b") || as.Artifact("b").GetArtifactId() != "b" {
		t.Errorf("after a snapshot: Done(b) = %v, Artifact(b) = %v", as.Done("b"), as.Artifact("b"))
	}
	if as.Artifact("none") != nil || as.Done("none") {
		t.Error("an unseen id has an artifact or is done")
	}
}

// TestArtifactAssemblerCopies: the assembler neither changes the events it
// is given nor sees later changes to them.
func TestArtifactAssemblerCopies(t *testing.T) {
	t.Parallel()
	var as ArtifactAssembler
	ev1, ev2 := chunkEvent("a", false, false, "Hel"), chunkEvent("a", true, false, "lo")
	as.Add(ev1)
	as.Add(ev2)
	if n := len(ev1.Artifact().GetParts()); n != 1 {
		t.Errorf("the first event's artifact has %d parts after Add, want 1", n)
	}
	ev2.Artifact().Parts[0].Content = &Part_Text{Text: "p!"}
	if got := as.Text("a"); got != "Hello" {
		t.Errorf("Text(a) = %q after changing an event, want %q", got, "Hello")
	}
}

func TestArtifactText(t *testing.T) {
	t.Parallel()
	a := NewArtifact("a", TextPart("Hel"), &Part{Content: &Part_Url{Url: "https://example.com"}}, TextPart("lo"))
	if got := ArtifactText(a); got != "Hello" {
		t.Errorf("ArtifactText(%v) = %q, want %q", a, got, "Hello")
	}
	if got := JoinText(a.Parts); got != "Hel\nlo" {
		t.Errorf("JoinText(%v) = %q, want %q", a.Parts, got, "Hel\nlo")
	}
	if got := ArtifactText(nil); got != "" {
		t.Errorf("ArtifactText(nil) = %q, want empty", got)
	}
}
