package loadgen

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"parley.dev/parley/a2a"
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
func Floor(chunks int) http.Handler {
	t := &a2a.Task{Id: ceilTaskID, ContextId: ceilCtxID,
		Status:    &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_COMPLETED, Timestamp: timestamppb.Now()},
		Artifacts: []*a2a.Artifact{{ArtifactId: "echo", Parts: []*a2a.Part{{Content: &a2a.Part_Text{Text: "hello"}}}}},
		History: []*a2a.Message{{MessageId: "m-1", ContextId: ceilCtxID, TaskId: ceilTaskID, Role: a2a.Role_ROLE_USER,
			Parts: []*a2a.Part{{Content: &a2a.Part_Text{Text: "hello"}}}}}}
	return yardstick("floor", &floor{chunks: max(chunks, 0), task: t})
}

// floor is the handler Floor returns.
type floor struct {
	chunks int
	task   *a2a.Task // GetTask's answer, but for the id
}

// ServeHTTP decodes the request, when it carries a message, and encodes
// its answer.
func (h *floor) ServeHTTP(w http.ResponseWriter, r *http.Request) {
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
	m := req.GetMessage()
	m.TaskId, m.ContextId = a2a.NewID(), a2a.NewID()
	t := &a2a.Task{Id: m.TaskId, ContextId: m.ContextId,
		Status:  &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_SUBMITTED, Timestamp: timestamppb.Now()},
		History: []*a2a.Message{m}}
	if method == "SendStreamingMessage" || strings.HasSuffix(r.URL.Path, "/message:stream") {
		h.stream(w, id, t)
		return
	}
	t.Status.State = a2a.TaskState_TASK_STATE_COMPLETED
	t.Artifacts = []*a2a.Artifact{{ArtifactId: "echo", Parts: m.Parts}}
	h.answer(w, id, &a2a.SendMessageResponse{Payload: &a2a.SendMessageResponse_Task{Task: t}})
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
	send := func(ev *a2a.StreamResponse) {
		seq++
		b := append(strconv.AppendInt([]byte("id: "), int64(seq), 10), "\ndata: "...)
		b, err := appendResult(b, id, ev)
		if err != nil {
			return
		}
		w.Write(append(b, "\n\n"...))
		if f != nil {
			f.Flush()
		}
	}
	status := func(st a2a.TaskState) {
		send(&a2a.StreamResponse{Payload: &a2a.StreamResponse_StatusUpdate{StatusUpdate: &a2a.TaskStatusUpdateEvent{
			TaskId: t.Id, ContextId: t.ContextId, Status: &a2a.TaskStatus{State: st, Timestamp: timestamppb.Now()}}}})
	}
	send(&a2a.StreamResponse{Payload: &a2a.StreamResponse_Task{Task: t}})
	status(a2a.TaskState_TASK_STATE_WORKING)
	for i := range h.chunks {
		send(&a2a.StreamResponse{Payload: &a2a.StreamResponse_ArtifactUpdate{ArtifactUpdate: &a2a.TaskArtifactUpdateEvent{
			TaskId: t.Id, ContextId: t.ContextId, Append: i > 0, LastChunk: i == h.chunks-1,
			Artifact: &a2a.Artifact{ArtifactId: "stream", Parts: []*a2a.Part{{Content: &a2a.Part_Text{Text: "chunk " + strconv.Itoa(i)}}}}}}})
	}
	status(a2a.TaskState_TASK_STATE_COMPLETED)
}
