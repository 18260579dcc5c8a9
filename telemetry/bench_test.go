package telemetry_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
	"parley.dev/parley/internal/testkit"
	"parley.dev/parley/server"
	"parley.dev/parley/taskstore"
)

// BenchmarkSendMessage measures blocking SendMessage over JSON-RPC on a
// loopback port, the conformance agent on the memory store, without
// telemetry ("off") and with tracing sampled at 100 % (exported over
// OTLP/HTTP to a receiver on the same machine) and metrics recorded
// ("on"). The overhead is the ratio of the two; docs/observability.md
// gives the figures.
func BenchmarkSendMessage(b *testing.B) {
	req := func() *a2a.SendMessageRequest { return &a2a.SendMessageRequest{Message: a2a.UserMessage("hello")} }
	b.Run("off", func(b *testing.B) {
		srv := testkit.StartServer(b, &testkit.Options{Quiet: true})
		c, err := client.New(srv.Card, &client.Options{Transports: []client.TransportFactory{client.JSONRPC()}})
		if err != nil {
			b.Fatal(err)
		}
		run(b, c, req)
	})
	b.Run("metrics", func(b *testing.B) {
		st := newStack(b, map[string]string{"OTEL_TRACES_EXPORTER": "none"}, nil)
		run(b, st.client(b, []client.TransportFactory{client.JSONRPC()}, nil), req)
	})
	b.Run("on", func(b *testing.B) {
		st := newStack(b, map[string]string{"OTEL_TRACES_SAMPLER": "always_on", "OTEL_BSP_SCHEDULE_DELAY": "200"}, nil)
		st.rcv.discard = true
		run(b, st.client(b, []client.TransportFactory{client.JSONRPC()}, nil), req)
	})
}

// run makes the calls and reports, besides the wall time, the process's
// CPU time per call (user and system, client and server alike): on a
// machine shared with other work it varies much less than the wall time.
func run(b *testing.B, c *client.Client, req func() *a2a.SendMessageRequest) {
	ctx := context.Background()
	b.ReportAllocs()
	before := cpuTime()
	for b.Loop() {
		if _, err := c.SendMessage(ctx, req()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuTime()-before)/float64(b.N), "cpu-ns/op")
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkHandlerSendMessage is BenchmarkSendMessage without the network
// and the client: the JSON-RPC request is handed to the handler in the
// process, so the server's own work is all that is measured, and the
// overhead shows against the smallest denominator.
func BenchmarkHandlerSendMessage(b *testing.B) {
	body := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"role":"ROLE_USER","parts":[{"text":"hello"}]}}}`
	serve := func(b *testing.B, h http.Handler) {
		b.ReportAllocs()
		before := cpuTime()
		for b.Loop() {
			r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/", strings.NewReader(strings.Replace(body, `"role"`, `"messageId":"`+a2a.NewID()+`","role"`, 1)))
			r.Header.Set("Content-Type", "application/json")
			r.Header.Set("A2A-Version", "1.0")
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != http.StatusOK || strings.Contains(w.Body.String(), `"error"`) {
				b.Fatalf("%d %s", w.Code, w.Body)
			}
		}
		b.ReportMetric(float64(cpuTime()-before)/float64(b.N), "cpu-ns/op")
	}
	b.Run("off", func(b *testing.B) {
		srv := testkit.StartServer(b, &testkit.Options{Quiet: true})
		serve(b, srv.HTTP.Config.Handler)
	})
	b.Run("metrics", func(b *testing.B) {
		st := newStack(b, map[string]string{"OTEL_TRACES_EXPORTER": "none"}, nil)
		serve(b, st.srv.HTTP.Config.Handler)
	})
	b.Run("on", func(b *testing.B) {
		st := newStack(b, map[string]string{"OTEL_TRACES_SAMPLER": "always_on", "OTEL_BSP_SCHEDULE_DELAY": "200"}, nil)
		st.rcv.discard = true
		serve(b, st.srv.HTTP.Config.Handler)
	})
}

// BenchmarkInstrumentation is the work telemetry adds to one blocking
// SendMessage, alone and without noise from the rest: the server span
// with its attributes, the request metric, the execution hook, and the six
// store calls the core makes for it (tallied on the span, and their
// latencies), over an invoker and a store that do nothing. Its ns/op against
// BenchmarkSendMessage/off's is the overhead.
func BenchmarkInstrumentation(b *testing.B) {
	st := newStack(b, map[string]string{"OTEL_TRACES_SAMPLER": "always_on", "OTEL_BSP_SCHEDULE_DELAY": "200"}, nil)
	st.rcv.discard = true
	store := st.tel.Store(nopStore{})
	task := &a2a.Task{Id: "t1", ContextId: "c1", Status: &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_COMPLETED}}
	core := a2a.InvokerFuncs{CallFunc: func(ctx context.Context, m *a2a.Method, req proto.Message) (proto.Message, error) {
		base, cancel := context.WithCancel(context.Background()) // the core's: canceled when the execution ends
		defer cancel()
		exec := st.tel.ExecutionContext(base, ctx, &server.Request{TaskID: "t1", ContextID: "c1"})
		store.GetMessage(ctx, taskstore.Scope{}, "m1")
		store.PutMessage(ctx, taskstore.Scope{}, &taskstore.MessageRecord{})
		store.CreateTask(exec, taskstore.Scope{}, task, taskstore.Event{Response: &a2a.StreamResponse{}})
		for range 3 {
			store.Append(exec, taskstore.Scope{}, task.Id, taskstore.Event{Response: &a2a.StreamResponse{}})
		}
		return &a2a.SendMessageResponse{Payload: &a2a.SendMessageResponse_Task{Task: task}}, nil
	}}
	inv := st.tel.ServerMiddleware(a2a.BindingJSONRPC)(core)
	m := a2a.MethodByName(a2a.MethodSendMessage)
	req := &a2a.SendMessageRequest{Message: a2a.UserMessage("hello")}
	ctx := context.Background()
	b.ReportAllocs()
	before := cpuTime()
	for b.Loop() {
		if _, err := inv.Call(ctx, m, req); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuTime()-before)/float64(b.N), "cpu-ns/op")
}

// nopStore is a task store that does nothing and answers at once.
type nopStore struct{ taskstore.Store }

func (nopStore) GetMessage(context.Context, taskstore.Scope, string) (*taskstore.MessageRecord, error) {
	return nil, taskstore.ErrNotFound
}
func (nopStore) PutMessage(_ context.Context, _ taskstore.Scope, r *taskstore.MessageRecord) (*taskstore.MessageRecord, error) {
	return r, nil
}
func (nopStore) CreateTask(context.Context, taskstore.Scope, *a2a.Task, taskstore.Event) error {
	return nil
}
func (nopStore) Append(context.Context, taskstore.Scope, string, taskstore.Event) error {
	return nil
}
