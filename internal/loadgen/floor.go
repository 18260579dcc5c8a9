package loadgen

import (
	"context"
	"encoding/json"
	"io"
	"iter"
	"net/http"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/grpcbind"
	"parley.dev/parley/internal/jsonrpc"
)

// Floor is the ceiling responder plus the JSON work every A2A server does
// per request: it decodes each request's message with Parley's codec
// (a2a.Unmarshal, after the JSON-RPC server's own envelope reading,
// jsonrpc.DecodeRequest, for a JSON-RPC request), builds the
// answer for it (new task and context ids, a timestamp, the message
// echoed as the artifact and the history) and encodes that answer
// (a2a.AppendJSON), each stream event on its own; GetTask decodes the id
// and encodes a task built once, under that id. Like the ceiling it keeps
// no store, runs no agent and validates nothing: a server measured against
// it shows what its store, its agent and the protocol's rules cost, apart
// from the JSON a request and its answer cost anyway (docs/performance.md).
//
// A gRPC request (Content-Type application/grpc, over HTTP/2 without TLS)
// gets the same answers through grpcbind.NewBareHandler: connect-go and
// Parley's gRPC codecs, as `parley serve` decodes and encodes them.
func Floor(chunks int) http.Handler {
	t := &a2a.Task{Id: ceilTaskID, ContextId: ceilCtxID,
		Status:    &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_COMPLETED, Timestamp: timestamppb.Now()},
		Artifacts: []*a2a.Artifact{{ArtifactId: "echo", Parts: []*a2a.Part{{Content: &a2a.Part_Text{Text: "hello"}}}}},
		History: []*a2a.Message{{MessageId: "m-1", ContextId: ceilCtxID, TaskId: ceilTaskID, Role: a2a.Role_ROLE_USER,
			Parts: []*a2a.Part{{Content: &a2a.Part_Text{Text: "hello"}}}}}}
	h := &floor{chunks: max(chunks, 0), task: t}
	h.grpc = grpcbind.NewBareHandler(a2a.InvokerFuncs{CallFunc: h.call, StreamFunc: h.callStream})
	return yardstick("floor", h)
}

// floor is the handler Floor returns.
type floor struct {
	chunks int
	task   *a2a.Task    // GetTask's answer, but for the id
	grpc   http.Handler // the gRPC binding (grpcbind.NewBareHandler over call and callStream)
}

// ServeHTTP decodes the request, when it carries a message, and encodes
// its answer.
func (h *floor) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if grpcbind.IsGRPC(r) {
		h.grpc.ServeHTTP(w, r)
		return
	}
	if r.Method == http.MethodGet { // REST GetTask: /tasks/{id}
		_, id, _ := strings.Cut(r.URL.Path, "/tasks/")
		h.answer(w, nil, h.taskWithID(id))
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	var id json.RawMessage
	var method string
	params := body
	if !strings.Contains(r.URL.Path, "/message:") { // JSON-RPC
		if id, method, params, err = jsonrpc.DecodeRequest(body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
	}
	if method == "GetTask" {
		req := new(a2a.GetTaskRequest)
		if err := a2a.Unmarshal(params, req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		h.answer(w, id, h.taskWithID(req.GetId()))
		return
	}
	req := new(a2a.SendMessageRequest)
	if err := a2a.Unmarshal(params, req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	t := h.newTask(req.GetMessage())
	if method == "SendStreamingMessage" || strings.HasSuffix(r.URL.Path, "/message:stream") {
		h.stream(w, id, t)
		return
	}
	h.answer(w, id, sent(t))
}

// newTask is the submitted task the floor makes of a message: new task
// and context ids, a timestamp, the message as its history.
func (h *floor) newTask(m *a2a.Message) *a2a.Task {
	m.TaskId, m.ContextId = a2a.NewID(), a2a.NewID()
	return &a2a.Task{Id: m.TaskId, ContextId: m.ContextId,
		Status:  &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_SUBMITTED, Timestamp: timestamppb.Now()},
		History: []*a2a.Message{m}}
}

// sent is the answer to a blocking send of t's message: t completed, the
// message echoed as its artifact.
func sent(t *a2a.Task) *a2a.SendMessageResponse {
	t.Status.State = a2a.TaskState_TASK_STATE_COMPLETED
	t.Artifacts = []*a2a.Artifact{{ArtifactId: "echo", Parts: t.History[0].Parts}}
	return &a2a.SendMessageResponse{Payload: &a2a.SendMessageResponse_Task{Task: t}}
}

// call answers a unary gRPC call as ServeHTTP answers the same operation
// over JSON: SendMessage and GetTask.
func (h *floor) call(_ context.Context, m *a2a.Method, req proto.Message) (proto.Message, error) {
	switch r := req.(type) {
	case *a2a.SendMessageRequest:
		return sent(h.newTask(r.GetMessage())), nil
	case *a2a.GetTaskRequest:
		return h.taskWithID(r.GetId()), nil
	}
	return nil, a2a.NewError(a2a.CodeMethodNotFound, "the floor does not answer %s", m.Name)
}

// callStream answers a streaming gRPC call: SendStreamingMessage, with the
// events of stream.
func (h *floor) callStream(_ context.Context, m *a2a.Method, req proto.Message) iter.Seq2[a2a.StreamEvent, error] {
	return func(yield func(a2a.StreamEvent, error) bool) {
		r, ok := req.(*a2a.SendMessageRequest)
		if !ok {
			yield(a2a.StreamEvent{}, a2a.NewError(a2a.CodeMethodNotFound, "the floor does not stream %s", m.Name))
			return
		}
		h.events(h.newTask(r.GetMessage()), func(ev *a2a.StreamResponse) bool { return yield(a2a.StreamEvent{Response: ev}, nil) })
	}
}

// taskWithID returns GetTask's answer for the id: the task built once,
// under that id.
func (h *floor) taskWithID(id string) *a2a.Task {
	return &a2a.Task{Id: id, ContextId: h.task.ContextId, Status: h.task.Status,
		Artifacts: h.task.Artifacts, History: h.task.History}
}

// appendResult appends res encoded, alone (REST, id nil) or as the result
// of a JSON-RPC response with the id.
func appendResult(b []byte, id json.RawMessage, res proto.Message) ([]byte, error) {
	if id == nil {
		return a2a.AppendJSON(b, res)
	}
	b = append(append(append(b, `{"jsonrpc":"2.0","id":`...), id...), `,"result":`...)
	b, err := a2a.AppendJSON(b, res)
	return append(b, '}'), err
}

// answer writes one JSON answer.
func (h *floor) answer(w http.ResponseWriter, id json.RawMessage, res proto.Message) {
	b, err := appendResult(nil, id, res)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	hdr := w.Header()
	hdr["Content-Type"], hdr["Content-Length"] = ctA2A, []string{strconv.Itoa(len(b))}
	if id != nil {
		hdr["Content-Type"] = ctJSON
	}
	w.Write(b)
}

// stream writes the events of a "stream N" task as the ceiling does, each
// built and encoded on its own: the submitted task t, WORKING, the
// chunks, COMPLETED.
func (h *floor) stream(w http.ResponseWriter, id json.RawMessage, t *a2a.Task) {
	hdr := w.Header()
	hdr["Content-Type"], hdr["Cache-Control"] = ctSSE, noCache
	f, _ := w.(http.Flusher)
	seq := 0
	h.events(t, func(ev *a2a.StreamResponse) bool {
		seq++
		b := append(strconv.AppendInt([]byte("id: "), int64(seq), 10), "\ndata: "...)
		b, err := appendResult(b, id, ev)
		if err != nil {
			return false
		}
		w.Write(append(b, "\n\n"...))
		if f != nil {
			f.Flush()
		}
		return true
	})
}

// events yields the events of a "stream N" task as the ceiling sends
// them, each built on its own: the submitted task t, WORKING, the chunks,
// COMPLETED; it stops when yield returns false.
func (h *floor) events(t *a2a.Task, yield func(*a2a.StreamResponse) bool) {
	status := func(st a2a.TaskState) bool {
		return yield(&a2a.StreamResponse{Payload: &a2a.StreamResponse_StatusUpdate{StatusUpdate: &a2a.TaskStatusUpdateEvent{
			TaskId: t.Id, ContextId: t.ContextId, Status: &a2a.TaskStatus{State: st, Timestamp: timestamppb.Now()}}}})
	}
	if !yield(&a2a.StreamResponse{Payload: &a2a.StreamResponse_Task{Task: t}}) || !status(a2a.TaskState_TASK_STATE_WORKING) {
		return
	}
	for i := range h.chunks {
		if !yield(&a2a.StreamResponse{Payload: &a2a.StreamResponse_ArtifactUpdate{ArtifactUpdate: &a2a.TaskArtifactUpdateEvent{
			TaskId: t.Id, ContextId: t.ContextId, Append: i > 0, LastChunk: i == h.chunks-1,
			Artifact: &a2a.Artifact{ArtifactId: "stream", Parts: []*a2a.Part{{Content: &a2a.Part_Text{Text: "chunk " + strconv.Itoa(i)}}}}}}}) {
			return
		}
	}
	status(a2a.TaskState_TASK_STATE_COMPLETED)
}
