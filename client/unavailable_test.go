package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
	"parley.dev/parley/internal/a2aconnect"
	"parley.dev/parley/internal/testkit"
	"parley.dev/parley/server"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/memstore"
)

// faultStore is a memory store whose reads and writes of a task, message
// records, lists and push configurations fail, while failures is above
// zero, with a transient failure (a full disk, as a store marks it:
// taskstore.ErrUnavailable wrapping the driver's error), one failure per
// call. getTasks counts the calls of GetTask.
type faultStore struct {
	*memstore.Store
	failures atomic.Int64
	getTasks atomic.Int64
}

// driverText is in the injected failure's text: it must never reach a
// caller.
const driverText = "write /var/lib/parley/tasks.db-wal: no space left on device"

func (f *faultStore) fail() error {
	if f.failures.Add(-1) < 0 {
		f.failures.Store(0)
		return nil
	}
	return taskstore.Unavailable(fmt.Errorf("faultstore: %s: %w", driverText, syscall.ENOSPC))
}

func (f *faultStore) GetTask(ctx context.Context, sc taskstore.Scope, id string) (*a2a.Task, error) {
	f.getTasks.Add(1)
	if err := f.fail(); err != nil {
		return nil, err
	}
	return f.Store.GetTask(ctx, sc, id)
}

func (f *faultStore) ListTasks(ctx context.Context, sc taskstore.Scope, q taskstore.ListQuery) (taskstore.ListResult, error) {
	if err := f.fail(); err != nil {
		return taskstore.ListResult{}, err
	}
	return f.Store.ListTasks(ctx, sc, q)
}

func (f *faultStore) GetMessage(ctx context.Context, sc taskstore.Scope, id string) (*taskstore.MessageRecord, error) {
	if err := f.fail(); err != nil {
		return nil, err
	}
	return f.Store.GetMessage(ctx, sc, id)
}

func (f *faultStore) PutMessage(ctx context.Context, sc taskstore.Scope, r *taskstore.MessageRecord) (*taskstore.MessageRecord, error) {
	if err := f.fail(); err != nil {
		return nil, err
	}
	return f.Store.PutMessage(ctx, sc, r)
}

func (f *faultStore) ListPushConfigs(ctx context.Context, sc taskstore.Scope, taskID string) ([]*taskstore.PushConfig, error) {
	if err := f.fail(); err != nil {
		return nil, err
	}
	return f.Store.ListPushConfigs(ctx, sc, taskID)
}

// startFaulty serves the conformance agent on a faultStore.
func startFaulty(t *testing.T) (*env, *faultStore) {
	fs := &faultStore{Store: memstore.New()}
	e := start(t, config{mutate: func(_ *a2a.AgentCard, o *server.Options) { o.Store = fs }})
	return e, fs
}

// wireAnswer is what a raw caller read from an error answer.
type wireAnswer struct {
	status     int    // HTTP status (0 on gRPC)
	retryAfter string // the Retry-After header
	rpcCode    int    // JSON-RPC error code
	grpcCode   connect.Code
	retryInfo  time.Duration // gRPC RetryInfo's delay, -1 without one
	reason     string        // the ErrorInfo reason (v0.3: data.reason)
	message    string
	body       string
}

// rawHTTP sends body (nil for a GET) to base+path and reads the answer.
func rawHTTP(t *testing.T, verb, url, version string, body []byte) wireAnswer {
	t.Helper()
	req, err := http.NewRequestWithContext(testCtx(t), verb, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if version != "" {
		req.Header.Set("A2A-Version", version)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	a := wireAnswer{status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After"), retryInfo: -1, body: string(b)}
	type info struct {
		Reason string `json:"reason"`
	}
	type errorBody struct {
		Code    json.RawMessage `json:"code"`
		Status  string          `json:"status"`
		Message string          `json:"message"`
		Details []info          `json:"details"`
		Data    json.RawMessage `json:"data"`
	}
	var doc struct {
		errorBody           // v0.3 HTTP+JSON: the error object alone
		Error     errorBody `json:"error"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s %s: body %q is not JSON: %v", verb, url, b, err)
	}
	if doc.Error.Code == nil {
		doc.Error = doc.errorBody
	}
	a.message = doc.Error.Message
	json.Unmarshal(doc.Error.Code, &a.rpcCode)
	var list []info
	var one info
	switch {
	case len(doc.Error.Details) > 0:
		a.reason = doc.Error.Details[0].Reason
	case json.Unmarshal(doc.Error.Data, &list) == nil && len(list) > 0:
		a.reason = list[0].Reason
	case json.Unmarshal(doc.Error.Data, &one) == nil:
		a.reason = one.Reason
	}
	return a
}

// rawGRPC calls GetTask with the generated connect-go client and reads
// the status.
func rawGRPC(t *testing.T, base string) wireAnswer {
	t.Helper()
	c := a2aconnect.NewA2AServiceClient(testkit.H2CClient(), base, connect.WithGRPC())
	req := connect.NewRequest(&a2a.GetTaskRequest{Id: "t1"})
	req.Header().Set("A2A-Version", a2a.ProtocolVersion)
	_, err := c.GetTask(testCtx(t), req)
	var ce *connect.Error
	if !errors.As(err, &ce) {
		t.Fatalf("gRPC GetTask = %v, want a status", err)
	}
	a := wireAnswer{grpcCode: ce.Code(), retryInfo: -1, message: ce.Message()}
	for _, d := range ce.Details() {
		switch v, _ := d.Value(); m := v.(type) {
		case *errdetails.ErrorInfo:
			a.reason = m.GetReason()
		case *errdetails.RetryInfo:
			a.retryInfo = m.GetRetryDelay().AsDuration()
		}
	}
	return a
}

// TestStoreUnavailableOnTheWire: a call that meets a transient store
// failure is answered UnavailableError on every binding and both versions,
// on every kind of operation (read, list, send, cancel, push configs):
// HTTP 503 with Retry-After and the reason UNAVAILABLE (JSON-RPC's error
// object with -32603 in HTTP 503), gRPC UNAVAILABLE with an ErrorInfo and
// a RetryInfo. The store's message is all the caller is told: the driver's
// error stays in the server's log.
func TestStoreUnavailableOnTheWire(t *testing.T) {
	t.Parallel()
	e, fs := startFaulty(t)
	fs.failures.Store(1 << 30)
	rpc := func(method, params string) []byte {
		return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":1,"method":%q,"params":%s}`, method, params)
	}
	send := `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}}`
	send03 := `{"message":{"kind":"message","messageId":"m2","role":"user","parts":[{"kind":"text","text":"hi"}]}}`
	for _, c := range []struct {
		name   string
		call   func(t *testing.T) wireAnswer
		rpc    bool // a JSON-RPC error object
		grpc   bool
		status string // the REST body's status name ("" when not REST v1.0)
	}{
		{name: "JSON-RPC GetTask", rpc: true, call: func(t *testing.T) wireAnswer {
			return rawHTTP(t, "POST", e.url+"/", "1.0", rpc("GetTask", `{"id":"t1"}`))
		}},
		{name: "JSON-RPC SendMessage", rpc: true, call: func(t *testing.T) wireAnswer {
			return rawHTTP(t, "POST", e.url+"/", "1.0", rpc("SendMessage", send))
		}},
		{name: "JSON-RPC ListTasks", rpc: true, call: func(t *testing.T) wireAnswer {
			return rawHTTP(t, "POST", e.url+"/", "1.0", rpc("ListTasks", `{}`))
		}},
		{name: "HTTP+JSON GetTask", status: "UNAVAILABLE", call: func(t *testing.T) wireAnswer {
			return rawHTTP(t, "GET", e.url+"/tasks/t1", "1.0", nil)
		}},
		{name: "HTTP+JSON CancelTask", status: "UNAVAILABLE", call: func(t *testing.T) wireAnswer {
			return rawHTTP(t, "POST", e.url+"/tasks/t1:cancel", "1.0", []byte(`{}`))
		}},
		{name: "HTTP+JSON SendStreamingMessage", status: "UNAVAILABLE", call: func(t *testing.T) wireAnswer {
			return rawHTTP(t, "POST", e.url+"/message:stream", "1.0", []byte(send))
		}},
		{name: "HTTP+JSON ListTaskPushNotificationConfigs", status: "UNAVAILABLE", call: func(t *testing.T) wireAnswer {
			return rawHTTP(t, "GET", e.url+"/tasks/t1/pushNotificationConfigs", "1.0", nil)
		}},
		{name: "GRPC GetTask", grpc: true, call: func(t *testing.T) wireAnswer { return rawGRPC(t, e.url) }},
		{name: "v0.3 JSON-RPC tasks/get", rpc: true, call: func(t *testing.T) wireAnswer {
			return rawHTTP(t, "POST", e.url+"/", "", rpc("tasks/get", `{"id":"t1"}`))
		}},
		{name: "v0.3 JSON-RPC message/send", rpc: true, call: func(t *testing.T) wireAnswer {
			return rawHTTP(t, "POST", e.url+"/", "", rpc("message/send", send03))
		}},
		{name: "v0.3 HTTP+JSON GetTask", rpc: true, call: func(t *testing.T) wireAnswer {
			return rawHTTP(t, "GET", e.url+"/v1/tasks/t1", "", nil)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := c.call(t)
			if strings.Contains(a.body+a.message, "no space left") || strings.Contains(a.body+a.message, "faultstore") {
				t.Errorf("the driver's error reached the caller: %s %q", a.body, a.message)
			}
			if a.reason != "UNAVAILABLE" || !strings.Contains(a.message, "the task store is unavailable; retry later") {
				t.Errorf("reason %q, message %q; want UNAVAILABLE saying the task store is unavailable (body %s)", a.reason, a.message, a.body)
			}
			if c.grpc {
				if a.grpcCode != connect.CodeUnavailable || a.retryInfo != time.Second {
					t.Errorf("gRPC status %v with RetryInfo %v, want UNAVAILABLE with RetryInfo 1s", a.grpcCode, a.retryInfo)
				}
				return
			}
			if a.status != http.StatusServiceUnavailable || a.retryAfter != "1" {
				t.Errorf("HTTP %d with Retry-After %q, want 503 with Retry-After 1 (body %s)", a.status, a.retryAfter, a.body)
			}
			if c.rpc && a.rpcCode != -32603 {
				t.Errorf("error code %d, want -32603 (body %s)", a.rpcCode, a.body)
			}
			if c.status != "" && !strings.Contains(a.body, `"status":"`+c.status+`"`) {
				t.Errorf("body %s, want status %s", a.body, c.status)
			}
		})
	}
}

// TestClientRetriesUnavailable: the client repeats a call refused with
// UnavailableError, after the wait the server asked for (Retry-After 1 s,
// though RetryDelay is 5 ms), on every binding: a read, a send and a
// streaming send (resent with the same messageId: the agent runs once);
// it gives up after Options.Retries, and at once when the caller's
// deadline would pass during the wait.
func TestClientRetriesUnavailable(t *testing.T) {
	t.Parallel()
	for _, b := range bindings {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			e, fs := startFaulty(t)
			c := e.client(b, nil)
			task := send(t, c, "hello", nil)
			ctx := testCtx(t)

			fs.failures.Store(1)
			before, begun := fs.getTasks.Load(), time.Now()
			got, err := c.GetTask(ctx, &a2a.GetTaskRequest{Id: task.GetId()})
			if err != nil || got.GetId() != task.GetId() {
				t.Fatalf("GetTask after one failure = %v, %v; want the task", got, err)
			}
			if n := fs.getTasks.Load() - before; n != 2 {
				t.Errorf("GetTask reached the store %d times, want 2 (one retry)", n)
			}
			if d := time.Since(begun); d < 900*time.Millisecond {
				t.Errorf("GetTask retried after %v, want the 1 s the server asked for", d)
			}

			runs := e.runs.Load()
			fs.failures.Store(1)
			resp, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("again")})
			if err != nil || resp.GetTask().GetStatus().GetState() != a2a.TaskState_TASK_STATE_COMPLETED {
				t.Fatalf("SendMessage after one failure = %v, %v; want a completed task", resp, err)
			}
			if fs.failures.Load() != 0 {
				t.Errorf("SendMessage did not meet the store's failure")
			}
			fs.failures.Store(1)
			evs, err := testkit.Collect(c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("stream 2")}))
			if err != nil || len(evs) == 0 {
				t.Fatalf("SendStreamingMessage after one failure = %d events, %v", len(evs), err)
			}
			if fs.failures.Load() != 0 {
				t.Errorf("SendStreamingMessage did not meet the store's failure")
			}
			if n := e.runs.Load() - runs; n != 2 {
				t.Errorf("the agent ran %d times for two sends, want 2", n)
			}

			fs.failures.Store(1 << 30)
			before = fs.getTasks.Load()
			_, err = c.GetTask(ctx, &a2a.GetTaskRequest{Id: task.GetId()})
			if !errors.Is(err, a2a.ErrUnavailable) {
				t.Errorf("GetTask while the store stays down = %v, want UnavailableError", err)
			}
			if n := fs.getTasks.Load() - before; n != 1+client.DefaultRetries {
				t.Errorf("GetTask reached the store %d times, want %d", n, 1+client.DefaultRetries)
			}
			short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
			defer cancel()
			begun = time.Now()
			if _, err = c.GetTask(short, &a2a.GetTaskRequest{Id: task.GetId()}); !errors.Is(err, a2a.ErrUnavailable) || time.Since(begun) > 250*time.Millisecond {
				t.Errorf("GetTask with 300 ms left = %v after %v, want UnavailableError at once", err, time.Since(begun))
			}
			fs.failures.Store(0)
		})
	}
}
