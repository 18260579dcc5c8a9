package taskstore

import (
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
)

// FuzzScanArtifactUpdate: the scan a prune folds a chunk by never panics
// and, on any bytes proto.Unmarshal takes as an a2a.StreamResponse, reads
// what it reads: an artifact update (with its artifact's id and
// lastChunk) or not one. Bytes that do not decode may scan (the scan
// reads less than the decoder checks), but never as an update of another
// artifact than the decoder would name.
func FuzzScanArtifactUpdate(f *testing.F) {
	update := func(id string, last bool) []byte {
		b, _ := proto.Marshal(&a2a.StreamResponse{Payload: &a2a.StreamResponse_ArtifactUpdate{ArtifactUpdate: &a2a.TaskArtifactUpdateEvent{
			TaskId: "t", ContextId: "c", LastChunk: last, Append: true,
			Artifact: &a2a.Artifact{ArtifactId: id, Parts: []*a2a.Part{a2a.TextPart("chunk")},
				Metadata: nil}}}})
		return b
	}
	status, _ := proto.Marshal(&a2a.StreamResponse{Payload: &a2a.StreamResponse_StatusUpdate{StatusUpdate: &a2a.TaskStatusUpdateEvent{
		TaskId: "t", Status: &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_WORKING, Message: a2a.UserMessage("a")}}}})
	f.Add(update("a", false))
	f.Add(update("b", true))
	f.Add(status)
	f.Add(append(update("a", true), update("", false)...)) // the update twice: merged
	f.Add(append(update("a", false), status...))           // another member last
	f.Add(append(status, update("x", true)...))
	// lastChunk as a packed run (a type it does not have: an unknown
	// field), an artifact id in a part's nested message, and a truncated
	// update.
	field := func(num protowire.Number, v []byte) []byte {
		return protowire.AppendBytes(protowire.AppendTag(nil, num, protowire.BytesType), v)
	}
	f.Add(field(fieldArtifactUpdate, field(fieldLastChunk, []byte{1})))
	f.Add(field(fieldArtifactUpdate, field(fieldArtifact, field(2, field(fieldArtifactID, []byte("nested"))))))
	f.Add(update("a", true)[:9])
	f.Fuzz(func(t *testing.T, b []byte) {
		id, last, ok, err := scanArtifactUpdate(b)
		var r a2a.StreamResponse
		if proto.Unmarshal(b, &r) != nil {
			return
		}
		if err != nil {
			t.Fatalf("scan: %v; proto.Unmarshal takes it: %v", err, &r)
		}
		u := r.GetArtifactUpdate()
		if ok != (u != nil) {
			t.Fatalf("scan says update %v, proto.Unmarshal %v", ok, &r)
		}
		if ok && (id != u.GetArtifact().GetArtifactId() || last != u.GetLastChunk()) {
			t.Fatalf("scan: artifact %q, lastChunk %v; proto.Unmarshal: %q, %v", id, last, u.GetArtifact().GetArtifactId(), u.GetLastChunk())
		}
	})
}
