package jsonrpc

import (
	"encoding/json"
	"testing"

	"parley.dev/parley/a2a"
)

// sharedEvents are stream events of every kind, with text that JSON
// escapes.
func sharedEvents() []*a2a.StreamResponse {
	msg := a2a.AgentMessage(`<b>"quoted"</b> & é ✓ ` + "\u2028\n")
	task := &a2a.Task{Id: "t-1", ContextId: "c-1", Status: &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_WORKING, Message: msg},
		Artifacts: []*a2a.Artifact{a2a.TextArtifact("a-1", "<chunk>")}, History: []*a2a.Message{a2a.UserMessage("hello")}}
	return []*a2a.StreamResponse{
		{Payload: &a2a.StreamResponse_Task{Task: task}},
		{Payload: &a2a.StreamResponse_Message{Message: msg}},
		{Payload: &a2a.StreamResponse_StatusUpdate{StatusUpdate: &a2a.TaskStatusUpdateEvent{TaskId: "t-1", ContextId: "c-1",
			Status: &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_INPUT_REQUIRED, Message: msg}}}},
		{Payload: &a2a.StreamResponse_ArtifactUpdate{ArtifactUpdate: &a2a.TaskArtifactUpdateEvent{TaskId: "t-1", ContextId: "c-1",
			Artifact: a2a.TextArtifact("a-1", "more <text>"), Append: true, LastChunk: true}}},
	}
}

// TestAppendEventShared: an event that several streams share is written
// with the same bytes as one encoded by its stream alone, each stream's
// envelope with its own id around the one encoding of the result.
func TestAppendEventShared(t *testing.T) {
	for _, resp := range sharedEvents() {
		cache := a2a.NewEventCache(resp)
		for _, id := range []string{`1`, `"sub-<2>"`, `null`} {
			want, err := appendResult(nil, json.RawMessage(id), resp)
			if err != nil {
				t.Fatal(err)
			}
			alone, _ := appendEvent(nil, json.RawMessage(id), a2a.StreamEvent{Response: resp})
			shared, err := appendEvent([]byte("x"), json.RawMessage(id), a2a.StreamEvent{Response: resp, Cache: cache})
			if err != nil || string(alone) != string(want) || string(shared) != "x"+string(want) {
				t.Fatalf("id %s:\nalone  %s\nshared %s\nwant   %s (%v)", id, alone, shared, want, err)
			}
		}
		// The result was encoded once, for the three streams.
		if _, err := cache.LoadBytes(resp, "json", func() ([]byte, error) { t.Fatal("encoded again"); return nil, nil }); err != nil {
			t.Fatal(err)
		}
	}
}
