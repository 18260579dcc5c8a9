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
	"parley.dev/parley/internal/v03/v03grpc"
	"parley.dev/parley/internal/v03/v03pb"
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

// receiveAll calls SendStreamingMessage on the server at base and returns
// the number of events received, failing on a broken stream.
type receiveAll func(t *testing.T, client *http.Client, base string) int

// clientStream is a client's end of a server stream, of either protocol.
type clientStream interface {
	Receive() bool
	Err() error
	Close() error
}

// drain reads a stream of chunks to its end and closes it, checking that
// they come in order (text is the last received event's), and returns how
// many came.
func drain(t *testing.T, stream clientStream, text func() string) int {
	defer stream.Close()
	got := 0
	for stream.Receive() {
		if s := text(); s != strconv.Itoa(got) {
			t.Fatalf("event %d carries %q", got, s)
		}
		got++
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	return got
}

// streamProtocols are the gRPC protocols whose server streams are gated.
var streamProtocols = map[string]struct {
	handler func(a2a.Service) http.Handler
	receive receiveAll
}{
	"1.0": {
		handler: func(svc a2a.Service) http.Handler { return grpcbind.NewHandler(svc, nil) },
		receive: func(t *testing.T, client *http.Client, base string) int {
			stream, err := a2aconnect.NewA2AServiceClient(client, base, connect.WithGRPC()).SendStreamingMessage(testCtx(t), v1(textMessage("x")))
			if err != nil {
				t.Fatal(err)
			}
			return drain(t, stream, func() string { return stream.Msg().GetArtifactUpdate().GetArtifact().GetParts()[0].GetText() })
		},
	},
	"0.3": {
		handler: func(svc a2a.Service) http.Handler { return v03grpc.NewHandler(svc, nil) },
		receive: func(t *testing.T, client *http.Client, base string) int {
			c := connect.NewClient[v03pb.SendMessageRequest, v03pb.StreamResponse](client, base+"/"+v03grpc.ServiceName+"/SendStreamingMessage", connect.WithGRPC())
			stream, err := c.CallServerStream(testCtx(t), connect.NewRequest(&v03pb.SendMessageRequest{Request: &v03pb.Message{
				MessageId: "m", Role: v03pb.Role_ROLE_USER, Content: []*v03pb.Part{{Part: &v03pb.Part_Text{Text: "x"}}}}}))
			if err != nil {
				t.Fatal(err)
			}
			return drain(t, stream, func() string { return stream.Msg().GetArtifactUpdate().GetArtifact().GetParts()[0].GetText() })
		},
	},
}

// TestStreamWritesFollowMore: over the real wire, on every gRPC protocol,
// a server stream pushes an event to the network on its own only when the
// core does not already hold the next one (a2a.StreamEvent.More); either
// way the client gets every event, in order.
func TestStreamWritesFollowMore(t *testing.T) {
	const n = 20
	for version, p := range streamProtocols {
		for _, c := range []struct {
			more       bool
			minFlushes int64
			maxFlushes int64
		}{
			{more: false, minFlushes: n, maxFlushes: n + 2},
			{more: true, minFlushes: 1, maxFlushes: 2}, // the last event, and connect-go's after the status
		} {
			t.Run(version+"/more="+strconv.FormatBool(c.more), func(t *testing.T) {
				var flushes atomic.Int64
				h := p.handler(chunks{n: n, more: c.more})
				base, client := serveGRPC(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					h.ServeHTTP(flushCounter{w, &flushes}, r)
				}))
				if got := p.receive(t, client, base); got != n {
					t.Fatalf("%d events of %d", got, n)
				}
				if f := flushes.Load(); f < c.minFlushes || f > c.maxFlushes {
					t.Errorf("%d flushes for %d events, want %d to %d", f, n, c.minFlushes, c.maxFlushes)
				}
			})
		}
	}
}
