package client_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
	"parley.dev/parley/internal/testkit"
	"parley.dev/parley/internal/version"
	"parley.dev/parley/server"
)

// TestErrorShapes: error bodies are read by their shape whatever the
// content type (docs/decisions.md#b8), with the ErrorInfo reason first and
// the HTTP status as the fallback.
func TestErrorShapes(t *testing.T) {
	t.Parallel()
	for _, tc := range slices.Concat(restErrorShapes(), jsonRPCErrorShapes()) {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checkErrorShape(t, tc)
		})
	}
}

// errorShape is an error answer of some server, and what the client must
// make of it.
type errorShape struct {
	name       string
	binding    string
	status     int
	ctype      string
	body       string
	header     map[string]string
	code       a2a.Code // 0: a TransportError is expected
	statusCode int      // of the TransportError
	meta       map[string]string
	violations []string
}

// errorInfo is a google.rpc.ErrorInfo detail in its JSON form.
const errorInfo = `{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org","metadata":{"taskId":"t9"}}`

// checkErrorShape has a fake server answer tc's error to GetTask and checks
// the error the client returns.
func checkErrorShape(t *testing.T, tc errorShape) {
	b := bindings[1]
	if tc.binding == a2a.BindingJSONRPC {
		b = bindings[0]
	}
	c := fakeClient(t, b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k, v := range tc.header {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", tc.ctype)
		w.WriteHeader(tc.status)
		io.WriteString(w, tc.body)
	}))
	_, err := c.GetTask(testCtx(t), &a2a.GetTaskRequest{Id: "t9"})
	if tc.code == 0 {
		var te *client.TransportError
		if !errors.As(err, &te) || te.StatusCode != tc.statusCode || te.Phase != client.PhaseResponse {
			t.Fatalf("GetTask = %v (%T), want a response-phase TransportError with status %d", err, err, tc.statusCode)
		}
		if te.Temporary() != (tc.statusCode >= 502 && tc.statusCode <= 504) {
			t.Errorf("Temporary() = %v for status %d", te.Temporary(), tc.statusCode)
		}
		return
	}
	var ae *a2a.Error
	if !errors.As(err, &ae) || ae.Code != tc.code {
		t.Fatalf("GetTask = %v (%T), want code %s", err, err, tc.code.Name())
	}
	for k, v := range tc.meta {
		if ae.Metadata[k] != v {
			t.Errorf("Metadata[%s] = %q, want %q (all: %v)", k, ae.Metadata[k], v, ae.Metadata)
		}
	}
	var fields []string
	for _, v := range ae.Violations {
		fields = append(fields, v.Field)
	}
	if !slices.Equal(fields, tc.violations) {
		t.Errorf("violations %q, want %q", fields, tc.violations)
	}
}

// restErrorShapes are HTTP+JSON error answers: google.rpc.Status bodies,
// problem documents and what proxies send.
func restErrorShapes() []errorShape {
	return []errorShape{
		{name: "rpc.Status a2a+json", status: 404, ctype: "application/a2a+json",
			body: `{"error":{"code":404,"status":"NOT_FOUND","message":"gone","details":[` + errorInfo + `]}}`,
			code: a2a.CodeTaskNotFound, meta: map[string]string{"taskId": "t9"}},
		{name: "rpc.Status plain json, reason wins over status", status: 400, ctype: "application/json",
			body: `{"error":{"code":400,"status":"INVALID_ARGUMENT","message":"x","details":[` + errorInfo + `]}}`,
			code: a2a.CodeTaskNotFound},
		{name: "rpc.Status problem+json (Rust)", status: 400, ctype: "application/problem+json",
			body: `{"error":{"code":400,"status":"FAILED_PRECONDITION","message":"x","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_CANCELABLE","domain":"a2a-protocol.org"}]}}`,
			code: a2a.CodeTaskNotCancelable},
		{name: "BadRequest violations", status: 400, ctype: "application/a2a+json",
			body: `{"error":{"code":400,"status":"INVALID_ARGUMENT","message":"bad","details":[{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":"pageSize","description":"too big"}]}]}}`,
			code: a2a.CodeInvalidParams, violations: []string{"pageSize"}},
		{name: "status name only", status: 400, ctype: "application/json",
			body: `{"error":{"code":400,"status":"FAILED_PRECONDITION","message":"x"}}`, code: a2a.CodeUnsupportedOperation},
		{name: "problem type URI", status: 400, ctype: "application/problem+json",
			body: `{"type":"https://a2a-protocol.org/errors/version-not-supported","title":"Version not supported","status":400,"detail":"use 1.0","supportedVersions":["1.0","1.1"]}`,
			code: a2a.CodeVersionNotSupported, meta: map[string]string{"supportedVersions": "1.0,1.1"}},
		{name: "problem title", status: 400, ctype: "application/problem+json",
			body: `{"type":"about:blank","title":"Unsupported operation","status":400}`, code: a2a.CodeUnsupportedOperation},
		{name: "problem status only", status: 404, ctype: "application/problem+json",
			body: `{"title":"Not Found","status":404}`, code: a2a.CodeTaskNotFound},
		{name: "JSON string (.NET 404)", status: 404, ctype: "application/json", body: `"Task not found"`, code: a2a.CodeTaskNotFound},
		{name: "JSON-RPC code in a REST body", status: 400, ctype: "application/json",
			body: `{"error":{"code":-32002,"message":"not cancelable"}}`, code: a2a.CodeTaskNotCancelable},
		{name: "error name as reason", status: 400, ctype: "application/json",
			body: `{"error":{"code":400,"message":"x","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"ExtensionSupportRequiredError"}]}}`,
			code: a2a.CodeExtensionSupportRequired},
		{name: "413", status: 413, ctype: "application/a2a+json",
			body: `{"error":{"code":413,"status":"RESOURCE_EXHAUSTED","message":"too big"}}`, code: a2a.CodeRequestTooLarge},
		{name: "bare 401 with challenge", status: 401, ctype: "text/plain", body: "no",
			header: map[string]string{"WWW-Authenticate": `Bearer realm="x"`}, code: a2a.CodeUnauthenticated},
		{name: "HTML 503 from a proxy", status: 503, ctype: "text/html", body: "<h1>down</h1>", statusCode: 503},
		{name: "UNAVAILABLE body", status: 503, ctype: "application/json",
			body: `{"error":{"code":503,"status":"UNAVAILABLE","message":"later"}}`, statusCode: 503},
		{name: "UNAVAILABLE body with its reason", status: 503, ctype: "application/a2a+json", header: map[string]string{"Retry-After": "1"},
			body: `{"error":{"code":503,"status":"UNAVAILABLE","message":"later","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"UNAVAILABLE","domain":"parley.dev","metadata":{"retryAfter":"1"}}]}}`,
			code: a2a.CodeUnavailable, meta: map[string]string{"retryAfter": "1"}},
		{name: "HTML 404", status: 404, ctype: "text/html", body: "<h1>no</h1>", statusCode: 404},
		{name: "success that is not JSON", status: 200, ctype: "text/html", body: "<h1>hi</h1>", statusCode: 200},
	}
}

// jsonRPCErrorShapes are JSON-RPC error answers, and HTTP errors on the
// JSON-RPC interface.
func jsonRPCErrorShapes() []errorShape {
	return []errorShape{
		{name: "JSON-RPC error", binding: a2a.BindingJSONRPC, status: 200, ctype: "application/json",
			body: `{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"gone","data":[` + errorInfo + `]}}`,
			code: a2a.CodeTaskNotFound, meta: map[string]string{"taskId": "t9"}},
		{name: "JSON-RPC v0.3 data object", binding: a2a.BindingJSONRPC, status: 200, ctype: "application/json",
			body: `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad","data":{"reason":"whatever"}}}`, code: a2a.CodeInvalidParams},
		{name: "JSON-RPC unknown code with reason", binding: a2a.BindingJSONRPC, status: 200, ctype: "application/json",
			body: `{"jsonrpc":"2.0","id":1,"error":{"code":-31999,"message":"x","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"UNSUPPORTED_OPERATION"}]}}`,
			code: a2a.CodeUnsupportedOperation},
		{name: "JSON-RPC unknown code", binding: a2a.BindingJSONRPC, status: 200, ctype: "application/json",
			body: `{"jsonrpc":"2.0","id":1,"error":{"code":-31999,"message":"x"}}`, code: a2a.CodeInternal, meta: map[string]string{"jsonrpcCode": "-31999"}},
		{name: "JSON-RPC error under 401", binding: a2a.BindingJSONRPC, status: 401, ctype: "application/json",
			body: `{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"who are you"}}`, code: a2a.CodeUnauthenticated},
		{name: "JSON-RPC auth proxy rpc.Status", binding: a2a.BindingJSONRPC, status: 401, ctype: "application/json",
			body: `{"error":{"code":401,"status":"UNAUTHENTICATED","message":"token"}}`, code: a2a.CodeUnauthenticated},
		{name: "JSON-RPC 502", binding: a2a.BindingJSONRPC, status: 502, ctype: "text/html", body: "bad gateway", statusCode: 502},
		{name: "JSON-RPC 503 with reason UNAVAILABLE", binding: a2a.BindingJSONRPC, status: 503, ctype: "application/json",
			body: `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"later","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"UNAVAILABLE","domain":"parley.dev"}]}}`,
			code: a2a.CodeUnavailable},
		{name: "JSON-RPC 503 -32603 without a reason", binding: a2a.BindingJSONRPC, status: 503, ctype: "application/json",
			body: `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"oops"}}`, code: a2a.CodeInternal},
		{name: "JSON-RPC wrong id", binding: a2a.BindingJSONRPC, status: 200, ctype: "application/json",
			body: `{"jsonrpc":"2.0","id":7,"result":{"id":"t","status":{"state":"TASK_STATE_WORKING"}}}`, statusCode: 0},
	}
}

// versionRewriter makes every request claim another protocol version. As
// a RoundTripper of its own it is used as it is by the gRPC transport, so
// it sends gRPC calls over cleartext HTTP/2 itself.
type versionRewriter struct{ version string }

var h2cTransport = testkit.H2CClient().Transport

func (v versionRewriter) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("A2A-Version", v.version)
	if isGRPC(r) {
		return h2cTransport.RoundTrip(r)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestErrors checks that every error the server can produce arrives as an
// *a2a.Error with its code, on every binding.
func TestErrors(t *testing.T) {
	t.Parallel()
	cases := slices.Concat(taskErrorCases(), unsupportedErrorCases(), requestErrorCases())
	for _, b := range bindings {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					t.Parallel()
					checkServerError(t, b, tc)
				})
			}
		})
	}
}

// errorSetup is what an errorCase's call works with.
type errorSetup struct {
	e    *env
	c    *client.Client
	done *a2a.Task // a completed task
}

// errorCase is a call that fails on the server, and the error it must
// produce.
type errorCase struct {
	name   string
	cfg    config
	opts   *client.Options
	code   a2a.Code
	sentry error
	call   func(ctx context.Context, s errorSetup) error
	check  func(t *testing.T, e *a2a.Error)
}

// checkServerError makes tc's server, runs its call with a client of
// binding b and checks the error.
func checkServerError(t *testing.T, b binding, tc errorCase) {
	e := start(t, tc.cfg)
	ctx := testCtx(t)
	// The completed task is made by an authorized client on the same card
	// (push and streaming do not matter here).
	maker := e.client(b, &client.Options{BearerToken: "tok", HTTPClient: http.DefaultClient})
	var done *a2a.Task
	if len(e.card.GetCapabilities().GetExtensions()) == 0 {
		done = send(t, maker, "hello", nil)
	}
	c := e.client(b, tc.opts)
	err := tc.call(ctx, errorSetup{e: e, c: c, done: done})
	if !errors.Is(err, tc.sentry) {
		t.Fatalf("error = %v (%T), want %s", err, err, tc.code.Name())
	}
	var ae *a2a.Error
	if !errors.As(err, &ae) || ae.Code != tc.code {
		t.Fatalf("error = %#v, want an *a2a.Error with code %s", err, tc.code.Name())
	}
	var te *client.TransportError
	if errors.As(err, &te) {
		t.Errorf("a server error is also a TransportError: %v", te)
	}
	if tc.check != nil {
		tc.check(t, ae)
	}
}

// taskErrorCases are the errors about the task a call names: unknown, or
// in a state the call does not fit.
func taskErrorCases() []errorCase {
	return []errorCase{
		{name: "GetTask unknown", code: a2a.CodeTaskNotFound, sentry: a2a.ErrTaskNotFound,
			call: func(ctx context.Context, s errorSetup) error {
				_, err := s.c.GetTask(ctx, &a2a.GetTaskRequest{Id: "no-such-task"})
				return err
			},
			check: func(t *testing.T, e *a2a.Error) {
				if e.Metadata["taskId"] != "no-such-task" {
					t.Errorf("Metadata = %v, want taskId no-such-task", e.Metadata)
				}
			}},
		{name: "CancelTask unknown", code: a2a.CodeTaskNotFound, sentry: a2a.ErrTaskNotFound,
			call: func(ctx context.Context, s errorSetup) error {
				_, err := s.c.CancelTask(ctx, &a2a.CancelTaskRequest{Id: "no-such-task"})
				return err
			}},
		{name: "SubscribeToTask unknown", code: a2a.CodeTaskNotFound, sentry: a2a.ErrTaskNotFound,
			call: func(ctx context.Context, s errorSetup) error {
				_, err := testkit.Collect(s.c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{Id: "no-such-task"}))
				return err
			}},
		{name: "SendMessage unknown task", code: a2a.CodeTaskNotFound, sentry: a2a.ErrTaskNotFound,
			call: func(ctx context.Context, s errorSetup) error {
				m := a2a.UserMessage("hi")
				m.TaskId = "no-such-task"
				_, err := s.c.SendMessage(ctx, &a2a.SendMessageRequest{Message: m})
				return err
			}},
		{name: "push config of unknown task", code: a2a.CodeTaskNotFound, sentry: a2a.ErrTaskNotFound,
			call: func(ctx context.Context, s errorSetup) error {
				_, err := s.c.ListTaskPushNotificationConfigs(ctx, &a2a.ListTaskPushNotificationConfigsRequest{TaskId: "no-such-task"})
				return err
			}},
		{name: "CancelTask completed", code: a2a.CodeTaskNotCancelable, sentry: a2a.ErrTaskNotCancelable,
			call: func(ctx context.Context, s errorSetup) error {
				_, err := s.c.CancelTask(ctx, &a2a.CancelTaskRequest{Id: s.done.Id})
				return err
			}},
	}
}

// unsupportedErrorCases are the calls the agent does not support: a
// capability it lacks, a terminal task, a content type, an extension.
func unsupportedErrorCases() []errorCase {
	noPush := func(card *a2a.AgentCard, _ *server.Options) { card.Capabilities.PushNotifications = ptr(false) }
	noStream := func(card *a2a.AgentCard, _ *server.Options) { card.Capabilities.Streaming = ptr(false) }
	extNotConfigured := func(card *a2a.AgentCard, _ *server.Options) { card.Capabilities.ExtendedAgentCard = ptr(true) }
	requiredExt := func(card *a2a.AgentCard, _ *server.Options) {
		card.Capabilities.Extensions = []*a2a.AgentExtension{{Uri: "https://example.com/ext/v1", Required: true}}
	}
	return []errorCase{
		{name: "push not supported", cfg: config{mutate: noPush}, code: a2a.CodePushNotificationNotSupported, sentry: a2a.ErrPushNotificationNotSupported,
			call: func(ctx context.Context, s errorSetup) error {
				_, err := s.c.CreateTaskPushNotificationConfig(ctx, &a2a.TaskPushNotificationConfig{TaskId: s.done.Id, Url: "http://127.0.0.1:9/hook"})
				return err
			}},
		{name: "SendMessage to terminal task", code: a2a.CodeUnsupportedOperation, sentry: a2a.ErrUnsupportedOperation,
			call: func(ctx context.Context, s errorSetup) error {
				m := a2a.UserMessage("again")
				m.TaskId = s.done.Id
				_, err := s.c.SendMessage(ctx, &a2a.SendMessageRequest{Message: m})
				return err
			}},
		{name: "SubscribeToTask terminal task", code: a2a.CodeUnsupportedOperation, sentry: a2a.ErrUnsupportedOperation,
			call: func(ctx context.Context, s errorSetup) error {
				_, err := testkit.Collect(s.c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{Id: s.done.Id}))
				return err
			}},
		{name: "streaming not supported", cfg: config{mutate: noStream}, code: a2a.CodeUnsupportedOperation, sentry: a2a.ErrUnsupportedOperation,
			call: func(ctx context.Context, s errorSetup) error {
				_, err := testkit.Collect(s.c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("hi")}))
				return err
			}},
		{name: "extended card not declared", code: a2a.CodeUnsupportedOperation, sentry: a2a.ErrUnsupportedOperation,
			call: func(ctx context.Context, s errorSetup) error {
				_, err := s.c.GetExtendedAgentCard(ctx, &a2a.GetExtendedAgentCardRequest{})
				return err
			}},
		{name: "content type not supported", code: a2a.CodeContentTypeNotSupported, sentry: a2a.ErrContentTypeNotSupported,
			call: func(ctx context.Context, s errorSetup) error {
				m := a2a.UserMessage("x")
				m.Parts = append(m.Parts, &a2a.Part{Content: &a2a.Part_Raw{Raw: []byte{1, 2}}, MediaType: "image/png"})
				_, err := s.c.SendMessage(ctx, &a2a.SendMessageRequest{Message: m})
				return err
			},
			check: func(t *testing.T, e *a2a.Error) {
				if e.Metadata["mediaType"] != "image/png" {
					t.Errorf("Metadata = %v, want mediaType image/png", e.Metadata)
				}
			}},
		{name: "extended card not configured", cfg: config{tokens: map[string]string{"tok": "bob"}, mutate: extNotConfigured},
			opts: &client.Options{BearerToken: "tok"}, code: a2a.CodeExtendedAgentCardNotConfigured, sentry: a2a.ErrExtendedAgentCardNotConfigured,
			call: func(ctx context.Context, s errorSetup) error {
				_, err := s.c.GetExtendedAgentCard(ctx, nil)
				return err
			}},
		{name: "extension required", cfg: config{mutate: requiredExt}, code: a2a.CodeExtensionSupportRequired, sentry: a2a.ErrExtensionSupportRequired,
			call: func(ctx context.Context, s errorSetup) error {
				_, err := s.c.GetTask(ctx, &a2a.GetTaskRequest{Id: "whatever"})
				return err
			}},
	}
}

// requestErrorCases are the requests refused for what they carry: a
// version, parameters, credentials.
func requestErrorCases() []errorCase {
	return []errorCase{
		{name: "version not supported", opts: &client.Options{HTTPClient: &http.Client{Transport: versionRewriter{"0.3"}}},
			code: a2a.CodeVersionNotSupported, sentry: a2a.ErrVersionNotSupported,
			call: func(ctx context.Context, s errorSetup) error {
				_, err := s.c.GetTask(ctx, &a2a.GetTaskRequest{Id: "whatever"})
				return err
			},
			check: func(t *testing.T, e *a2a.Error) {
				if !strings.Contains(e.Metadata["supportedVersions"], "1.0") {
					t.Errorf("Metadata = %v, want supportedVersions listing 1.0", e.Metadata)
				}
			}},
		{name: "invalid params", code: a2a.CodeInvalidParams, sentry: a2a.ErrInvalidParams,
			call: func(ctx context.Context, s errorSetup) error {
				_, err := s.c.ListTasks(ctx, &a2a.ListTasksRequest{PageSize: ptr[int32](500)})
				return err
			},
			check: func(t *testing.T, e *a2a.Error) {
				if len(e.Violations) != 1 || e.Violations[0].Field != "pageSize" {
					t.Errorf("Violations = %v, want one on pageSize", e.Violations)
				}
			}},
		{name: "invalid history length", code: a2a.CodeInvalidParams, sentry: a2a.ErrInvalidParams,
			call: func(ctx context.Context, s errorSetup) error {
				_, err := s.c.GetTask(ctx, &a2a.GetTaskRequest{Id: s.done.Id, HistoryLength: ptr[int32](-1)})
				return err
			}},
		{name: "unauthenticated", cfg: config{tokens: map[string]string{"tok": "bob"}}, code: a2a.CodeUnauthenticated, sentry: a2a.ErrUnauthenticated,
			call: func(ctx context.Context, s errorSetup) error {
				_, err := s.c.GetTask(ctx, &a2a.GetTaskRequest{Id: "x"})
				return err
			}},
		{name: "wrong token", cfg: config{tokens: map[string]string{"tok": "bob"}}, opts: &client.Options{BearerToken: "nope"},
			code: a2a.CodeUnauthenticated, sentry: a2a.ErrUnauthenticated,
			call: func(ctx context.Context, s errorSetup) error {
				_, err := testkit.Collect(s.c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("hi")}))
				return err
			}},
		// The A2A 1.1 preview's conditional send, as a 1.1 call: a
		// follow-up expecting a generation the task is past.
		{name: "generation mismatch", cfg: config{mutate: func(_ *a2a.AgentCard, o *server.Options) {
			o.ProtocolVersions = []string{version.V11, a2a.ProtocolVersion}
		}}, opts: &client.Options{HTTPClient: &http.Client{Transport: versionRewriter{version.V11}}},
			code: a2a.CodeTaskGenerationMismatch, sentry: a2a.ErrTaskGenerationMismatch,
			call: func(ctx context.Context, s errorSetup) error {
				tk := send(s.e.t, s.c, "input-required", nil)
				m := a2a.UserMessage("more")
				m.TaskId = tk.Id
				_, err := s.c.SendMessage(ctx, &a2a.SendMessageRequest{Message: m,
					Configuration: &a2a.SendMessageConfiguration{IfGenerationMatch: ptr(tk.GetGeneration() - 1)}})
				if exp, cur, ok := a2a.MismatchedGenerations(err); !ok || exp != tk.GetGeneration()-1 || cur != tk.GetGeneration() {
					s.e.t.Errorf("MismatchedGenerations = %d, %d, %v; want %d, %d", exp, cur, ok, tk.GetGeneration()-1, tk.GetGeneration())
				}
				return err
			},
			check: func(t *testing.T, e *a2a.Error) {
				if e.Metadata["taskId"] == "" {
					t.Errorf("Metadata = %v, want the taskId", e.Metadata)
				}
			}},
	}
}
