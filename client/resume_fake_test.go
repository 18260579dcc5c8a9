package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
	"parley.dev/parley/internal/a2aconnect"
	"parley.dev/parley/internal/agents"
	"parley.dev/parley/internal/testkit"
)

// resumeFake is a server of one task's event log that breaks its streams
// on purpose, on any of the three bindings: each call sends the events
// after the caller's resume position (Last-Event-ID, or the gRPC metadata
// last-event-id), at most per of them, then breaks the stream (unless the
// log is done), the way the resume contract of DESIGN "The event log"
// says a server behaves.
type resumeFake struct {
	log   []*a2a.StreamResponse // event i has sequence number i+1
	per   int                   // events per call before the break
	ended string                // break with an error naming lastEventId, of this gRPC status (INTERNAL or UNAVAILABLE), instead of a cut
	// overlap resends this many events before the resume position, which
	// the client must drop.
	overlap int
	// refuse answers every SubscribeToTask with this error (nil: serve it).
	refuse *a2a.Error
	// hold keeps a stream that reached the end of the log open until the
	// client leaves, as a subscription to a task parked in INPUT_REQUIRED
	// stays open.
	hold bool
	// cutAtEnd breaks a stream that reached the end of the log instead of
	// closing it.
	cutAtEnd bool
	// drop breaks every SubscribeToTask before its first event.
	drop bool
	// restart ignores the resume position, as a server without resume
	// does: a subscription starts over with the log's first event.
	restart bool

	mu    sync.Mutex
	calls []string // "SendStreamingMessage" or "SubscribeToTask@N"
}

// window notes a call and returns the slice of the log it sends, the
// sequence number of its first event, and whether the stream ends after
// it (rather than breaking).
func (f *resumeFake) window(method string, after uint64) (evs []*a2a.StreamResponse, first uint64, ends bool) {
	f.mu.Lock()
	if method == a2a.MethodSubscribeToTask {
		f.calls = append(f.calls, fmt.Sprintf("%s@%d", method, after))
	} else {
		f.calls = append(f.calls, method)
	}
	f.mu.Unlock()
	from := int(after)
	switch {
	case method != a2a.MethodSubscribeToTask:
	case f.drop:
		return nil, after + 1, false
	case f.restart:
		from = 0
	default:
		from = max(0, from-f.overlap)
	}
	to := min(len(f.log), from+f.per)
	return f.log[from:to], uint64(from) + 1, to == len(f.log) && !f.cutAtEnd
}

// requests returns the calls made so far.
func (f *resumeFake) requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

// ServeHTTP serves JSON-RPC (POST /rpc) and HTTP+JSON (POST
// /message:stream, /tasks/{id}:subscribe) streams.
func (f *resumeFake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var env struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	rpc := r.URL.Path == "/rpc"
	method := a2a.MethodSendStreamingMessage
	if rpc {
		json.Unmarshal(body, &env)
		method = env.Method
	} else if strings.HasSuffix(r.URL.Path, ":subscribe") {
		method = a2a.MethodSubscribeToTask
	}
	after, _ := strconv.ParseUint(r.Header.Get(client.LastEventIDHeader), 10, 64)
	evs, first, ends := f.window(method, after)
	if method == a2a.MethodSubscribeToTask && f.refuse != nil {
		writeFakeError(w, rpc, env.ID, f.refuse)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	for i, ev := range evs {
		data, _ := a2a.Marshal(ev)
		if rpc {
			data = []byte(`{"jsonrpc":"2.0","id":` + string(env.ID) + `,"result":` + string(data) + `}`)
		}
		fmt.Fprintf(w, "id: %d\ndata: %s\n\n", first+uint64(i), data)
	}
	w.(http.Flusher).Flush()
	switch {
	case ends && f.hold:
		<-r.Context().Done()
	case ends:
	case f.ended != "":
		last := first + uint64(len(evs)) - 1
		io.WriteString(w, endedEvent(rpc, env.ID, f.ended, last))
	default:
		panic(http.ErrAbortHandler) // the connection drops mid-stream
	}
}

// endedEvent is the SSE error event of a server that ended a stream early
// after event last, with the given status (INTERNAL, as Parley did for a
// slow reader before 2026-12, or UNAVAILABLE).
func endedEvent(rpc bool, id json.RawMessage, status string, last uint64) string {
	details := fmt.Sprintf(`[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"%s","domain":"parley.dev","metadata":{"lastEventId":"%d"}}]`, status, last)
	if rpc {
		return fmt.Sprintf("data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"error\":{\"code\":-32603,\"message\":\"ended early\",\"data\":%s}}\n\n", id, details)
	}
	code := map[string]int{"INTERNAL": 500, "UNAVAILABLE": 503}[status]
	return fmt.Sprintf("event: error\ndata: {\"error\":{\"code\":%d,\"status\":%q,\"message\":\"ended early\",\"details\":%s}}\n\n", code, status, details)
}

// writeFakeError answers a call with an A2A error in the binding's shape.
func writeFakeError(w http.ResponseWriter, rpc bool, id json.RawMessage, e *a2a.Error) {
	w.Header().Set("Content-Type", "application/json")
	if rpc {
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%q}}`, id, e.Code.JSONRPC(), e.Message)
		return
	}
	w.WriteHeader(e.Code.HTTPStatus())
	fmt.Fprintf(w, `{"error":{"code":%d,"status":%q,"message":%q,"details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":%q,"domain":"a2a-protocol.org"}]}}`,
		e.Code.HTTPStatus(), grpcName(e.Code), e.Message, e.Code.Reason())
}

// grpcName is the google.rpc.Code name of an error code.
func grpcName(c a2a.Code) string {
	_, name := c.GRPCStatus()
	return name
}

// resumeGRPC serves the same log over gRPC: the position comes in the
// last-event-id metadata, the first event's number goes out in the
// first-event-id response metadata.
type resumeGRPC struct {
	a2aconnect.UnimplementedA2AServiceHandler
	f *resumeFake
}

func (g resumeGRPC) SendStreamingMessage(ctx context.Context, _ *connect.Request[a2a.SendMessageRequest], out *connect.ServerStream[a2a.StreamResponse]) error {
	return g.serve(ctx, a2a.MethodSendStreamingMessage, 0, out)
}

func (g resumeGRPC) SubscribeToTask(ctx context.Context, req *connect.Request[a2a.SubscribeToTaskRequest], out *connect.ServerStream[a2a.StreamResponse]) error {
	after, _ := strconv.ParseUint(req.Header().Get("last-event-id"), 10, 64)
	return g.serve(ctx, a2a.MethodSubscribeToTask, after, out)
}

func (g resumeGRPC) serve(ctx context.Context, method string, after uint64, out *connect.ServerStream[a2a.StreamResponse]) error {
	f := g.f
	evs, first, ends := f.window(method, after)
	if method == a2a.MethodSubscribeToTask && f.refuse != nil {
		return connect.NewError(connect.CodeNotFound, fmt.Errorf("%s", f.refuse.Message))
	}
	out.ResponseHeader().Set("first-event-id", strconv.FormatUint(first, 10))
	for _, ev := range evs {
		if err := out.Send(ev); err != nil {
			return err
		}
	}
	switch {
	case ends && f.hold:
		<-ctx.Done()
		return nil
	case ends:
		return nil
	case f.ended != "":
		code := map[string]connect.Code{"INTERNAL": connect.CodeInternal, "UNAVAILABLE": connect.CodeUnavailable}[f.ended]
		e := connect.NewError(code, fmt.Errorf("ended early"))
		last := first + uint64(len(evs)) - 1
		if d, err := connect.NewErrorDetail(&errdetails.ErrorInfo{Reason: f.ended, Domain: a2a.DomainParley,
			Metadata: map[string]string{"lastEventId": strconv.FormatUint(last, 10)}}); err == nil {
			e.AddDetail(d)
		}
		return e
	}
	return connect.NewError(connect.CodeUnavailable, fmt.Errorf("connection lost"))
}

// resumeClient returns a client of binding b of a resumeFake, with the
// given options (Transports and a short RetryDelay are set here).
func resumeClient(t *testing.T, b binding, f *resumeFake, o client.Options) *client.Client {
	t.Helper()
	var url string
	switch b.name {
	case a2a.BindingGRPC:
		mux := http.NewServeMux()
		mux.Handle(a2aconnect.NewA2AServiceHandler(resumeGRPC{f: f}))
		url = testkit.ServeH2C(t, mux, nil).Listener.Addr().String()
	default:
		hs := httptest.NewServer(f)
		t.Cleanup(hs.Close)
		url = hs.URL
		if b.name == a2a.BindingJSONRPC {
			url += "/rpc"
		}
	}
	card, _ := agents.Card("echo", []*a2a.AgentInterface{{Url: url, ProtocolBinding: b.name, ProtocolVersion: "1.0"}})
	o.Transports = []client.TransportFactory{b.factory}
	if o.RetryDelay == 0 {
		o.RetryDelay = time.Millisecond
	}
	c, err := client.New(card, &o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// chunkLog is the log of a task "t1" that works, streams n chunks of
// artifact "out" and ends in state end.
func chunkLog(n int, end a2a.TaskState) []*a2a.StreamResponse {
	log := []*a2a.StreamResponse{{Payload: &a2a.StreamResponse_Task{Task: &a2a.Task{Id: "t1", ContextId: "c1",
		Status: &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_WORKING}}}}}
	for i := range n {
		log = append(log, &a2a.StreamResponse{Payload: &a2a.StreamResponse_ArtifactUpdate{ArtifactUpdate: &a2a.TaskArtifactUpdateEvent{
			TaskId: "t1", ContextId: "c1", Append: i > 0, LastChunk: i == n-1,
			Artifact: a2a.TextArtifact("out", fmt.Sprintf("chunk %d", i)),
		}}})
	}
	return append(log, &a2a.StreamResponse{Payload: &a2a.StreamResponse_StatusUpdate{StatusUpdate: &a2a.TaskStatusUpdateEvent{
		TaskId: "t1", ContextId: "c1", Status: &a2a.TaskStatus{State: end},
	}}})
}
