package a2ahttp

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"parley.dev/parley/a2a"
)

// TestEventBound: eventBound is never below an event's protobuf size,
// for the events it bounds; it declines the ones carrying what it does
// not count; and the messages it walks have exactly the fields it counts
// (a field added to the proto fails here until eventBound counts it).
func TestEventBound(t *testing.T) {
	t.Parallel()
	fields := map[proto.Message][]string{
		&a2a.StreamResponse{}:          {"task", "message", "status_update", "artifact_update"},
		&a2a.TaskArtifactUpdateEvent{}: {"task_id", "context_id", "artifact", "append", "last_chunk", "metadata", "generation"},
		&a2a.Artifact{}:                {"artifact_id", "name", "description", "parts", "metadata", "extensions", "start_generation", "end_generation"},
		&a2a.Part{}:                    {"text", "raw", "url", "data", "metadata", "filename", "media_type"},
		&a2a.TaskStatusUpdateEvent{}:   {"task_id", "context_id", "status", "metadata", "generation"},
		&a2a.TaskStatus{}:              {"state", "message", "timestamp"},
	}
	for m, want := range fields {
		fd := m.ProtoReflect().Descriptor().Fields()
		var got []string
		for i := range fd.Len() {
			got = append(got, string(fd.Get(i).Name()))
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s has the fields %v; eventBound counts %v", m.ProtoReflect().Descriptor().FullName(), got, want)
		}
	}

	r := rand.New(rand.NewPCG(7, 9))
	str := func(max int) string { return strings.Repeat("é", r.IntN(max+1)) }
	chunk := func(parts ...*a2a.Part) *a2a.StreamResponse {
		return &a2a.StreamResponse{Payload: &a2a.StreamResponse_ArtifactUpdate{ArtifactUpdate: &a2a.TaskArtifactUpdateEvent{
			TaskId: str(40), ContextId: str(40), Append: true, LastChunk: true, Generation: r.Int64(),
			Artifact: &a2a.Artifact{ArtifactId: str(40), Name: str(20), Description: str(20), Extensions: []string{str(30), str(30)}, Parts: parts,
				StartGeneration: -1, EndGeneration: r.Int64()}}}}
	}
	status := func(ts *timestamppb.Timestamp) *a2a.StreamResponse {
		return &a2a.StreamResponse{Payload: &a2a.StreamResponse_StatusUpdate{StatusUpdate: &a2a.TaskStatusUpdateEvent{
			TaskId: str(40), ContextId: str(40), Generation: -1, Status: &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_WORKING, Timestamp: ts}}}}
	}
	for range 200 {
		for _, ev := range []*a2a.StreamResponse{
			chunk(&a2a.Part{Content: &a2a.Part_Text{Text: str(5000)}, Filename: str(10), MediaType: str(10)},
				&a2a.Part{Content: &a2a.Part_Raw{Raw: []byte(str(300))}}, &a2a.Part{Content: &a2a.Part_Url{Url: str(30)}}),
			chunk(&a2a.Part{Content: &a2a.Part_Text{Text: str(40000)}}, &a2a.Part{Content: &a2a.Part_Text{Text: str(40000)}}),
			chunk(),
			status(timestamppb.Now()),
			status(&timestamppb.Timestamp{Seconds: -1 << 62, Nanos: -999999999}),
			status(nil),
		} {
			n, ok := eventBound(ev)
			if size := proto.Size(ev); !ok || n < size {
				t.Fatalf("eventBound(%.200v) = %d, %v; its size is %d", ev, n, ok, size)
			}
		}
	}

	meta, _ := structpb.NewStruct(map[string]any{"k": "v"})
	data := &a2a.Part{Content: &a2a.Part_Data{Data: structpb.NewStringValue("x")}}
	withUnknown := &a2a.Part{Content: &a2a.Part_Text{Text: "x"}}
	withUnknown.ProtoReflect().SetUnknown([]byte{0xf8, 0x7f, 1}) // field 2047, varint 1
	for name, ev := range map[string]*a2a.StreamResponse{
		"event metadata":    {Payload: &a2a.StreamResponse_ArtifactUpdate{ArtifactUpdate: &a2a.TaskArtifactUpdateEvent{Metadata: meta}}},
		"artifact metadata": {Payload: &a2a.StreamResponse_ArtifactUpdate{ArtifactUpdate: &a2a.TaskArtifactUpdateEvent{Artifact: &a2a.Artifact{Metadata: meta}}}},
		"data part":         chunk(data),
		"part metadata":     chunk(&a2a.Part{Content: &a2a.Part_Text{Text: "x"}, Metadata: meta}),
		"unknown fields":    chunk(withUnknown),
		"status message":    {Payload: &a2a.StreamResponse_StatusUpdate{StatusUpdate: &a2a.TaskStatusUpdateEvent{Status: &a2a.TaskStatus{Message: &a2a.Message{}}}}},
		"task":              {Payload: &a2a.StreamResponse_Task{Task: &a2a.Task{}}},
		"message":           {Payload: &a2a.StreamResponse_Message{Message: &a2a.Message{}}},
	} {
		if n, ok := eventBound(ev); ok {
			t.Errorf("eventBound(%s) = %d, true; want it declined", name, n)
		}
	}

	cs := newCallers(0, 0, DefaultAnswerBudget)
	big := chunk(&a2a.Part{Content: &a2a.Part_Text{Text: strings.Repeat("x", bigAnswer)}})
	if got, want := cs.answerSize(big), int64(proto.Size(big)); got != want {
		t.Errorf("answerSize(a chunk of %d bytes) = %d, want %d", bigAnswer, got, want)
	}
	if got := cs.answerSize(chunk(&a2a.Part{Content: &a2a.Part_Text{Text: "chunk 1"}})); got != 0 {
		t.Errorf("answerSize(a small chunk) = %d, want 0", got)
	}
}
