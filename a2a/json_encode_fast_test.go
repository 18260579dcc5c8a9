package a2a

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// appendGeneric is AppendJSON without the written-out messages.
func appendGeneric(m proto.Message) ([]byte, error) {
	return new(encoder).message(nil, m.ProtoReflect())
}

// TestFastJSONMatchesGeneric: the written-out messages come out byte for
// byte as the generic walk writes them (or fail where it fails), on
// generated messages with every field set, unset, zero, invalid UTF-8,
// unknown enum numbers, nil list elements and well-known types that
// cannot be written; and the test fails when one of those messages gains
// a field, so that json_encode_fast.go learns it.
func TestFastJSONMatchesGeneric(t *testing.T) {
	fields := map[string]int{"StreamResponse": 4, "SendMessageResponse": 2, "Task": 8, "TaskStatus": 3, "Message": 8,
		"Artifact": 8, "TimelineEntry": 3, "Part": 7, "TaskStatusUpdateEvent": 5, "TaskArtifactUpdateEvent": 7}
	for _, m := range []proto.Message{&StreamResponse{}, &SendMessageResponse{}, &Task{}, &TaskStatus{}, &Message{},
		&Artifact{}, &TimelineEntry{}, &Part{}, &TaskStatusUpdateEvent{}, &TaskArtifactUpdateEvent{}} {
		md := m.ProtoReflect().Descriptor()
		if n := md.Fields().Len(); n != fields[string(md.Name())] {
			t.Errorf("%s has %d fields, json_encode_fast.go writes %d: teach it the new ones", md.Name(), n, fields[string(md.Name())])
		}
	}
	g := &gen{r: rand.New(rand.NewPCG(1, 2))}
	failures := 0
	for i := range 20000 {
		var m proto.Message
		switch i % 4 {
		case 0:
			m = g.streamResponse()
		case 1:
			m = g.sendMessageResponse()
		case 2:
			m = g.task()
		default:
			m = g.message()
		}
		want, wantErr := appendGeneric(m)
		got, gotErr := AppendJSON(nil, m)
		if (wantErr != nil) != (gotErr != nil) || (wantErr == nil && !bytes.Equal(got, want)) {
			t.Errorf("message %d (%T):\n got %s, %v\nwant %s, %v", i, m, got, gotErr, want, wantErr)
			if failures++; failures > 3 {
				return
			}
		}
	}
}

// gen makes messages with each field present or not, at random.
type gen struct{ r *rand.Rand }

func (g *gen) maybe() bool { return g.r.IntN(3) > 0 }

func (g *gen) str() string {
	return []string{"", "a", "ctx-1", "héllo wörld", "\xff\xfe bad", "quote\" back\\ nl\n tab\t <>&", "\u2028"}[g.r.IntN(7)]
}

func (g *gen) strs() []string {
	switch g.r.IntN(3) {
	case 0:
		return nil
	case 1:
		return []string{}
	}
	return []string{g.str(), g.str()}
}

func (g *gen) enum() int32 { return []int32{0, 1, 3, 4, 8, 99}[g.r.IntN(6)] }

func (g *gen) meta() *structpb.Struct {
	if !g.maybe() {
		return nil
	}
	s, _ := structpb.NewStruct(map[string]any{"k": g.str(), "n": 1.5, "l": []any{true, nil, map[string]any{"z": "y"}}})
	return s
}

func (g *gen) timestamp() *timestamppb.Timestamp {
	switch g.r.IntN(5) {
	case 0:
		return nil
	case 1:
		return &timestamppb.Timestamp{Seconds: -1 << 40} // out of range: an error
	}
	return &timestamppb.Timestamp{Seconds: 1764547200 + g.r.Int64N(1e6), Nanos: g.r.Int32N(1e9)}
}

func (g *gen) part() *Part {
	if g.r.IntN(10) == 0 {
		return nil
	}
	p := &Part{Metadata: g.meta(), Filename: g.str(), MediaType: g.str()}
	switch g.r.IntN(7) {
	case 0:
		p.Content = &Part_Text{Text: g.str()}
	case 1:
		p.Content = &Part_Raw{Raw: []byte(g.str())}
	case 2:
		p.Content = &Part_Url{Url: g.str()}
	case 3:
		p.Content = &Part_Data{Data: structpb.NewStringValue(g.str())}
	case 4:
		p.Content = &Part_Data{Data: &structpb.Value{}} // no kind: an error
	case 5:
		p.Content = &Part_Data{}
	}
	return p
}

func (g *gen) parts() []*Part {
	n := g.r.IntN(4)
	if n == 0 && g.maybe() {
		return nil
	}
	ps := make([]*Part, n)
	for i := range ps {
		ps[i] = g.part()
	}
	return ps
}

func (g *gen) message() *Message {
	if g.r.IntN(10) == 0 {
		return nil
	}
	return &Message{MessageId: g.str(), ContextId: g.str(), TaskId: g.str(), Role: Role(g.enum()), Parts: g.parts(),
		Metadata: g.meta(), Extensions: g.strs(), ReferenceTaskIds: g.strs()}
}

func (g *gen) artifact() *Artifact {
	if g.r.IntN(10) == 0 {
		return nil
	}
	return &Artifact{ArtifactId: g.str(), Name: g.str(), Description: g.str(), Parts: g.parts(), Metadata: g.meta(), Extensions: g.strs(),
		StartGeneration: g.generation(), EndGeneration: g.generation()}
}

func (g *gen) timelineEntry() *TimelineEntry {
	e := &TimelineEntry{Generation: g.generation()}
	switch g.r.IntN(3) {
	case 0:
		e.Entry = &TimelineEntry_Message{Message: g.message()}
	case 1:
		e.Entry = &TimelineEntry_Status{Status: g.status()}
	}
	return e
}

func (g *gen) status() *TaskStatus {
	if !g.maybe() {
		return nil
	}
	s := &TaskStatus{State: TaskState(g.enum()), Timestamp: g.timestamp()}
	if g.maybe() {
		s.Message = g.message()
	}
	return s
}

func (g *gen) task() *Task {
	t := &Task{Id: g.str(), ContextId: g.str(), Status: g.status(), Metadata: g.meta(), Generation: g.generation()}
	for range g.r.IntN(3) {
		t.Artifacts = append(t.Artifacts, g.artifact())
	}
	for range g.r.IntN(3) {
		t.History = append(t.History, g.message())
	}
	for range g.r.IntN(3) {
		t.Timeline = append(t.Timeline, g.timelineEntry())
	}
	return t
}

func (g *gen) streamResponse() *StreamResponse {
	r := &StreamResponse{}
	switch g.r.IntN(5) {
	case 0:
		r.Payload = &StreamResponse_Task{Task: g.task()}
	case 1:
		r.Payload = &StreamResponse_Message{Message: g.message()}
	case 2:
		r.Payload = &StreamResponse_StatusUpdate{StatusUpdate: &TaskStatusUpdateEvent{
			TaskId: g.str(), ContextId: g.str(), Status: g.status(), Metadata: g.meta(), Generation: g.generation()}}
	case 3:
		r.Payload = &StreamResponse_ArtifactUpdate{ArtifactUpdate: &TaskArtifactUpdateEvent{
			TaskId: g.str(), ContextId: g.str(), Artifact: g.artifact(), Append: g.maybe(), LastChunk: g.maybe(), Metadata: g.meta(), Generation: g.generation()}}
	}
	return r
}

// generation is a task generation (the 1.1 preview): often unset, else
// anything an int64 holds.
func (g *gen) generation() int64 {
	switch g.r.IntN(4) {
	case 0:
		return int64(g.r.Uint64())
	case 1:
		return int64(g.r.IntN(100))
	}
	return 0
}

func (g *gen) sendMessageResponse() *SendMessageResponse {
	r := &SendMessageResponse{}
	switch g.r.IntN(3) {
	case 0:
		r.Payload = &SendMessageResponse_Task{Task: g.task()}
	case 1:
		r.Payload = &SendMessageResponse_Message{Message: g.message()}
	}
	return r
}
