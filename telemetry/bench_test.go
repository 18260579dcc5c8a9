package telemetry_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
	"parley.dev/parley/internal/testkit"
	"parley.dev/parley/server"
	"parley.dev/parley/taskstore"
)

// BenchmarkSendMessage measures the overhead of telemetry on blocking
// SendMessage over JSON-RPC on a loopback port, the conformance agent on
// the memory store: a server without telemetry ("off") and one with
// tracing sampled at 100 % (exported over OTLP/HTTP to a receiver in the
// process) and every metric recorded ("on"), called in turn, one call to
// each per iteration, in alternating order. Measured in turn, not one
// after the other, the two see the same machine: a run of one before the
// other measured the machine's drift as much as the difference
// (docs/observability.md, "Cost"). It reports the time per call of each
// and the overhead, on ÷ off − 1, in per cent.
func BenchmarkSendMessage(b *testing.B) {
	off := testkit.StartServer(b, &testkit.Options{Quiet: true})
	offClient, err := client.New(off.Card, &client.Options{Transports: []client.TransportFactory{client.JSONRPC()}})
	if err != nil {
		b.Fatal(err)
	}
	st := newStack(b, map[string]string{"OTEL_TRACES_SAMPLER": "always_on", "OTEL_BSP_SCHEDULE_DELAY": "200"}, nil)
	st.rcv.discard = true
	onClient := st.client(b, []client.TransportFactory{client.JSONRPC()}, nil)
	call := func(c *client.Client) func() {
		return func() {
			if _, err := c.SendMessage(context.Background(), &a2a.SendMessageRequest{Message: a2a.UserMessage("hello")}); err != nil {
				b.Fatal(err)
			}
		}
	}
	inTurn(b, call(offClient), call(onClient))
}

// BenchmarkHandlerSendMessage is BenchmarkSendMessage without the network
// and the client: the JSON-RPC request is handed to each server's handler
// in the process, so the server's own work is all that is measured, and
// the overhead shows against the smallest denominator.
func BenchmarkHandlerSendMessage(b *testing.B) {
	body := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"role":"ROLE_USER","parts":[{"text":"hello"}]}}}`
	serve := func(h http.Handler) func() {
		return func() {
			r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/", strings.NewReader(strings.Replace(body, `"role"`, `"messageId":"`+a2a.NewID()+`","role"`, 1)))
			r.Header.Set("Content-Type", "application/json")
			r.Header.Set("A2A-Version", "1.0")
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != http.StatusOK || strings.Contains(w.Body.String(), `"error"`) {
				b.Fatalf("%d %s", w.Code, w.Body)
			}
		}
	}
	// Each comparison has servers of its own: they start empty and get as
	// many calls each (the memory store's work grows with its tasks).
	b.Run("metrics", func(b *testing.B) {
		off := testkit.StartServer(b, &testkit.Options{Quiet: true})
		st := newStack(b, map[string]string{"OTEL_TRACES_EXPORTER": "none"}, nil)
		inTurn(b, serve(off.HTTP.Config.Handler), serve(st.srv.HTTP.Config.Handler))
	})
	b.Run("on", func(b *testing.B) {
		off := testkit.StartServer(b, &testkit.Options{Quiet: true})
		st := newStack(b, map[string]string{"OTEL_TRACES_SAMPLER": "always_on", "OTEL_BSP_SCHEDULE_DELAY": "200"}, nil)
		st.rcv.discard = true
		inTurn(b, serve(off.HTTP.Config.Handler), serve(st.srv.HTTP.Config.Handler))
	})
}

// inTurn calls off and on once each per iteration, in alternating order,
// and reports the mean time of each call (off-ns/call, on-ns/call) and the
// overhead (overhead-%). The time of a call is its wall time: with -cpu 1
// the garbage collector and the exporter run inside the calls that make
// their work, and with more the calls' own goroutines are what is timed.
func inTurn(b *testing.B, off, on func()) {
	b.ReportAllocs()
	var offTime, onTime time.Duration
	timed := func(f func(), total *time.Duration) {
		start := time.Now()
		f()
		*total += time.Since(start)
	}
	i := 0
	for b.Loop() {
		if i++; i%2 == 0 {
			timed(off, &offTime)
			timed(on, &onTime)
		} else {
			timed(on, &onTime)
			timed(off, &offTime)
		}
	}
	b.ReportMetric(float64(offTime)/float64(b.N), "off-ns/call")
	b.ReportMetric(float64(onTime)/float64(b.N), "on-ns/call")
	b.ReportMetric(100*(float64(onTime)/float64(offTime)-1), "overhead-%")
}

// BenchmarkInstrumentation is the work telemetry adds to one blocking
// SendMessage, alone and without noise from the rest: the server span
// with its attributes, the request metric, the execution hook, and the six
// store calls the core makes for it (tallied on the span, and their
// latencies), over an invoker and a store that do nothing.
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
	for b.Loop() {
		if _, err := inv.Call(ctx, m, req); err != nil {
			b.Fatal(err)
		}
	}
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
