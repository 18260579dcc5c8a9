package server_test

// The request bounds and task quotas over the real wire: a2ahttp in front
// of the core on a loopback port, raw JSON-RPC and HTTP+JSON requests and
// gRPC calls, so that every binding is seen to refuse the same requests
// with its own shape of the same error, and to go on serving.

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/a2aconnect"
	"parley.dev/parley/internal/rest"
	"parley.dev/parley/internal/testkit"
	"parley.dev/parley/server"
)

// wireBindings are the three bindings every wire test runs on.
var wireBindings = []string{a2a.BindingJSONRPC, a2a.BindingHTTPJSON, a2a.BindingGRPC}

// outcome is one answer read off the wire: a response or an error with
// its code as the binding carries it, its ErrorInfo and BadRequest
// details, and the size of the answer.
type outcome struct {
	resp       proto.Message
	status     int    // JSON-RPC error code, HTTP status or gRPC code; 0 on success
	message    string // the error message
	reason     string // ErrorInfo.reason
	domain     string // ErrorInfo.domain
	name       string // HTTP+JSON: the error body's status (a google.rpc.Code name) and code, as "ABORTED 409"
	meta       map[string]string
	violations []a2a.FieldViolation
	size       int // bytes of the answer (HTTP bindings)
}

// failed reports whether the outcome is an error.
func (o outcome) failed() bool { return o.status != 0 }

// wantCode checks the outcome is the error code c in the binding's terms.
func (o outcome) wantCode(t testing.TB, what, binding string, c a2a.Code) {
	t.Helper()
	want := 0
	switch binding {
	case a2a.BindingJSONRPC:
		want = c.JSONRPC()
	case a2a.BindingHTTPJSON:
		want = c.HTTPStatus()
	case a2a.BindingGRPC:
		want, _ = c.GRPCStatus()
	}
	if o.status != want {
		t.Errorf("%s over %s: status %d (%s), want %d (%s)", what, binding, o.status, o.message, want, c.Name())
	}
}

// violation returns the outcome's BadRequest violation on field.
func (o outcome) violation(t testing.TB, what, field string) a2a.FieldViolation {
	t.Helper()
	for _, v := range o.violations {
		if v.Field == field {
			return v
		}
	}
	t.Errorf("%s: violations %v (message %q), want one on %s", what, o.violations, o.message, field)
	return a2a.FieldViolation{}
}

// wireServer is a loopback server and a raw caller of it.
type wireServer struct {
	url     string
	grpc    a2aconnect.A2AServiceClient
	version string // the A2A-Version of the HTTP bindings' requests ("": 1.0)
}

// startWire serves the conformance agent with limits on every binding.
func startWire(t testing.TB, limits server.Limits) *wireServer {
	s := testkit.StartServer(t, &testkit.Options{Quiet: true, Mutate: func(_ *a2a.AgentCard, o *server.Options) { o.Limits = limits }})
	return &wireServer{url: s.URL, grpc: a2aconnect.NewA2AServiceClient(testkit.H2CClient(), s.URL, connect.WithGRPC())}
}

// call sends req as the operation over the binding.
func (w *wireServer) call(t testing.TB, binding, op string, req proto.Message) outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	m := a2a.MethodByName(op)
	switch binding {
	case a2a.BindingJSONRPC:
		return w.jsonrpc(t, ctx, m, req)
	case a2a.BindingHTTPJSON:
		return w.rest(t, ctx, m, req)
	}
	return w.grpcCall(t, ctx, m, req)
}

func (w *wireServer) post(t testing.TB, ctx context.Context, verb, url string, body []byte) (*http.Response, []byte) {
	t.Helper()
	hr, err := http.NewRequestWithContext(ctx, verb, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	hr.Header.Set("A2A-Version", cmp.Or(w.version, a2a.ProtocolVersion))
	if body != nil {
		hr.Header.Set("Content-Type", "application/a2a+json")
	}
	resp, err := http.DefaultClient.Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

func (w *wireServer) jsonrpc(t testing.TB, ctx context.Context, m *a2a.Method, req proto.Message) outcome {
	t.Helper()
	params, err := a2a.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	body := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":1,"method":%q,"params":%s}`, m.Name, params)
	_, b := w.post(t, ctx, "POST", w.url+"/", body)
	var env struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int               `json:"code"`
			Message string            `json:"message"`
			Data    []json.RawMessage `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal(b, &env); err != nil {
		t.Fatalf("JSON-RPC answer %.200q: %v", b, err)
	}
	o := outcome{size: len(b)}
	if env.Error == nil {
		o.resp = m.NewResponse()
		if err := a2a.Unmarshal(env.Result, o.resp); err != nil {
			t.Fatalf("JSON-RPC result: %v", err)
		}
		return o
	}
	o.status, o.message = env.Error.Code, env.Error.Message
	o.details(t, env.Error.Data)
	return o
}

func (w *wireServer) rest(t testing.TB, ctx context.Context, m *a2a.Method, req proto.Message) outcome {
	t.Helper()
	r, err := rest.EncodeRequest(m, req, "")
	if err != nil {
		t.Fatal(err)
	}
	u := w.url + r.Path
	if r.Query != "" {
		u += "?" + r.Query
	}
	resp, b := w.post(t, ctx, r.Verb, u, r.Body)
	o := outcome{size: len(b)}
	if resp.StatusCode == http.StatusOK {
		o.resp = m.NewResponse()
		if err := a2a.Unmarshal(b, o.resp); err != nil {
			t.Fatalf("REST answer %.200q: %v", b, err)
		}
		return o
	}
	var body struct {
		Error struct {
			Code    int               `json:"code"`
			Status  string            `json:"status"`
			Message string            `json:"message"`
			Details []json.RawMessage `json:"details"`
		} `json:"error"`
	}
	if err := json.Unmarshal(b, &body); err != nil {
		t.Fatalf("REST error body %.200q: %v", b, err)
	}
	o.status, o.message = resp.StatusCode, body.Error.Message
	o.name = fmt.Sprint(body.Error.Status, " ", body.Error.Code)
	o.details(t, body.Error.Details)
	return o
}

// details reads ErrorInfo and BadRequest from a JSON details array.
func (o *outcome) details(t testing.TB, details []json.RawMessage) {
	for _, d := range details {
		var x struct {
			Type            string               `json:"@type"`
			Reason          string               `json:"reason"`
			Domain          string               `json:"domain"`
			Metadata        map[string]string    `json:"metadata"`
			FieldViolations []a2a.FieldViolation `json:"fieldViolations"`
		}
		if err := json.Unmarshal(d, &x); err != nil {
			t.Fatalf("detail %s: %v", d, err)
		}
		switch x.Type {
		case "type.googleapis.com/google.rpc.ErrorInfo":
			o.reason, o.domain, o.meta = x.Reason, x.Domain, x.Metadata
		case "type.googleapis.com/google.rpc.BadRequest":
			o.violations = x.FieldViolations
		}
	}
}

func (w *wireServer) grpcCall(t testing.TB, ctx context.Context, m *a2a.Method, req proto.Message) outcome {
	t.Helper()
	var resp proto.Message
	var err error
	switch r := req.(type) {
	case *a2a.SendMessageRequest:
		resp, err = unary(ctx, w.grpc.SendMessage, r)
	case *a2a.GetTaskRequest:
		resp, err = unary(ctx, w.grpc.GetTask, r)
	case *a2a.TaskPushNotificationConfig:
		resp, err = unary(ctx, w.grpc.CreateTaskPushNotificationConfig, r)
	case *a2a.ListTaskPushNotificationConfigsRequest:
		resp, err = unary(ctx, w.grpc.ListTaskPushNotificationConfigs, r)
	default:
		t.Fatalf("no gRPC call for %s", m.Name)
	}
	if err == nil {
		return outcome{resp: resp}
	}
	var ce *connect.Error
	if !errors.As(err, &ce) {
		t.Fatalf("gRPC %s: %v", m.Name, err)
	}
	o := outcome{status: int(ce.Code()), message: ce.Message()}
	for _, d := range ce.Details() {
		v, err := d.Value()
		if err != nil {
			continue
		}
		switch x := v.(type) {
		case *errdetails.ErrorInfo:
			o.reason, o.domain, o.meta = x.GetReason(), x.GetDomain(), x.GetMetadata()
		case *errdetails.BadRequest:
			for _, fv := range x.GetFieldViolations() {
				o.violations = append(o.violations, a2a.FieldViolation{Field: fv.GetField(), Description: fv.GetDescription()})
			}
		}
	}
	return o
}

// unary makes one gRPC call with the A2A-Version metadata.
func unary[Req, Res any](ctx context.Context, f func(context.Context, *connect.Request[Req]) (*connect.Response[Res], error), req *Req) (proto.Message, error) {
	r := connect.NewRequest(req)
	r.Header().Set("A2A-Version", a2a.ProtocolVersion)
	resp, err := f(ctx, r)
	if err != nil {
		return nil, err
	}
	return any(resp.Msg).(proto.Message), nil
}

// userMsg is a client message with a fresh id.
func userMsg(text string) *a2a.SendMessageRequest {
	return &a2a.SendMessageRequest{Message: a2a.UserMessage(text)}
}

// TestLimitsOnTheWire: each over-limit request is InvalidParams on every
// binding, naming the field and the limit in the message and in a
// BadRequest violation; the server then serves the next request.
func TestLimitsOnTheWire(t *testing.T) {
	t.Parallel()
	for _, b := range wireBindings {
		t.Run(b, func(t *testing.T) {
			t.Parallel()
			w := startWire(t, server.Limits{MaxParts: 3})
			parked := w.call(t, b, a2a.MethodSendMessage, userMsg("input-required")).resp.(*a2a.SendMessageResponse).GetTask()

			tooMany := userMsg("x")
			tooMany.Message.Parts = parts(4)
			longID := &a2a.GetTaskRequest{Id: strings.Repeat("L", 1<<20)}
			crlf := &a2a.TaskPushNotificationConfig{TaskId: parked.GetId(), Url: "https://hooks.example/x", Token: "t\r\nX-Injected: 1"}
			scheme := &a2a.TaskPushNotificationConfig{TaskId: parked.GetId(), Url: "https://hooks.example/x",
				Authentication: &a2a.AuthenticationInfo{Scheme: "Bearer\r\n", Credentials: "c"}}
			for _, tc := range []struct {
				name, op, field, limit string
				req                    proto.Message
			}{
				{"too many parts", a2a.MethodSendMessage, "message.parts", "maxParts", tooMany},
				{"a 1 MB task id", a2a.MethodGetTask, "id", "maxIdBytes", longID},
				{"CRLF in a push token", a2a.MethodCreateTaskPushNotificationConfig, "token", "", crlf},
				{"CRLF in a scheme", a2a.MethodCreateTaskPushNotificationConfig, "authentication.scheme", "", scheme},
			} {
				o := w.call(t, b, tc.op, tc.req)
				o.wantCode(t, tc.name, b, a2a.CodeInvalidParams)
				v := o.violation(t, tc.name, tc.field)
				if v.Field != "" && (!strings.Contains(o.message, v.Description) || !strings.Contains(v.Description, tc.limit)) {
					t.Errorf("%s: message %q, violation %q: want the violation, naming %q, in the message", tc.name, o.message, v.Description, tc.limit)
				}
				if o.size > 4096 || strings.Contains(o.message, "LLLLLLLL") {
					t.Errorf("%s: a %d-byte answer, message %.100q: the id is echoed", tc.name, o.size, o.message)
				}
			}

			// An undefined role number: the decoders keep it (proto3 enums
			// are open) and the core refuses it, so every binding answers
			// with the same violation.
			role := userMsg("x")
			role.Message.Role = a2a.Role(99)
			o := w.call(t, b, a2a.MethodSendMessage, role)
			o.wantCode(t, "role 99", b, a2a.CodeInvalidParams)
			if v := o.violation(t, "role 99", "message.role"); !strings.Contains(v.Description, "99") {
				t.Errorf("role 99: violation %q does not name the value", v.Description)
			}

			// Still serving.
			ok := w.call(t, b, a2a.MethodSendMessage, userMsg("hello"))
			if ok.failed() || ok.resp.(*a2a.SendMessageResponse).GetTask().GetStatus().GetState() != a2a.TaskState_TASK_STATE_COMPLETED {
				t.Errorf("a valid send after the refusals: %+v", ok)
			}
		})
	}
}

// TestQuotaOnTheWire: the open-task quota is UnsupportedOperationError on
// every binding, with ErrorInfo naming the quota.
func TestQuotaOnTheWire(t *testing.T) {
	t.Parallel()
	for _, b := range wireBindings {
		t.Run(b, func(t *testing.T) {
			t.Parallel()
			w := startWire(t, server.Limits{MaxOpenTasks: 1})
			if o := w.call(t, b, a2a.MethodSendMessage, userMsg("input-required")); o.failed() {
				t.Fatalf("first task: %+v", o)
			}
			o := w.call(t, b, a2a.MethodSendMessage, userMsg("input-required"))
			o.wantCode(t, "a second open task", b, a2a.CodeUnsupportedOperation)
			if o.reason != "UNSUPPORTED_OPERATION" || o.meta["quota"] != "maxOpenTasks" || o.meta["limit"] != "1" {
				t.Errorf("ErrorInfo reason %q metadata %v; want UNSUPPORTED_OPERATION, quota maxOpenTasks, limit 1", o.reason, o.meta)
			}
			if !strings.Contains(o.message, "quota") {
				t.Errorf("message %q does not say quota", o.message)
			}
		})
	}
}

// TestPushConfigPagingOnTheWire: ListTaskPushNotificationConfigs pages
// with pageSize and pageToken on every binding (REST in the query).
func TestPushConfigPagingOnTheWire(t *testing.T) {
	t.Parallel()
	for _, b := range wireBindings {
		t.Run(b, func(t *testing.T) {
			t.Parallel()
			w := startWire(t, server.Limits{})
			task := w.call(t, b, a2a.MethodSendMessage, userMsg("input-required")).resp.(*a2a.SendMessageResponse).GetTask()
			for i := range 5 {
				o := w.call(t, b, a2a.MethodCreateTaskPushNotificationConfig, &a2a.TaskPushNotificationConfig{
					TaskId: task.GetId(), Id: fmt.Sprintf("c%d", i), Url: "https://hooks.example/x"})
				if o.failed() {
					t.Fatalf("Create: %+v", o)
				}
			}
			var got []string
			tok := ""
			for range 5 {
				o := w.call(t, b, a2a.MethodListTaskPushNotificationConfigs, &a2a.ListTaskPushNotificationConfigsRequest{TaskId: task.GetId(), PageSize: 2, PageToken: tok})
				if o.failed() {
					t.Fatalf("List: %+v", o)
				}
				page := o.resp.(*a2a.ListTaskPushNotificationConfigsResponse)
				for _, c := range page.GetConfigs() {
					got = append(got, c.GetId())
				}
				if tok = page.GetNextPageToken(); tok == "" {
					break
				}
			}
			if strings.Join(got, ",") != "c0,c1,c2,c3,c4" {
				t.Errorf("pages gave %v", got)
			}
			o := w.call(t, b, a2a.MethodListTaskPushNotificationConfigs, &a2a.ListTaskPushNotificationConfigsRequest{TaskId: task.GetId(), PageSize: 101})
			o.wantCode(t, "pageSize 101", b, a2a.CodeInvalidParams)
			o.violation(t, "pageSize 101", "pageSize")
		})
	}
}

// TestWireStillServesUnderLoadOfRefusals: a stream of over-limit requests
// on every binding leaves the server answering valid ones promptly.
func TestWireStillServesUnderLoadOfRefusals(t *testing.T) {
	t.Parallel()
	w := startWire(t, server.Limits{})
	big := userMsg("x")
	big.Message.Parts = parts(server.DefaultMaxParts + 1)
	for range 5 {
		for _, b := range wireBindings {
			w.call(t, b, a2a.MethodSendMessage, big).wantCode(t, "1001 parts", b, a2a.CodeInvalidParams)
		}
	}
	start := time.Now()
	for _, b := range wireBindings {
		if o := w.call(t, b, a2a.MethodSendMessage, userMsg("hello")); o.failed() {
			t.Errorf("%s: %+v", b, o)
		}
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("three valid sends took %v", d)
	}
}
