package server

import (
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"parley.dev/parley/a2a"
)

// TestShallowTaskKeepsEveryField: the top of a task copied for an answer
// has every member of the original, a member added to Task later
// included (the fixture must set each one), and its unknown fields.
func TestShallowTaskKeepsEveryField(t *testing.T) {
	meta, _ := structpb.NewStruct(map[string]any{"k": "v"})
	full := &a2a.Task{Id: "t", ContextId: "c", Generation: 7, Metadata: meta,
		Status:    &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_COMPLETED, Timestamp: timestamppb.Now()},
		Artifacts: []*a2a.Artifact{{ArtifactId: "a", Parts: []*a2a.Part{a2a.TextPart("x")}}},
		History:   []*a2a.Message{a2a.UserMessage("hi")},
		Timeline:  []*a2a.TimelineEntry{{Entry: &a2a.TimelineEntry_Message{Message: a2a.UserMessage("hi")}, Generation: 1}}}
	full.ProtoReflect().SetUnknown(protowire.AppendVarint(protowire.AppendTag(nil, 99, protowire.VarintType), 1))
	fields := full.ProtoReflect().Descriptor().Fields()
	for i := range fields.Len() {
		if !full.ProtoReflect().Has(fields.Get(i)) {
			t.Fatalf("the fixture does not set %s", fields.Get(i).Name())
		}
	}
	c := shallowTask(full)
	if c == full || !proto.Equal(c, full) || len(c.ProtoReflect().GetUnknown()) == 0 {
		t.Fatalf("shallowTask = %v, want a new task equal to %v, its unknown fields too", c, full)
	}
	c.History, c.Generation = nil, 0
	if len(full.History) != 1 || full.Generation != 7 {
		t.Fatal("changing the copy's history or generation changed the original")
	}
}
