package server_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/agents"
	pversion "parley.dev/parley/internal/version"
	"parley.dev/parley/server"
	"parley.dev/parley/taskstore/memstore"
)

// TestTimelineOwnedByGoCaller: a caller of the Go API owns the task it is
// answered (server.answer), its 1.1 timeline included, on a task still
// running, whose logged events the memory store shares: changing the
// timeline's messages and statuses changes neither the stored task nor
// what the next call reads.
func TestTimelineOwnedByGoCaller(t *testing.T) {
	card, err := agents.Card("echo", []*a2a.AgentInterface{
		{Url: "http://127.0.0.1/", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: pversion.V11},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(&server.Options{Card: card, Agent: generationAgent(), Store: memstore.New(),
		ProtocolVersions: []string{pversion.V11, a2a.ProtocolVersion}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Close(ctx)
	})
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	resp, err := srv.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("stream")})
	if err != nil {
		t.Fatal(err)
	}
	id := resp.GetTask().GetId()
	read := func() *a2a.Task {
		tk, err := srv.GetTask(ctx, &a2a.GetTaskRequest{Id: id})
		if err != nil {
			t.Fatal(err)
		}
		return tk
	}
	before := read()
	if len(before.GetTimeline()) < 3 {
		t.Fatalf("a 1.1 GetTask answered the timeline %v", before.GetTimeline())
	}
	want := a2a.CloneTask(before)
	for _, e := range before.GetTimeline() {
		if m := e.GetMessage(); m != nil {
			m.Parts[0] = a2a.TextPart("changed by the caller")
			m.MessageId = "changed"
		}
		if st := e.GetStatus(); st != nil {
			st.State = a2a.TaskState_TASK_STATE_REJECTED
		}
	}
	if after := read(); !proto.Equal(after, want) {
		t.Errorf("a caller's change of its answer's timeline reached the store:\nnow  %v\nwant %v", after, want)
	}
}
