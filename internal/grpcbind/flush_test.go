package grpcbind_test

import (
	"context"
	"iter"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"

	"connectrpc.com/connect"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/a2aconnect"
	"parley.dev/parley/internal/grpcbind"
)

// chunks streams n artifact chunks, each marked More (the producer holds
// the next one) or not.
type chunks struct {
	a2a.Service
	n    int
	more bool
}

func (c chunks) SendStreamingMessage(context.Context, *a2a.SendMessageRequest) iter.Seq2[a2a.StreamEvent, error] {
	return func(yield func(a2a.StreamEvent, error) bool) {
		for i := range c.n {
			ev := &a2a.StreamResponse{Payload: &a2a.StreamResponse_ArtifactUpdate{ArtifactUpdate: &a2a.TaskArtifactUpdateEvent{
				TaskId: "t", ContextId: "c", Append: i > 0, Artifact: &a2a.Artifact{ArtifactId: "a",
					Parts: []*a2a.Part{{Content: &a2a.Part_Text{Text: strconv.Itoa(i)}}}}}}}
			if !yield(a2a.StreamEvent{Seq: uint64(i + 1), Response: ev, More: c.more && i < c.n-1}, nil) {
				return
			}
		}
	}
}

// flushCounter counts the flushes that reach the response.
type flushCounter struct {
	http.ResponseWriter
	n *atomic.Int64
}

func (f flushCounter) Flush() {
	f.n.Add(1)
	f.ResponseWriter.(http.Flusher).Flush()
}

// TestStreamWritesFollowMore: over the real wire, a server stream pushes
// an event to the network on its own only when the core does not already
// hold the next one (a2a.StreamEvent.More); either way the client gets
// every event, in order.
func TestStreamWritesFollowMore(t *testing.T) {
	const n = 20
	for _, c := range []struct {
		more       bool
		minFlushes int64
		maxFlushes int64
	}{
		{more: false, minFlushes: n, maxFlushes: n + 2},
		{more: true, minFlushes: 1, maxFlushes: 2}, // the last event, and connect-go's after the status
	} {
		t.Run("more="+strconv.FormatBool(c.more), func(t *testing.T) {
			var flushes atomic.Int64
			h := grpcbind.NewHandler(chunks{n: n, more: c.more}, nil)
			base, client := serveGRPC(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				h.ServeHTTP(flushCounter{w, &flushes}, r)
			}))
			stream, err := a2aconnect.NewA2AServiceClient(client, base, connect.WithGRPC()).SendStreamingMessage(testCtx(t), v1(textMessage("x")))
			if err != nil {
				t.Fatal(err)
			}
			got := 0
			for stream.Receive() {
				if text := stream.Msg().GetArtifactUpdate().GetArtifact().GetParts()[0].GetText(); text != strconv.Itoa(got) {
					t.Fatalf("event %d carries %q", got, text)
				}
				got++
			}
			if err := stream.Err(); err != nil || got != n {
				t.Fatalf("%d events of %d, %v", got, n, err)
			}
			stream.Close()
			if f := flushes.Load(); f < c.minFlushes || f > c.maxFlushes {
				t.Errorf("%d flushes for %d events, want %d to %d", f, n, c.minFlushes, c.maxFlushes)
			}
		})
	}
}
