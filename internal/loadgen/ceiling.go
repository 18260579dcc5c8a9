package loadgen

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/grpcbind"
)

// The ceiling's fixed answers have the shape and about the size of what
// Parley sends for the conformance agent.
const (
	ceilTaskID = "3f1c2b9e-7d4a-4e8f-9b6c-1a2d3e4f5a6b"
	ceilCtxID  = "8e7d6c5b-4a3f-4e2d-8c1b-0a9f8e7d6c5b"
	ceilTS     = "2026-01-01T00:00:00.000Z"
	ceilTask   = `{"id":"` + ceilTaskID + `","contextId":"` + ceilCtxID + `","status":{"state":"TASK_STATE_COMPLETED","timestamp":"` + ceilTS +
		`"},"artifacts":[{"artifactId":"echo","parts":[{"text":"hello"}]}],"history":[{"messageId":"m-1","contextId":"` + ceilCtxID +
		`","taskId":"` + ceilTaskID + `","role":"ROLE_USER","parts":[{"text":"hello"}]}]}`
)

// Ceiling is the cheapest responder that still answers the load's requests
// in the right shape: a fixed completed task for SendMessage and GetTask, a
// fixed stream of chunks artifact chunks for SendStreamingMessage (each
// event flushed on its own, as a real server sends them), over JSON-RPC
// (POST to any other path) and HTTP+JSON, and over gRPC (HTTP/2 without
// TLS: the same answers as gRPC messages, with no connect-go and no codec,
// so that it measures what HTTP/2 itself costs). It keeps no store and
// validates nothing; it is the yardstick Parley's throughput is measured
// against (docs/performance.md).
func Ceiling(chunks int) http.Handler {
	if chunks < 0 {
		chunks = 0
	}
	h := &ceiling{
		restTask: []byte(ceilTask),
		restSend: []byte(`{"task":` + ceilTask + `}`),
		rpcTask:  []byte(`{"jsonrpc":"2.0","id":1,"result":` + ceilTask + `}`),
		rpcSend:  []byte(`{"jsonrpc":"2.0","id":1,"result":{"task":` + ceilTask + `}}`),
	}
	h.restStream = streamEvents(chunks, func(s string) string { return s })
	h.rpcStream = streamEvents(chunks, func(s string) string { return `{"jsonrpc":"2.0","id":1,"result":` + s + `}` })
	h.grpcTask, h.grpcSend, h.grpcStream = ceilingGRPC(h.restStream)
	h.restLen = []string{strconv.Itoa(len(h.restTask))}
	h.restSendLen = []string{strconv.Itoa(len(h.restSend))}
	h.rpcTaskLen = []string{strconv.Itoa(len(h.rpcTask))}
	h.rpcSendLen = []string{strconv.Itoa(len(h.rpcSend))}
	return yardstick("ceiling", h)
}

// ceiling is the handler Ceiling returns: answers built once, with their
// Content-Length values.
type ceiling struct {
	restTask, restSend, rpcTask, rpcSend         []byte
	restStream, rpcStream                        [][]byte
	restLen, restSendLen, rpcTaskLen, rpcSendLen []string
	grpcTask, grpcSend                           []byte   // gRPC messages, framed
	grpcStream                                   [][]byte // the stream's events, framed
}

// Header values and JSON-RPC method names, allocated once.
var (
	ctJSON    = []string{"application/json"}
	ctA2A     = []string{"application/a2a+json"}
	ctSSE     = []string{"text/event-stream"}
	noCache   = []string{"no-cache"}
	methodSSE = []byte(`"SendStreamingMessage"`)
	methodGet = []byte(`"GetTask"`)
)

// streamEvents is the SSE events of a "stream N" task: the submitted task,
// WORKING, the chunks, COMPLETED, each wrapped by wrap.
func streamEvents(chunks int, wrap func(string) string) [][]byte {
	ids := `"taskId":"` + ceilTaskID + `","contextId":"` + ceilCtxID + `"`
	payloads := []string{
		`{"task":{"id":"` + ceilTaskID + `","contextId":"` + ceilCtxID + `","status":{"state":"TASK_STATE_SUBMITTED","timestamp":"` + ceilTS +
			`"},"history":[{"messageId":"m-1","contextId":"` + ceilCtxID + `","taskId":"` + ceilTaskID + `","role":"ROLE_USER","parts":[{"text":"stream ` +
			strconv.Itoa(chunks) + `"}]}]}}`,
		`{"statusUpdate":{` + ids + `,"status":{"state":"TASK_STATE_WORKING","timestamp":"` + ceilTS + `"}}}`,
	}
	for i := range chunks {
		extra := ""
		if i > 0 {
			extra += `,"append":true`
		}
		if i == chunks-1 {
			extra += `,"lastChunk":true`
		}
		payloads = append(payloads, `{"artifactUpdate":{`+ids+`,"artifact":{"artifactId":"stream","parts":[{"text":"chunk `+strconv.Itoa(i)+`"}]}`+extra+`}}`)
	}
	payloads = append(payloads, `{"statusUpdate":{`+ids+`,"status":{"state":"TASK_STATE_COMPLETED","timestamp":"`+ceilTS+`"}}}`)
	out := make([][]byte, len(payloads))
	for i, p := range payloads {
		out[i] = []byte("id: " + strconv.Itoa(i+1) + "\ndata: " + wrap(p) + "\n\n")
	}
	return out
}

// ServeHTTP answers one request with the fixed answer its operation
// gets.
func (h *ceiling) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hdr := w.Header()
	switch {
	case r.ProtoMajor == 2 && strings.HasPrefix(r.Header.Get("Content-Type"), "application/grpc"):
		h.serveGRPC(w, r)
	case r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/tasks/"):
		hdr["Content-Type"], hdr["Content-Length"] = ctA2A, h.restLen
		w.Write(h.restTask)
	case r.Method != http.MethodPost:
		http.NotFound(w, r)
	case strings.HasSuffix(r.URL.Path, "/message:send"):
		io.Copy(io.Discard, r.Body)
		hdr["Content-Type"], hdr["Content-Length"] = ctA2A, h.restSendLen
		w.Write(h.restSend)
	case strings.HasSuffix(r.URL.Path, "/message:stream"):
		io.Copy(io.Discard, r.Body)
		h.stream(w, h.restStream)
	default: // JSON-RPC: peek at the method, nothing more
		var buf [512]byte
		n, _ := io.ReadFull(r.Body, buf[:])
		io.Copy(io.Discard, r.Body)
		switch body := buf[:n]; {
		case bytes.Contains(body, methodSSE):
			h.stream(w, h.rpcStream)
		case bytes.Contains(body, methodGet):
			hdr["Content-Type"], hdr["Content-Length"] = ctJSON, h.rpcTaskLen
			w.Write(h.rpcTask)
		default:
			hdr["Content-Type"], hdr["Content-Length"] = ctJSON, h.rpcSendLen
			w.Write(h.rpcSend)
		}
	}
}

// stream writes the events of an SSE stream, flushing each.
func (h *ceiling) stream(w http.ResponseWriter, events [][]byte) {
	hdr := w.Header()
	hdr["Content-Type"], hdr["Cache-Control"] = ctSSE, noCache
	f, _ := w.(http.Flusher)
	for _, e := range events {
		w.Write(e)
		if f != nil {
			f.Flush()
		}
	}
}

// The ceiling's gRPC answers: a trivial HTTP/2 handler, no connect-go and
// no codec, writing fixed messages and the OK status as trailers.
var (
	ctGRPC      = []string{"application/grpc"}
	grpcOK      = []string{"0"}
	trailerName = []string{"Grpc-Status"}
)

// ceilingGRPC returns the ceiling's fixed answers as gRPC messages: the
// task, SendMessage's answer, and the events of restStream (the JSON of
// each decoded once, here, and encoded in binary).
func ceilingGRPC(restStream [][]byte) (task, send []byte, stream [][]byte) {
	t := new(a2a.Task)
	if err := a2a.Unmarshal([]byte(ceilTask), t); err != nil {
		panic(err)
	}
	frame := func(m proto.Message) []byte {
		b, err := proto.Marshal(m)
		if err != nil {
			panic(err)
		}
		return grpcbind.AppendFrame(nil, b)
	}
	for _, ev := range restStream {
		_, data, _ := bytes.Cut(ev, []byte("data: "))
		resp := new(a2a.StreamResponse)
		if err := a2a.Unmarshal(bytes.TrimSpace(data), resp); err != nil {
			panic(err)
		}
		stream = append(stream, frame(resp))
	}
	return frame(t), frame(&a2a.SendMessageResponse{Payload: &a2a.SendMessageResponse_Task{Task: t}}), stream
}

// serveGRPC answers a gRPC call with the fixed answer of its procedure.
func (h *ceiling) serveGRPC(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	hdr := w.Header()
	hdr["Content-Type"], hdr["Trailer"] = ctGRPC, trailerName
	switch {
	case strings.HasSuffix(r.URL.Path, "/SendStreamingMessage"):
		f, _ := w.(http.Flusher)
		for _, e := range h.grpcStream {
			w.Write(e)
			if f != nil {
				f.Flush()
			}
		}
	case strings.HasSuffix(r.URL.Path, "/GetTask"):
		w.Write(h.grpcTask)
	default:
		w.Write(h.grpcSend)
	}
	hdr["Grpc-Status"] = grpcOK
}
