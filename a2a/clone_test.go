package a2a

import (
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// CloneArtifact copies every field of Artifact and Part: the copy equals
// the original and shares nothing with it; and the test fails when either
// message gains a field, so that CloneArtifact learns it.
func TestCloneArtifact(t *testing.T) {
	// The fields CloneArtifact copies; the proto must have no others.
	copied := map[string]int{"Artifact": 8, "Part": 7}
	for _, m := range []proto.Message{&Artifact{}, &Part{}} {
		md := m.ProtoReflect().Descriptor()
		if n := md.Fields().Len(); n != copied[string(md.Name())] {
			t.Errorf("%s has %d fields, CloneArtifact copies %d: teach it the new ones", md.Name(), n, copied[string(md.Name())])
		}
	}
	meta, err := structpb.NewStruct(map[string]any{"k": "v", "n": 1.5, "l": []any{true, nil}})
	if err != nil {
		t.Fatal(err)
	}
	unknown := protowire.AppendString(protowire.AppendTag(nil, 99, protowire.BytesType), "future")
	cases := []*Artifact{
		nil,
		{},
		{ArtifactId: "a", Parts: []*Part{}},
		{
			ArtifactId: "a1", Name: "n", Description: "d", Metadata: meta, Extensions: []string{"x", "y"},
			StartGeneration: 3, EndGeneration: 9,
			Parts: []*Part{
				{Content: &Part_Text{Text: "t"}, Metadata: meta, Filename: "f.txt", MediaType: "text/plain"},
				{Content: &Part_Raw{Raw: []byte{0, 1, 2}}},
				{Content: &Part_Url{Url: "https://example.com/f"}},
				{Content: &Part_Data{Data: structpb.NewStructValue(meta)}},
				{Content: &Part_Data{}},
				{},
				nil,
			},
		},
	}
	withUnknown := &Artifact{ArtifactId: "u", Parts: []*Part{{Content: &Part_Text{Text: "t"}}}}
	withUnknown.ProtoReflect().SetUnknown(unknown)
	withUnknown.Parts[0].ProtoReflect().SetUnknown(unknown)
	cases = append(cases, withUnknown)
	for i, a := range cases {
		c := CloneArtifact(a)
		if !proto.Equal(c, a) || (a == nil) != (c == nil) {
			t.Errorf("case %d: clone %v, want %v", i, c, a)
			continue
		}
		if a == nil || len(a.Parts) == 0 {
			continue
		}
		// Nothing shared: changing the original leaves the copy as it was.
		want := proto.Clone(c)
		if a.Parts[0] != nil {
			a.Parts[0].Filename = "changed"
		}
		for _, p := range a.Parts {
			if r, ok := p.GetContent().(*Part_Raw); ok {
				r.Raw[0] = 9
			}
		}
		if a.Metadata != nil {
			a.Metadata.Fields["k"] = structpb.NewStringValue("changed")
		}
		if len(a.Extensions) > 0 {
			a.Extensions[0] = "changed"
		}
		if !proto.Equal(c, want) {
			t.Errorf("case %d: the copy changed with the original", i)
		}
	}
}

// CloneTask and CloneMessage copy every field of Task, TaskStatus and
// Message (and of the artifacts and parts within): the copy equals the
// original and shares nothing with it; and the test fails when one of
// them gains a field, so that the clones learn it.
func TestCloneTask(t *testing.T) {
	copied := map[string]int{"Task": 8, "TimelineEntry": 3, "TaskStatus": 3, "Message": 8, "Timestamp": 2}
	for _, m := range []proto.Message{&Task{}, &TimelineEntry{}, &TaskStatus{}, &Message{}, &timestamppb.Timestamp{}} {
		md := m.ProtoReflect().Descriptor()
		if n := md.Fields().Len(); n != copied[string(md.Name())] {
			t.Errorf("%s has %d fields, CloneTask copies %d: teach it the new ones", md.Name(), n, copied[string(md.Name())])
		}
	}
	meta, err := structpb.NewStruct(map[string]any{"k": "v", "l": []any{1.5, nil}})
	if err != nil {
		t.Fatal(err)
	}
	unknown := protowire.AppendString(protowire.AppendTag(nil, 99, protowire.BytesType), "future")
	msg := func(id string) *Message {
		return &Message{
			MessageId: id, ContextId: "c", TaskId: "t", Role: Role_ROLE_AGENT, Metadata: meta,
			Extensions: []string{"x"}, ReferenceTaskIds: []string{"r1", "r2"},
			Parts: []*Part{{Content: &Part_Text{Text: "hi"}}, {Content: &Part_Raw{Raw: []byte{1, 2}}}, nil},
		}
	}
	full := &Task{
		Id: "t", ContextId: "c", Metadata: meta,
		Status: &TaskStatus{State: TaskState_TASK_STATE_WORKING, Message: msg("s"),
			Timestamp: &timestamppb.Timestamp{Seconds: 1700000000, Nanos: 5}},
		History:   []*Message{msg("m1"), nil, msg("m2")},
		Artifacts: []*Artifact{{ArtifactId: "a", Parts: []*Part{{Content: &Part_Text{Text: "out"}}}}, nil},
		Timeline: []*TimelineEntry{{Entry: &TimelineEntry_Message{Message: msg("m1")}, Generation: 1},
			{Entry: &TimelineEntry_Status{Status: &TaskStatus{State: TaskState_TASK_STATE_WORKING, Message: msg("s")}}, Generation: 2},
			{Generation: 3}, nil},
	}
	withUnknown := &Task{Id: "u", Status: &TaskStatus{Timestamp: &timestamppb.Timestamp{Seconds: 1}}, History: []*Message{{MessageId: "m"}}}
	for _, m := range []proto.Message{withUnknown, withUnknown.Status, withUnknown.Status.Timestamp, withUnknown.History[0]} {
		m.ProtoReflect().SetUnknown(unknown)
	}
	for i, task := range []*Task{nil, {}, {Id: "t", History: []*Message{}, Artifacts: []*Artifact{}}, {Status: &TaskStatus{}}, full, withUnknown} {
		c := CloneTask(task)
		if !proto.Equal(c, task) || (task == nil) != (c == nil) {
			t.Errorf("case %d: clone %v, want %v", i, c, task)
			continue
		}
		if task == nil || task.Status == nil {
			continue
		}
		// Nothing shared: changing the original leaves the copy as it was.
		want := proto.Clone(c)
		task.Status.State = TaskState_TASK_STATE_FAILED
		if ts := task.Status.Timestamp; ts != nil {
			ts.Seconds++
		}
		if sm := task.Status.Message; sm != nil {
			sm.Parts[0].Content = &Part_Text{Text: "changed"}
			sm.ReferenceTaskIds[0] = "changed"
		}
		for _, m := range task.History {
			if m != nil {
				m.MessageId = "changed"
				if len(m.Extensions) > 0 {
					m.Extensions[0] = "changed"
				}
			}
		}
		if len(task.Artifacts) > 0 {
			task.Artifacts[0].ArtifactId = "changed"
		}
		if len(task.Timeline) > 1 {
			task.Timeline[0].GetMessage().MessageId = "changed"
			task.Timeline[1].GetStatus().State = TaskState_TASK_STATE_FAILED
			task.Timeline[2].Generation = 9
		}
		if task.Metadata != nil {
			task.Metadata.Fields["k"] = structpb.NewStringValue("changed")
		}
		if !proto.Equal(c, want) {
			t.Errorf("case %d: the copy changed with the original", i)
		}
	}
	if c := CloneMessage(msg("m")); !proto.Equal(c, msg("m")) {
		t.Errorf("CloneMessage: %v", c)
	}
}

func BenchmarkCloneTask(b *testing.B) {
	task := &Task{Id: "t", ContextId: "c",
		Status:    &TaskStatus{State: TaskState_TASK_STATE_COMPLETED, Timestamp: &timestamppb.Timestamp{Seconds: 1}},
		History:   []*Message{{MessageId: "m", Role: Role_ROLE_USER, Parts: []*Part{{Content: &Part_Text{Text: "hello"}}}}},
		Artifacts: []*Artifact{{ArtifactId: "a", Parts: []*Part{{Content: &Part_Text{Text: "hello"}}}}}}
	b.Run("CloneTask", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			CloneTask(task)
		}
	})
	b.Run("proto.Clone", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			proto.Clone(task)
		}
	})
}
