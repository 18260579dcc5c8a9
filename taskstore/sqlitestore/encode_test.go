package sqlitestore

import (
	"testing"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
)

// BenchmarkEncodeEvent compares the two encodings a column could hold for
// an appended event (a status update with a message, the common case):
// protobuf binary, which the store uses, and the ProtoJSON of the wire.
func BenchmarkEncodeEvent(b *testing.B) {
	ev := &a2a.StreamResponse{Payload: &a2a.StreamResponse_StatusUpdate{StatusUpdate: &a2a.TaskStatusUpdateEvent{
		TaskId: "task-00000001", ContextId: "ctx-1", Status: &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_COMPLETED,
			Message: &a2a.Message{MessageId: "m-1", Role: a2a.Role_ROLE_AGENT,
				Parts: []*a2a.Part{{Content: &a2a.Part_Text{Text: "the answer to the thing you asked about"}}}}}}}}
	pb, err := proto.Marshal(ev)
	if err != nil {
		b.Fatal(err)
	}
	js, err := a2a.AppendJSON(nil, ev)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("proto/encode", func(b *testing.B) {
		b.ReportAllocs()
		b.ReportMetric(float64(len(pb)), "bytes")
		for b.Loop() {
			if _, err := proto.Marshal(ev); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json/encode", func(b *testing.B) {
		b.ReportAllocs()
		b.ReportMetric(float64(len(js)), "bytes")
		for b.Loop() {
			if _, err := a2a.AppendJSON(nil, ev); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("proto/decode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := proto.Unmarshal(pb, new(a2a.StreamResponse)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json/decode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := a2a.Unmarshal(js, new(a2a.StreamResponse)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
