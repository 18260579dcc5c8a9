package client_test

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
	"parley.dev/parley/internal/testkit"
)

// TestWireShape pins what each binding puts on the wire: headers, the
// JSON-RPC envelope and URL, the REST routes, verbs, query strings and
// content types.
func TestWireShape(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	e := start(t, config{wrap: rec.wrap, tokens: map[string]string{"tok": "carol"}})
	opts := &client.Options{BearerToken: "tok", Header: http.Header{"X-Api-Key": {"k1"}, "A2a-Version": {"9.9"}}}
	checkJSONRPCWire(t, e, rec, opts)
	rec.reset()
	checkRESTWire(t, e, rec, opts)
	rec.reset()
	checkGRPCWire(t, e, rec, opts)
}

// checkJSONRPCWire checks the JSON-RPC requests of a send, a read and a
// subscription.
func checkJSONRPCWire(t *testing.T, e *env, rec *recorder, opts *client.Options) {
	ctx := testCtx(t)
	// JSON-RPC: numeric ids counting up, POST to the interface URL exactly.
	c := e.client(bindings[0], opts)
	task := send(t, c, "hello", nil)
	if _, err := c.GetTask(ctx, &a2a.GetTaskRequest{Id: task.Id}); err != nil {
		t.Fatal(err)
	}
	if _, err := testkit.Collect(c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{Id: task.Id})); !errors.Is(err, a2a.ErrUnsupportedOperation) {
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
}

// checkRESTWire checks the HTTP+JSON route, verb, query string and body of
// each operation.
func checkRESTWire(t *testing.T, e *env, rec *recorder, opts *client.Options) {
	ctx := testCtx(t)
	// REST: routes from the method table.
	c := e.client(bindings[1], opts)
	task := send(t, c, "hello", nil)
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
			_, err := testkit.Collect(c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{Id: task.Id}))
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
}

// checkGRPCWire checks the gRPC requests of a send, a read and a
// subscription.
func checkGRPCWire(t *testing.T, e *env, rec *recorder, opts *client.Options) {
	ctx := testCtx(t)
	// gRPC: the service's methods over HTTP/2, the same headers as
	// metadata, the request message as protobuf.
	c := e.client(bindings[2], opts)
	task := send(t, c, "hello", nil)
	if _, err := c.GetTask(ctx, &a2a.GetTaskRequest{Id: task.Id, HistoryLength: ptr[int32](2)}); err != nil {
		t.Fatal(err)
	}
	if _, err := testkit.Collect(c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{Id: task.Id})); !errors.Is(err, a2a.ErrUnsupportedOperation) {
		t.Fatalf("gRPC SubscribeToTask(completed) = %v", err)
	}
	var got []string
	for _, r := range rec.all() {
		got = append(got, r.method+" "+r.path)
		checkHeaders(t, r, "application/grpc")
		if r.proto != 2 || r.header.Get("Te") != "trailers" {
			t.Errorf("%s: HTTP/%d, TE %q; want HTTP/2 and trailers", r.path, r.proto, r.header.Get("Te"))
		}
	}
	want := []string{
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
