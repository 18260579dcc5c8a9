package client_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
	"parley.dev/parley/server"
)

func ptr[T any](v T) *T { return &v }

// TestOperations runs every operation's success path on both bindings.
func TestOperations(t *testing.T) {
	t.Parallel()
	for _, b := range bindings {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			e := start(t, config{})
			c := e.client(b, nil)
			ctx := testCtx(t)

			// SendMessage: a task, and a direct message.
			task := send(t, c, "hello", nil)
			if st := task.GetStatus().GetState(); st != a2a.TaskState_TASK_STATE_COMPLETED {
				t.Fatalf("SendMessage(hello) state = %v, want COMPLETED", st)
			}
			if got := a2a.JoinText(task.GetArtifacts()[0].GetParts()); got != "hello" {
				t.Errorf("artifact = %q, want hello", got)
			}
			resp, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("message")})
			if err != nil || a2a.FirstText(resp.GetMessage()) != "pong" {
				t.Fatalf("SendMessage(message) = %v, %v; want the message pong", resp, err)
			}

			// A message without a messageId gets one.
			resp, err = c.SendMessage(ctx, &a2a.SendMessageRequest{Message: &a2a.Message{Role: a2a.Role_ROLE_USER, Parts: []*a2a.Part{a2a.TextPart("no id")}}})
			if err != nil {
				t.Fatalf("SendMessage without messageId = %v", err)
			}
			if id := resp.GetTask().GetHistory()[0].GetMessageId(); id == "" {
				t.Errorf("stored message has no messageId")
			}

			// GetTask, with and without history.
			got, err := c.GetTask(ctx, &a2a.GetTaskRequest{Id: task.Id})
			if err != nil || got.Id != task.Id || len(got.History) == 0 {
				t.Fatalf("GetTask(%s) = %v, %v; want the task with history", task.Id, got, err)
			}
			got, err = c.GetTask(ctx, &a2a.GetTaskRequest{Id: task.Id, HistoryLength: ptr[int32](0)})
			if err != nil || len(got.History) != 0 {
				t.Fatalf("GetTask(historyLength 0) = %v, %v; want no history", got, err)
			}

			// ListTasks with paging, filters and query parameters.
			page, err := c.ListTasks(ctx, &a2a.ListTasksRequest{PageSize: ptr[int32](1)})
			if err != nil || len(page.Tasks) != 1 || page.NextPageToken == "" || page.TotalSize != 2 {
				t.Fatalf("ListTasks(pageSize 1) = %v, %v; want 1 task of 2 and a next page", page, err)
			}
			page2, err := c.ListTasks(ctx, &a2a.ListTasksRequest{PageSize: ptr[int32](1), PageToken: page.NextPageToken})
			if err != nil || len(page2.Tasks) != 1 || page2.NextPageToken != "" || page2.Tasks[0].Id == page.Tasks[0].Id {
				t.Fatalf("ListTasks(page 2) = %v, %v; want the other task and no next page", page2, err)
			}
			page, err = c.ListTasks(ctx, &a2a.ListTasksRequest{
				ContextId: task.ContextId, Status: a2a.TaskState_TASK_STATE_COMPLETED, IncludeArtifacts: ptr(true),
				StatusTimestampAfter: a2a.Timestamp(time.Now().Add(-time.Hour)), HistoryLength: ptr[int32](1),
			})
			if err != nil || len(page.Tasks) != 1 || page.Tasks[0].Id != task.Id || len(page.Tasks[0].Artifacts) != 1 || len(page.Tasks[0].History) != 1 {
				t.Fatalf("ListTasks(filters) = %v, %v; want the one task with artifacts and one history message", page, err)
			}

			// CancelTask on a running task.
			slow := send(t, c, "slow 10000", &a2a.SendMessageConfiguration{ReturnImmediately: true})
			canceled, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{Id: slow.Id})
			if err != nil || canceled.GetStatus().GetState() != a2a.TaskState_TASK_STATE_CANCELED {
				t.Fatalf("CancelTask = %v, %v; want CANCELED", canceled, err)
			}

			// Push notification configs.
			cfg, err := c.CreateTaskPushNotificationConfig(ctx, &a2a.TaskPushNotificationConfig{TaskId: task.Id, Url: "http://127.0.0.1:9/hook", Token: "tok"})
			if err != nil || cfg.Id == "" || cfg.TaskId != task.Id {
				t.Fatalf("CreateTaskPushNotificationConfig = %v, %v", cfg, err)
			}
			gotCfg, err := c.GetTaskPushNotificationConfig(ctx, &a2a.GetTaskPushNotificationConfigRequest{TaskId: task.Id, Id: cfg.Id})
			if err != nil || !proto.Equal(gotCfg, cfg) {
				t.Fatalf("GetTaskPushNotificationConfig = %v, %v; want %v", gotCfg, err, cfg)
			}
			list, err := c.ListTaskPushNotificationConfigs(ctx, &a2a.ListTaskPushNotificationConfigsRequest{TaskId: task.Id})
			if err != nil || len(list.Configs) != 1 {
				t.Fatalf("ListTaskPushNotificationConfigs = %v, %v; want one config", list, err)
			}
			if err := c.DeleteTaskPushNotificationConfig(ctx, &a2a.DeleteTaskPushNotificationConfigRequest{TaskId: task.Id, Id: cfg.Id}); err != nil {
				t.Fatalf("DeleteTaskPushNotificationConfig = %v", err)
			}
			if _, err := c.GetTaskPushNotificationConfig(ctx, &a2a.GetTaskPushNotificationConfigRequest{TaskId: task.Id, Id: cfg.Id}); !errors.Is(err, a2a.ErrTaskNotFound) {
				t.Fatalf("GetTaskPushNotificationConfig after delete = %v, want TaskNotFound", err)
			}

			// A nil request is an empty one: the server says what is missing.
			if _, err := c.GetTask(ctx, nil); !errors.Is(err, a2a.ErrInvalidParams) {
				t.Errorf("GetTask(nil) = %v, want InvalidParams", err)
			}
		})
	}
}

// TestExtendedCard covers GetExtendedAgentCard with authentication.
func TestExtendedCard(t *testing.T) {
	t.Parallel()
	extended := func(card *a2a.AgentCard, o *server.Options) {
		card.Capabilities.ExtendedAgentCard = ptr(true)
		ext := proto.Clone(card).(*a2a.AgentCard)
		ext.Name = "extended"
		o.ExtendedCard = ext
	}
	for _, b := range bindings {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			e := start(t, config{tokens: map[string]string{"secret": "alice"}, mutate: extended})
			ctx := testCtx(t)
			card, err := e.client(b, &client.Options{BearerToken: "secret"}).GetExtendedAgentCard(ctx, nil)
			if err != nil || card.Name != "extended" {
				t.Fatalf("GetExtendedAgentCard = %v, %v; want the extended card", card, err)
			}
			if _, err := e.client(b, nil).GetExtendedAgentCard(ctx, nil); !errors.Is(err, a2a.ErrUnauthenticated) {
				t.Fatalf("GetExtendedAgentCard without a token = %v, want Unauthenticated", err)
			}
		})
	}
}

// versionRewriter makes every request claim another protocol version. As
// a RoundTripper of its own it is used as it is by the gRPC transport, so
// it sends gRPC calls over cleartext HTTP/2 itself.
type versionRewriter struct{ version string }

var h2cTransport = h2cClient().Transport

func (v versionRewriter) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("A2A-Version", v.version)
	if isGRPC(r) {
		return h2cTransport.RoundTrip(r)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestErrors checks that every error the server can produce arrives as an
// *a2a.Error with its code, on both bindings.
func TestErrors(t *testing.T) {
	t.Parallel()
	noPush := func(card *a2a.AgentCard, _ *server.Options) { card.Capabilities.PushNotifications = ptr(false) }
	noStream := func(card *a2a.AgentCard, _ *server.Options) { card.Capabilities.Streaming = ptr(false) }
	extNotConfigured := func(card *a2a.AgentCard, _ *server.Options) { card.Capabilities.ExtendedAgentCard = ptr(true) }
	requiredExt := func(card *a2a.AgentCard, _ *server.Options) {
		card.Capabilities.Extensions = []*a2a.AgentExtension{{Uri: "https://example.com/ext/v1", Required: true}}
	}
	type setup struct {
		e    *env
		c    *client.Client
		done *a2a.Task // a completed task
	}
	cases := []struct {
		name   string
		cfg    config
		opts   *client.Options
		code   a2a.Code
		sentry *a2a.Error
		call   func(ctx context.Context, s setup) error
		check  func(t *testing.T, e *a2a.Error)
	}{
		{name: "GetTask unknown", code: a2a.CodeTaskNotFound, sentry: a2a.ErrTaskNotFound,
			call: func(ctx context.Context, s setup) error {
				_, err := s.c.GetTask(ctx, &a2a.GetTaskRequest{Id: "no-such-task"})
				return err
			},
			check: func(t *testing.T, e *a2a.Error) {
				if e.Metadata["taskId"] != "no-such-task" {
					t.Errorf("Metadata = %v, want taskId no-such-task", e.Metadata)
				}
			}},
		{name: "CancelTask unknown", code: a2a.CodeTaskNotFound, sentry: a2a.ErrTaskNotFound,
			call: func(ctx context.Context, s setup) error {
				_, err := s.c.CancelTask(ctx, &a2a.CancelTaskRequest{Id: "no-such-task"})
				return err
			}},
		{name: "SubscribeToTask unknown", code: a2a.CodeTaskNotFound, sentry: a2a.ErrTaskNotFound,
			call: func(ctx context.Context, s setup) error {
				_, err := collect(s.c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{Id: "no-such-task"}))
				return err
			}},
		{name: "SendMessage unknown task", code: a2a.CodeTaskNotFound, sentry: a2a.ErrTaskNotFound,
			call: func(ctx context.Context, s setup) error {
				m := a2a.UserMessage("hi")
				m.TaskId = "no-such-task"
				_, err := s.c.SendMessage(ctx, &a2a.SendMessageRequest{Message: m})
				return err
			}},
		{name: "push config of unknown task", code: a2a.CodeTaskNotFound, sentry: a2a.ErrTaskNotFound,
			call: func(ctx context.Context, s setup) error {
				_, err := s.c.ListTaskPushNotificationConfigs(ctx, &a2a.ListTaskPushNotificationConfigsRequest{TaskId: "no-such-task"})
				return err
			}},
		{name: "CancelTask completed", code: a2a.CodeTaskNotCancelable, sentry: a2a.ErrTaskNotCancelable,
			call: func(ctx context.Context, s setup) error {
				_, err := s.c.CancelTask(ctx, &a2a.CancelTaskRequest{Id: s.done.Id})
				return err
			}},
		{name: "push not supported", cfg: config{mutate: noPush}, code: a2a.CodePushNotificationNotSupported, sentry: a2a.ErrPushNotificationNotSupported,
			call: func(ctx context.Context, s setup) error {
				_, err := s.c.CreateTaskPushNotificationConfig(ctx, &a2a.TaskPushNotificationConfig{TaskId: s.done.Id, Url: "http://127.0.0.1:9/hook"})
				return err
			}},
		{name: "SendMessage to terminal task", code: a2a.CodeUnsupportedOperation, sentry: a2a.ErrUnsupportedOperation,
			call: func(ctx context.Context, s setup) error {
				m := a2a.UserMessage("again")
				m.TaskId = s.done.Id
				_, err := s.c.SendMessage(ctx, &a2a.SendMessageRequest{Message: m})
				return err
			}},
		{name: "SubscribeToTask terminal task", code: a2a.CodeUnsupportedOperation, sentry: a2a.ErrUnsupportedOperation,
			call: func(ctx context.Context, s setup) error {
				_, err := collect(s.c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{Id: s.done.Id}))
				return err
			}},
		{name: "streaming not supported", cfg: config{mutate: noStream}, code: a2a.CodeUnsupportedOperation, sentry: a2a.ErrUnsupportedOperation,
			call: func(ctx context.Context, s setup) error {
				_, err := collect(s.c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("hi")}))
				return err
			}},
		{name: "extended card not declared", code: a2a.CodeUnsupportedOperation, sentry: a2a.ErrUnsupportedOperation,
			call: func(ctx context.Context, s setup) error {
				_, err := s.c.GetExtendedAgentCard(ctx, &a2a.GetExtendedAgentCardRequest{})
				return err
			}},
		{name: "content type not supported", code: a2a.CodeContentTypeNotSupported, sentry: a2a.ErrContentTypeNotSupported,
			call: func(ctx context.Context, s setup) error {
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
			call: func(ctx context.Context, s setup) error {
				_, err := s.c.GetExtendedAgentCard(ctx, nil)
				return err
			}},
		{name: "extension required", cfg: config{mutate: requiredExt}, code: a2a.CodeExtensionSupportRequired, sentry: a2a.ErrExtensionSupportRequired,
			call: func(ctx context.Context, s setup) error {
				_, err := s.c.GetTask(ctx, &a2a.GetTaskRequest{Id: "whatever"})
				return err
			}},
		{name: "version not supported", opts: &client.Options{HTTPClient: &http.Client{Transport: versionRewriter{"0.3"}}},
			code: a2a.CodeVersionNotSupported, sentry: a2a.ErrVersionNotSupported,
			call: func(ctx context.Context, s setup) error {
				_, err := s.c.GetTask(ctx, &a2a.GetTaskRequest{Id: "whatever"})
				return err
			},
			check: func(t *testing.T, e *a2a.Error) {
				if !strings.Contains(e.Metadata["supportedVersions"], "1.0") {
					t.Errorf("Metadata = %v, want supportedVersions listing 1.0", e.Metadata)
				}
			}},
		{name: "invalid params", code: a2a.CodeInvalidParams, sentry: a2a.ErrInvalidParams,
			call: func(ctx context.Context, s setup) error {
				_, err := s.c.ListTasks(ctx, &a2a.ListTasksRequest{PageSize: ptr[int32](500)})
				return err
			},
			check: func(t *testing.T, e *a2a.Error) {
				if len(e.Violations) != 1 || e.Violations[0].Field != "pageSize" {
					t.Errorf("Violations = %v, want one on pageSize", e.Violations)
				}
			}},
		{name: "invalid history length", code: a2a.CodeInvalidParams, sentry: a2a.ErrInvalidParams,
			call: func(ctx context.Context, s setup) error {
				_, err := s.c.GetTask(ctx, &a2a.GetTaskRequest{Id: s.done.Id, HistoryLength: ptr[int32](-1)})
				return err
			}},
		{name: "unauthenticated", cfg: config{tokens: map[string]string{"tok": "bob"}}, code: a2a.CodeUnauthenticated, sentry: a2a.ErrUnauthenticated,
			call: func(ctx context.Context, s setup) error {
				_, err := s.c.GetTask(ctx, &a2a.GetTaskRequest{Id: "x"})
				return err
			}},
		{name: "wrong token", cfg: config{tokens: map[string]string{"tok": "bob"}}, opts: &client.Options{BearerToken: "nope"},
			code: a2a.CodeUnauthenticated, sentry: a2a.ErrUnauthenticated,
			call: func(ctx context.Context, s setup) error {
				_, err := collect(s.c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("hi")}))
				return err
			}},
	}
	for _, b := range bindings {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					t.Parallel()
					e := start(t, tc.cfg)
					ctx := testCtx(t)
					// The completed task is made by an authorized client on
					// the same card (push and streaming do not matter here).
					maker := e.client(b, &client.Options{BearerToken: "tok", HTTPClient: http.DefaultClient})
					var done *a2a.Task
					if len(e.card.GetCapabilities().GetExtensions()) == 0 {
						done = send(t, maker, "hello", nil)
					}
					c := e.client(b, tc.opts)
					err := tc.call(ctx, setup{e: e, c: c, done: done})
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
				})
			}
		})
	}
}

// TestExtensionsHeader: A2A-Extensions activates a required extension.
func TestExtensionsHeader(t *testing.T) {
	t.Parallel()
	const uri = "https://example.com/ext/v1"
	for _, b := range bindings {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			rec := &recorder{}
			e := start(t, config{wrap: rec.wrap, mutate: func(card *a2a.AgentCard, _ *server.Options) {
				card.Capabilities.Extensions = []*a2a.AgentExtension{{Uri: uri, Required: true}}
			}})
			c := e.client(b, &client.Options{Extensions: []string{uri}})
			send(t, c, "hello", nil)
			for _, r := range rec.all() {
				if got := r.header.Get("A2A-Extensions"); got != uri {
					t.Errorf("%s %s: A2A-Extensions = %q, want %q", r.method, r.path, got, uri)
				}
			}
		})
	}
}

// TestWireShape pins what each binding puts on the wire: headers, the
// JSON-RPC envelope and URL, the REST routes, verbs, query strings and
// content types.
func TestWireShape(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	e := start(t, config{wrap: rec.wrap, tokens: map[string]string{"tok": "carol"}})
	ctx := testCtx(t)
	opts := &client.Options{BearerToken: "tok", Header: http.Header{"X-Api-Key": {"k1"}, "A2a-Version": {"9.9"}}}

	// JSON-RPC: numeric ids counting up, POST to the interface URL exactly.
	c := e.client(bindings[0], opts)
	task := send(t, c, "hello", nil)
	if _, err := c.GetTask(ctx, &a2a.GetTaskRequest{Id: task.Id}); err != nil {
		t.Fatal(err)
	}
	if _, err := collect(c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{Id: task.Id})); !errors.Is(err, a2a.ErrUnsupportedOperation) {
		t.Fatalf("SubscribeToTask(completed) = %v", err)
	}
	reqs := rec.all()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	for i, r := range reqs {
		if r.method != "POST" || r.path != "/" {
			t.Errorf("request %d: %s %s, want POST /", i, r.method, r.path)
		}
		want := `{"jsonrpc":"2.0","id":` + string(rune('1'+i)) + `,"method":`
		if !strings.HasPrefix(string(r.body), want) {
			t.Errorf("request %d body %s, want prefix %s", i, r.body, want)
		}
		checkHeaders(t, r, "application/json")
	}
	if got := reqs[2].header.Get("Accept"); got != "text/event-stream" {
		t.Errorf("stream Accept = %q", got)
	}

	// REST: routes from the method table.
	rec.reset()
	c = e.client(bindings[1], opts)
	task = send(t, c, "hello", nil)
	calls := []func() error{
		func() error {
			_, err := c.GetTask(ctx, &a2a.GetTaskRequest{Id: task.Id, HistoryLength: ptr[int32](2)})
			return err
		},
		func() error {
			_, err := c.ListTasks(ctx, &a2a.ListTasksRequest{ContextId: task.ContextId, Status: a2a.TaskState_TASK_STATE_COMPLETED,
				PageSize: ptr[int32](5), IncludeArtifacts: ptr(true), StatusTimestampAfter: a2a.Timestamp(time.Date(2020, 1, 2, 3, 4, 5, 6e6, time.UTC))})
			return err
		},
		func() error {
			_, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{Id: task.Id})
			return err
		},
		func() error {
			_, err := collect(c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{Id: task.Id}))
			return err
		},
		func() error {
			return c.DeleteTaskPushNotificationConfig(ctx, &a2a.DeleteTaskPushNotificationConfigRequest{TaskId: task.Id, Id: "cfg 1"})
		},
	}
	for _, call := range calls {
		call() // errors are expected for cancel and subscribe of a completed task
	}
	want := []string{
		"POST /message:send ",
		"GET /tasks/" + task.Id + " historyLength=2",
		"GET /tasks contextId=" + task.ContextId + "&includeArtifacts=true&pageSize=5&status=TASK_STATE_COMPLETED&statusTimestampAfter=2020-01-02T03%3A04%3A05.006Z",
		"POST /tasks/" + task.Id + ":cancel ",
		"POST /tasks/" + task.Id + ":subscribe ",
		"DELETE /tasks/" + task.Id + "/pushNotificationConfigs/cfg 1 ",
	}
	var got []string
	for _, r := range rec.all() {
		got = append(got, r.method+" "+r.path+" "+r.query)
	}
	if !slices.Equal(got, want) {
		t.Errorf("REST requests:\n got %q\nwant %q", got, want)
	}
	restReqs := rec.all()
	for i, r := range restReqs {
		ct := ""
		if len(r.body) > 0 {
			ct = "application/a2a+json"
		}
		checkHeaders(t, r, ct)
		if i == 0 && strings.Contains(string(r.body), `"tenant"`) {
			t.Errorf("body %s carries a tenant", r.body)
		}
		if (i == 3 || i == 4) && len(r.body) != 0 {
			t.Errorf("%s %s body %q, want none (the id is in the path)", r.method, r.path, r.body)
		}
	}

	// gRPC: the service's methods over HTTP/2, the same headers as
	// metadata, the request message as protobuf.
	rec.reset()
	c = e.client(bindings[2], opts)
	task = send(t, c, "hello", nil)
	if _, err := c.GetTask(ctx, &a2a.GetTaskRequest{Id: task.Id, HistoryLength: ptr[int32](2)}); err != nil {
		t.Fatal(err)
	}
	if _, err := collect(c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{Id: task.Id})); !errors.Is(err, a2a.ErrUnsupportedOperation) {
		t.Fatalf("gRPC SubscribeToTask(completed) = %v", err)
	}
	got = nil
	for _, r := range rec.all() {
		got = append(got, r.method+" "+r.path)
		checkHeaders(t, r, "application/grpc")
		if r.proto != 2 || r.header.Get("Te") != "trailers" {
			t.Errorf("%s: HTTP/%d, TE %q; want HTTP/2 and trailers", r.path, r.proto, r.header.Get("Te"))
		}
	}
	want = []string{
		"POST /lf.a2a.v1.A2AService/SendMessage",
		"POST /lf.a2a.v1.A2AService/GetTask",
		"POST /lf.a2a.v1.A2AService/SubscribeToTask",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("gRPC requests:\n got %q\nwant %q", got, want)
	}
	gt := &a2a.GetTaskRequest{}
	if err := grpcMessage(rec.all()[1].body, gt); err != nil || gt.Id != task.Id || gt.GetHistoryLength() != 2 || gt.Tenant != "" {
		t.Errorf("gRPC GetTask message = %v, %v", gt, err)
	}
}

func checkHeaders(t *testing.T, r recorded, contentType string) {
	t.Helper()
	for k, want := range map[string]string{
		"A2A-Version":   "1.0",
		"Authorization": "Bearer tok",
		"X-Api-Key":     "k1",
		"Content-Type":  contentType,
	} {
		if got := r.header.Get(k); got != want {
			t.Errorf("%s %s: %s = %q, want %q", r.method, r.path, k, got, want)
		}
	}
}
