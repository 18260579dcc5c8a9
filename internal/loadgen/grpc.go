package loadgen

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/grpcbind"
)

// The gRPC binding (BindingGRPC): the requests are gRPC messages over
// HTTP/2 without TLS (h2c, prior knowledge), each worker on a connection
// of its own as over HTTP/1.1, one call at a time (h2Conn). The message
// bytes are built once, the messageId rewritten in place as for the other
// bindings.

// grpcService is the path prefix of the A2A service's procedures (spec
// §10.3).
const grpcService = "/lf.a2a.v1.A2AService/"

// grpcRequest is the gRPC frame of req and where the messageId counter is
// in it (-1 when it holds no messageId).
func (ep *endpoint) grpcRequest(req proto.Message) (frame []byte, idOff int) {
	b, err := proto.Marshal(req)
	if err != nil {
		panic(err) // a request this package built
	}
	frame, idOff = grpcbind.AppendFrame(nil, b), -1
	if i := bytes.Index(frame, []byte(ep.msgID)); i >= 0 {
		idOff = i + len(ep.msgID) - counterDigits
	}
	return frame, idOff
}

// grpcSend is the SendMessageRequest of a message holding text, with the
// messageId id.
func grpcSend(id, text string) *a2a.SendMessageRequest {
	return &a2a.SendMessageRequest{Message: &a2a.Message{MessageId: id, Role: a2a.Role_ROLE_USER,
		Parts: []*a2a.Part{{Content: &a2a.Part_Text{Text: text}}}}}
}

// grpcOp sets t up for cfg's operation over gRPC (creating the task
// GetTask reads). Its streams carry no SSE ids: they are checked for their
// events, not for their numbers, and cannot be cut and resumed.
func (t *target) grpcOp(ctx context.Context, cfg Config) error {
	ep := t.ep
	switch cfg.Op {
	case OpSend:
		t.grpcURL, t.check = ep.grpcURL("SendMessage"), grpcCompleted
		t.req, t.idOff = ep.grpcRequest(grpcSend(ep.msgID, "hello"))
	case OpStream:
		if cfg.CutShare > 0 {
			return errors.New("cutting streams: over jsonrpc or rest only (gRPC streams carry no Last-Event-ID)")
		}
		t.grpcURL, t.check = ep.grpcURL("SendStreamingMessage"), grpcStream(cfg.Chunks)
		t.req, t.idOff = ep.grpcRequest(grpcSend(ep.msgID, "stream "+strconv.Itoa(cfg.Chunks)))
		t.chunks = cfg.Chunks
	case OpGet:
		id, err := ep.grpcCreateTask(ctx, cfg.Timeout)
		if err != nil {
			return err
		}
		t.grpcURL, t.check = ep.grpcURL("GetTask"), grpcTask(id)
		t.req, t.idOff = ep.grpcRequest(&a2a.GetTaskRequest{Id: id})
	default:
		return fmt.Errorf("op %q: want send, stream or get", cfg.Op)
	}
	return nil
}

// h2Conn is one worker's gRPC client connection (h2c.go).

// grpcMessages splits an answer into its messages; nil when its framing is
// wrong or a message is compressed (the generator accepts none).
func grpcMessages(body []byte) [][]byte {
	var msgs [][]byte
	for len(body) > 0 {
		if len(body) < 5 || body[0] != 0 {
			return nil
		}
		n := binary.BigEndian.Uint32(body[1:5])
		if uint64(len(body)-5) < uint64(n) {
			return nil
		}
		msgs, body = append(msgs, body[5:5+n]), body[5+n:]
	}
	return msgs
}

// grpcUnary returns the check of a unary answer: one message, decoded into
// a new message by newMsg, which ok accepts (or names the failure).
func grpcUnary[M proto.Message](newMsg func() M, ok func(M) string) func(int, []byte) string {
	return func(status int, body []byte) string {
		if status != http.StatusOK {
			return fmt.Sprintf("http %d", status)
		}
		msgs := grpcMessages(body)
		if len(msgs) != 1 {
			return "bad answer"
		}
		m := newMsg()
		if proto.Unmarshal(msgs[0], m) != nil {
			return "bad answer"
		}
		return ok(m)
	}
}

// grpcCompleted accepts a SendMessage answer holding a completed task.
var grpcCompleted = grpcUnary(func() *a2a.SendMessageResponse { return new(a2a.SendMessageResponse) },
	func(r *a2a.SendMessageResponse) string {
		if r.GetTask().GetStatus().GetState() != a2a.TaskState_TASK_STATE_COMPLETED {
			return "not completed"
		}
		return ""
	})

// grpcTask accepts a GetTask answer holding the task id.
func grpcTask(id string) func(int, []byte) string {
	return grpcUnary(func() *a2a.Task { return new(a2a.Task) }, func(t *a2a.Task) string {
		if t.GetId() != id {
			return "wrong task"
		}
		return ""
	})
}

// grpcStream accepts a stream of at least chunks events whose last one
// says the task completed.
func grpcStream(chunks int) func(int, []byte) string {
	return func(status int, body []byte) string {
		if status != http.StatusOK {
			return fmt.Sprintf("http %d", status)
		}
		msgs := grpcMessages(body)
		if msgs == nil {
			return "bad answer"
		}
		last := new(a2a.StreamResponse)
		if len(msgs) < chunks || proto.Unmarshal(msgs[len(msgs)-1], last) != nil ||
			last.GetStatusUpdate().GetStatus().GetState() != a2a.TaskState_TASK_STATE_COMPLETED {
			return "short stream"
		}
		return ""
	}
}

// grpcCreateTask sends one blocking message over gRPC and returns the id of
// its task (the task the GetTask load reads).
func (ep *endpoint) grpcCreateTask(ctx context.Context, timeout time.Duration) (string, error) {
	frame, _ := ep.grpcRequest(grpcSend(strings.Replace(ep.msgID, "-0000-", "-ffff-", 1), "hello")) // not a worker's messageId
	c := newH2Conn(ep.grpcURL("SendMessage"), nil)
	defer c.close()
	deadline := time.Now().Add(timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	status, body, err := c.roundTrip(frame, deadline)
	if err != nil {
		return "", fmt.Errorf("creating the task to get: %w", err)
	}
	msgs := grpcMessages(body)
	r := new(a2a.SendMessageResponse)
	if status != http.StatusOK || len(msgs) != 1 || proto.Unmarshal(msgs[0], r) != nil || r.GetTask().GetId() == "" {
		return "", fmt.Errorf("creating the task to get: HTTP %d, %d messages, no task id", status, len(msgs))
	}
	return r.GetTask().GetId(), nil
}

// grpcURL is the URL of the A2A procedure named name.
func (ep *endpoint) grpcURL(name string) string {
	return "http://" + ep.host + ep.base + grpcService + name
}
