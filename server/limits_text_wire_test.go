package server_test

// Control characters, format characters, line and paragraph separators
// and bytes that are not UTF-8 in identifiers, over the real wire of every
// binding (in a body, a REST path segment or the tenant segment): refused with InvalidParams naming the field,
// whether the core finds them (a NUL, in a body or in a REST path segment)
// or the decoder does (bytes that are not UTF-8), and nothing is stored.

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/a2aconnect"
	"parley.dev/parley/internal/testkit"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/memstore"
)

// writeSpy counts the tasks and messages written to a store.
type writeSpy struct {
	taskstore.Store
	writes atomic.Int32
}

func (s *writeSpy) CreateTask(ctx context.Context, sc taskstore.Scope, t *a2a.Task, ev taskstore.Event) error {
	s.writes.Add(1)
	return s.Store.CreateTask(ctx, sc, t, ev)
}

func (s *writeSpy) Append(ctx context.Context, sc taskstore.Scope, id string, ev taskstore.Event) error {
	s.writes.Add(1)
	return s.Store.Append(ctx, sc, id, ev)
}

func (s *writeSpy) PutMessage(ctx context.Context, sc taskstore.Scope, r *taskstore.MessageRecord) (*taskstore.MessageRecord, error) {
	s.writes.Add(1)
	return s.Store.PutMessage(ctx, sc, r)
}

// TestIDControlCharsOnTheWire: a NUL in a messageId, in a task id sent in
// a REST path segment (or the body), a format character (U+202E, U+200B,
// U+FEFF) or a line or paragraph separator in an id, an extension URI or a
// tenant, and a byte that is not UTF-8 in a messageId are InvalidParams on
// each binding, with a BadRequest
// violation on the field (JSON-RPC, HTTP+JSON) or a message naming it
// (gRPC, whose decoder refuses the bytes first); nothing is written.
func TestIDControlCharsOnTheWire(t *testing.T) {
	t.Parallel()
	for _, b := range wireBindings {
		t.Run(b, func(t *testing.T) {
			t.Parallel()
			spy := &writeSpy{Store: memstore.New()}
			srv := testkit.StartServer(t, &testkit.Options{Quiet: true, Store: spy})
			w := &wireServer{url: srv.URL, grpc: a2aconnect.NewA2AServiceClient(testkit.H2CClient(), srv.URL, connect.WithGRPC())}

			send := func(mod func(m *a2a.Message)) *a2a.SendMessageRequest {
				req := userMsg("x")
				mod(req.Message)
				return req
			}
			const control, format, separator = "contains a control character", "contains a format character", "contains a line or paragraph separator"
			for _, tc := range []struct {
				name, op, field, says string
				req                   proto.Message
			}{
				{"NUL in messageId", a2a.MethodSendMessage, "message.messageId", control, send(func(m *a2a.Message) { m.MessageId = "bad\x00id" })},
				{"NUL in a task id", a2a.MethodGetTask, "id", control, &a2a.GetTaskRequest{Id: "task\x00id"}},
				{"ESC in a push task id", a2a.MethodListTaskPushNotificationConfigs, "taskId", control, &a2a.ListTaskPushNotificationConfigsRequest{TaskId: "\x1b[2J"}},
				{"RLO in contextId", a2a.MethodSendMessage, "message.contextId", format, send(func(m *a2a.Message) { m.ContextId = "ctx\u202egpj.exe" })},
				{"ZWSP in an extension URI", a2a.MethodSendMessage, "message.extensions[0]", format, send(func(m *a2a.Message) { m.Extensions = []string{"https://ext.example/\u200bv1"} })},
				{"BOM in a task id", a2a.MethodGetTask, "id", format, &a2a.GetTaskRequest{Id: "\ufefftask"}},
				{"LS in a tenant", a2a.MethodGetTask, "tenant", separator, &a2a.GetTaskRequest{Id: "t", Tenant: "acme\u2028admin"}},
				{"PS in a push config id", a2a.MethodCreateTaskPushNotificationConfig, "id", separator, &a2a.TaskPushNotificationConfig{TaskId: "t", Id: "cfg\u2029", Url: "https://hooks.example/"}},
			} {
				o := w.call(t, b, tc.op, tc.req)
				o.wantCode(t, tc.name, b, a2a.CodeInvalidParams)
				if v := o.violation(t, tc.name, tc.field); v.Field != "" && !strings.Contains(o.message, tc.field+": "+tc.says) {
					t.Errorf("%s: message %q does not name the field and the fault", tc.name, o.message)
				}
			}

			// Bytes that are not UTF-8 cannot be sent by a conforming
			// encoder: the request is written by hand.
			o := sendRawMessageID(t, w, b, "bad\xffid")
			o.wantCode(t, "a byte that is not UTF-8", b, a2a.CodeInvalidParams)
			if !strings.Contains(o.message, "message.messageId: is not valid UTF-8") {
				t.Errorf("not UTF-8: message %q does not name the field", o.message)
			}
			if b != a2a.BindingGRPC {
				o.violation(t, "not UTF-8", "message.messageId")
			}

			if n := spy.writes.Load(); n != 0 {
				t.Errorf("%d writes to the store after refused requests", n)
			}
			if ok := w.call(t, b, a2a.MethodSendMessage, userMsg("hello")); ok.failed() {
				t.Errorf("a valid send after the refusals: %+v", ok)
			}
		})
	}
}

// sendRawMessageID sends SendMessage with the message id id, written into
// the encoded request as raw bytes (an encoder would refuse them).
func sendRawMessageID(t *testing.T, w *wireServer, binding, id string) outcome {
	t.Helper()
	mark := strings.Repeat("M", len(id)) // same length: gRPC's length prefixes hold
	req := userMsg("x")
	req.Message.MessageId = mark
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	switch binding {
	case a2a.BindingJSONRPC, a2a.BindingHTTPJSON:
		params, err := a2a.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		params = bytes.Replace(params, []byte(mark), []byte(id), 1)
		u, body := w.url+"/message:send", params
		if binding == a2a.BindingJSONRPC {
			u = w.url + "/"
			body = append(append([]byte(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":`), params...), '}')
		}
		resp, b := w.post(t, ctx, http.MethodPost, u, body)
		var env struct {
			Error *struct {
				Code    int               `json:"code"`
				Status  string            `json:"status"`
				Message string            `json:"message"`
				Data    []json.RawMessage `json:"data"`
				Details []json.RawMessage `json:"details"`
			} `json:"error"`
		}
		if err := json.Unmarshal(b, &env); err != nil || env.Error == nil {
			t.Fatalf("%s answer %.300q: %v", binding, b, err)
		}
		o := outcome{status: resp.StatusCode, message: env.Error.Message}
		if binding == a2a.BindingJSONRPC {
			o.status = env.Error.Code
			o.details(t, env.Error.Data)
		} else {
			o.details(t, env.Error.Details)
		}
		return o
	}
	// gRPC: the binary encoding, framed by hand.
	msg, err := proto.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	msg = bytes.Replace(msg, []byte(mark), []byte(id), 1)
	frame := append([]byte{0, byte(len(msg) >> 24), byte(len(msg) >> 16), byte(len(msg) >> 8), byte(len(msg))}, msg...)
	hr, _ := http.NewRequestWithContext(ctx, http.MethodPost, w.url+"/"+a2aconnect.A2AServiceName+"/SendMessage", bytes.NewReader(frame))
	hr.Header.Set("Content-Type", "application/grpc")
	hr.Header.Set("Te", "trailers")
	hr.Header.Set("A2A-Version", a2a.ProtocolVersion)
	resp, err := testkit.H2CClient().Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	var code int
	for _, h := range []http.Header{resp.Trailer, resp.Header} {
		if s := h.Get("Grpc-Status"); s != "" {
			code = int(s[0] - '0')
			if len(s) == 2 {
				code = code*10 + int(s[1]-'0')
			}
			m, _ := url.PathUnescape(h.Get("Grpc-Message"))
			return outcome{status: code, message: m}
		}
	}
	t.Fatalf("gRPC answer without a status: %v", resp.Header)
	return outcome{}
}
