package v03http

import (
	"encoding/json"
	"testing"

	"parley.dev/parley/a2a"
)

// TestStreamShared: a v0.3 stream event that several streams share is
// written with the same bytes as one encoded for its stream alone (a
// JSON-RPC stream's envelope with its own id), on both bindings and for
// both kinds of stream.
func TestStreamShared(t *testing.T) {
	msg := a2a.AgentMessage(`<b>"quoted"</b> & é ` + "\u2028")
	events := []*a2a.StreamResponse{
		{Payload: &a2a.StreamResponse_Task{Task: &a2a.Task{Id: "t-1", ContextId: "c-1",
			Status: &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_WORKING, Message: msg}}}},
		{Payload: &a2a.StreamResponse_StatusUpdate{StatusUpdate: &a2a.TaskStatusUpdateEvent{TaskId: "t-1", ContextId: "c-1",
			Status: &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_COMPLETED, Message: msg}}}},
		{Payload: &a2a.StreamResponse_ArtifactUpdate{ArtifactUpdate: &a2a.TaskArtifactUpdateEvent{TaskId: "t-1", ContextId: "c-1",
			Artifact: a2a.TextArtifact("a-1", "<text>"), Append: true}}},
	}
	for _, resp := range events {
		cache := a2a.NewEventCache(resp)
		for _, subscribe := range []bool{false, true} {
			for _, id := range []string{`7`, ` "sub-<1>" `, `null`, ``} {
				enc := &rpcStream{id: json.RawMessage(id), subscribe: subscribe}
				if id == "" {
					enc.id = nil
				}
				want, err := enc.AppendEvent(nil, a2a.StreamEvent{Response: resp})
				if err != nil {
					t.Fatal(err)
				}
				got, err := enc.AppendEvent([]byte("x"), a2a.StreamEvent{Response: resp, Cache: cache})
				if err != nil || string(got) != "x"+string(want) {
					t.Fatalf("JSON-RPC, id %q, subscribe %v:\nshared %s\nalone  x%s (%v)", id, subscribe, got, want, err)
				}
			}
			enc := &restStream{subscribe: subscribe}
			want, err := enc.AppendEvent(nil, a2a.StreamEvent{Response: resp})
			if err != nil {
				t.Fatal(err)
			}
			for range 2 {
				got, err := enc.AppendEvent([]byte("x"), a2a.StreamEvent{Response: resp, Cache: cache})
				if err != nil || string(got) != "x"+string(want) {
					t.Fatalf("HTTP+JSON, subscribe %v:\nshared %s\nalone  x%s (%v)", subscribe, got, want, err)
				}
			}
		}
	}
}
