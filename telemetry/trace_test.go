package telemetry_test

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
	"parley.dev/parley/internal/testkit"
	"parley.dev/parley/server"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/telemetry"
)

// A streaming call on each binding, with the caller's traceparent in the
// HTTP headers (gRPC metadata on the gRPC binding): the server span joins
// the caller's trace under its span and lasts as long as the stream; the
// agent's context carries it, so a span the agent starts is its child; the
// store calls made for the call and its execution are tallied on it.
func TestStreamingSpanTreeOnEveryBinding(t *testing.T) {
	agentSpans := make(chan trace.SpanContext, 8)
	st := newStack(t, nil, func(tel *telemetry.Telemetry, o *server.Options) {
		conformance := o.Agent
		o.Agent = server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
			_, span := tel.TracerProvider().Tracer("agent").Start(ctx, "agent work")
			agentSpans <- span.SpanContext()
			defer span.End()
			return conformance.Execute(ctx, req, em)
		})
	})
	for _, b := range bindings {
		t.Run(b.name, func(t *testing.T) {
			tp, traceID, parentID := traceparent()
			c := st.client(t, []client.TransportFactory{b.factory()}, http.Header{"Traceparent": {tp}})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			begin := time.Now()
			evs, err := testkit.Collect(c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("slow 250")}))
			if err != nil {
				t.Fatalf("stream: %v (events %v)", err, testkit.Kinds(evs))
			}
			streamed := time.Since(begin)
			taskID, contextID := evs[0].TaskID(), evs[0].ContextID()
			agent := <-agentSpans

			var srv, work *span
			st.rcv.wait(t, "server span and the agent's span", func(spans []*span) bool {
				srv, work = nil, nil
				for _, s := range find(spans, func(s *span) bool { return s.TraceID == traceID }) {
					switch {
					case s.Name == a2a.MethodSendStreamingMessage && s.Kind == tracepb.Span_SPAN_KIND_SERVER:
						srv = s
					case s.Name == "agent work":
						work = s
					}
				}
				return srv != nil && work != nil
			})
			if srv.ParentSpanID != parentID {
				t.Errorf("server span's parent = %s, want the caller's span %s", srv.ParentSpanID, parentID)
			}
			want := map[string]string{
				"a2a.binding": b.name, "a2a.task.id": taskID,
				"a2a.context.id": contextID, "a2a.outcome": "ok", "a2a.task.state": "TASK_STATE_COMPLETED",
				"a2a.stream.events": strconv.Itoa(len(evs)),
			}
			for k, v := range want {
				if srv.Attrs[k] != v {
					t.Errorf("server span %s = %q, want %q", k, srv.Attrs[k], v)
				}
			}
			if srv.Service != "parley" {
				t.Errorf("service.name = %q, want parley", srv.Service)
			}
			// The agent works 250 ms: the span covers the stream, not only
			// its start.
			if d := srv.End.Sub(srv.Start); d < 250*time.Millisecond || d > streamed+time.Second {
				t.Errorf("server span lasted %v; the stream took %v at the client (at least 250 ms)", d, streamed)
			}
			if work.ParentSpanID != srv.SpanID || agent.SpanID().String() != work.SpanID {
				t.Errorf("the agent's span: parent %s, want the server span %s", work.ParentSpanID, srv.SpanID)
			}
			// PutMessage for the request; the execution's writes, batched
			// through the wrapper as on the bare store (the task with
			// WORKING, then the artifact with COMPLETED): all tallied on
			// the server span, with the time they took.
			if n, _ := strconv.Atoi(srv.Attrs["parley.store.calls"]); n < 3 {
				t.Errorf("parley.store.calls = %q, want the request's and the execution's calls (at least 3)", srv.Attrs["parley.store.calls"])
			}
			if ms, err := strconv.ParseFloat(srv.Attrs["parley.store.duration_ms"], 64); err != nil || ms <= 0 || ms > float64(streamed.Milliseconds()) {
				t.Errorf("parley.store.duration_ms = %q, want a time within the stream's", srv.Attrs["parley.store.duration_ms"])
			}
			// None fails; a slow one (on a busy machine, or under the race
			// detector) is also an event, with its duration.
			for _, e := range srv.Events {
				ms, err := strconv.ParseFloat(e.Attrs["parley.store.duration_ms"], 64)
				if !strings.HasPrefix(e.Name, "store.") || err != nil || ms < 0.1 || e.Attrs["parley.store.error"] != "" {
					t.Errorf("event %s %v on the server span, want only slow store calls", e.Name, e.Attrs)
				}
			}
		})
	}
}

// The client library's spans carry traceparent on every binding: the
// server span of each call is a child of the client span, in its trace,
// for a unary call and a stream alike.
func TestClientPropagatesOnEveryBinding(t *testing.T) {
	st := newStack(t, nil, nil)
	for _, b := range bindings {
		t.Run(b.name, func(t *testing.T) {
			c := st.client(t, st.tel.ClientTransports(b.factory()), nil)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			resp, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("hello")})
			if err != nil {
				t.Fatal(err)
			}
			taskID := resp.GetTask().GetId()
			if _, err := testkit.Collect(c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{Id: "no-such-task"})); err == nil {
				t.Fatal("SubscribeToTask of an unknown task succeeded")
			}
			for _, m := range []string{a2a.MethodSendMessage, a2a.MethodSubscribeToTask} {
				var cli, srv *span
				st.rcv.wait(t, m+" client and server spans", func(spans []*span) bool {
					cli, srv = nil, nil
					for _, s := range spans {
						if s.Name == m && s.Kind == tracepb.Span_SPAN_KIND_CLIENT && s.Attrs["a2a.binding"] == b.name {
							cli = s
						}
					}
					for _, s := range spans {
						if cli != nil && s.Name == m && s.Kind == tracepb.Span_SPAN_KIND_SERVER && s.TraceID == cli.TraceID {
							srv = s
						}
					}
					return cli != nil && srv != nil
				})
				if srv.ParentSpanID != cli.SpanID || srv.Attrs["a2a.binding"] != b.name {
					t.Errorf("%s: server span parent %s binding %q, want the client span %s on %s", m, srv.ParentSpanID, srv.Attrs["a2a.binding"], cli.SpanID, b.name)
				}
				if m == a2a.MethodSendMessage && (cli.Attrs["a2a.task.id"] != taskID || srv.Attrs["a2a.task.id"] != taskID) {
					t.Errorf("task ids: client %q, server %q, want %q", cli.Attrs["a2a.task.id"], srv.Attrs["a2a.task.id"], taskID)
				}
				if m == a2a.MethodSubscribeToTask {
					for _, s := range []*span{cli, srv} {
						if s.Attrs["a2a.outcome"] != "error" || s.Attrs["a2a.error.reason"] != "TASK_NOT_FOUND" {
							t.Errorf("%v span: outcome %q reason %q, want error TASK_NOT_FOUND", s.Kind, s.Attrs["a2a.outcome"], s.Attrs["a2a.error.reason"])
						}
					}
					if srv.StatusError || !cli.StatusError {
						t.Errorf("status error: server %v (a caller's mistake is not the server's), client %v (want true)", srv.StatusError, cli.StatusError)
					}
				}
			}
		})
	}
}

// Store calls made for an operation are tallied on its span; a slow one
// and a failed one are also events with their duration (and the error),
// on whichever span the context carries. ErrNotFound is an answer, not a
// failure.
func TestStoreCallsOnTheSpan(t *testing.T) {
	st := newStack(t, nil, nil)
	store := st.tel.Store(failingStore{})
	core := a2a.InvokerFuncs{CallFunc: func(ctx context.Context, _ *a2a.Method, _ proto.Message) (proto.Message, error) {
		if _, err := store.GetTask(ctx, taskstore.Scope{}, "t1"); err == nil {
			t.Error("GetTask did not fail")
		}
		if _, err := store.GetMessage(ctx, taskstore.Scope{}, "m1"); !errors.Is(err, taskstore.ErrNotFound) {
			t.Errorf("GetMessage: %v, want ErrNotFound", err)
		}
		if err := store.Append(ctx, taskstore.Scope{}, "t1", taskstore.Event{}); err != nil {
			t.Error(err)
		}
		return &a2a.Task{Id: "t1"}, nil
	}}
	m := a2a.MethodByName(a2a.MethodGetTask)
	if _, err := st.tel.ServerMiddleware(a2a.BindingJSONRPC)(core).Call(context.Background(), m, &a2a.GetTaskRequest{Id: "t1"}); err != nil {
		t.Fatal(err)
	}
	// Under a span that is not an operation's: events only.
	ctx, other := st.tel.TracerProvider().Tracer("test").Start(context.Background(), "other")
	store.GetTask(ctx, taskstore.Scope{}, "t1")
	store.Append(ctx, taskstore.Scope{}, "t1", taskstore.Event{})
	other.End()

	var op, plain *span
	st.rcv.wait(t, "the spans with the store calls", func(spans []*span) bool {
		for _, s := range spans {
			switch {
			case s.Name == a2a.MethodGetTask && s.Attrs["a2a.task.id"] == "t1":
				op = s
			case s.Name == "other":
				plain = s
			}
		}
		return op != nil && plain != nil
	})
	if op.Attrs["parley.store.calls"] != "3" {
		t.Errorf("parley.store.calls = %q, want 3", op.Attrs["parley.store.calls"])
	}
	if ms, err := strconv.ParseFloat(op.Attrs["parley.store.duration_ms"], 64); err != nil || ms < 0.1 {
		t.Errorf("parley.store.duration_ms = %q, want at least the slow Append's 0.1 ms", op.Attrs["parley.store.duration_ms"])
	}
	for _, s := range []*span{op, plain} {
		// The failed GetTask and the slow Append; GetMessage, not found,
		// only if it happened to be slow.
		seen := map[string]bool{}
		for _, e := range s.Events {
			seen[e.Name] = true
			ms, err := strconv.ParseFloat(e.Attrs["parley.store.duration_ms"], 64)
			wantErr := map[string]string{"store.GetTask": "disk on fire"}[e.Name]
			switch {
			case e.Attrs["parley.store.error"] != wantErr:
				t.Errorf("%s: event %s: error %q, want %q", s.Name, e.Name, e.Attrs["parley.store.error"], wantErr)
			case err != nil || ms < 0 || (wantErr == "" && ms < 0.1):
				t.Errorf("%s: event %s: parley.store.duration_ms = %q, want its duration (slow: at least 0.1 ms)", s.Name, e.Name, e.Attrs["parley.store.duration_ms"])
			case e.Time.Before(s.Start) || e.Time.After(s.End):
				t.Errorf("%s: event %s at %v, outside the span", s.Name, e.Name, e.Time)
			}
		}
		if !seen["store.GetTask"] || !seen["store.Append"] {
			t.Errorf("%s: events %+v, want the failed store.GetTask and the slow store.Append", s.Name, s.Events)
		}
	}
	if _, ok := plain.Attrs["parley.store.calls"]; ok {
		t.Error("a span that is not an operation's has a store tally")
	}
}

// failingStore is nopStore whose GetTask fails and whose Append is slow
// (150 µs, past the threshold of an event).
type failingStore struct{ nopStore }

func (failingStore) GetTask(context.Context, taskstore.Scope, string) (*a2a.Task, error) {
	return nil, errors.New("disk on fire")
}

func (failingStore) Append(context.Context, taskstore.Scope, string, taskstore.Event) error {
	time.Sleep(150 * time.Microsecond)
	return nil
}

// An agent that writes to the server span (an attribute, an event, an
// error) over the wire: the span it wrote to is the one exported, with
// the same id the caller's trace and the agent's own child span point to,
// carrying what the agent wrote, the store events recorded before it
// wrote, and Parley's attributes.
func TestAgentWritesToTheServerSpan(t *testing.T) {
	st := newStack(t, nil, func(tel *telemetry.Telemetry, o *server.Options) {
		conformance := o.Agent
		o.Agent = server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
			// A slow store call before the agent writes: an event recorded
			// by Parley, replayed when the SDK takes the span over.
			slow := tel.Store(failingStore{})
			slow.Append(ctx, taskstore.Scope{}, req.TaskID, taskstore.Event{})
			span := trace.SpanFromContext(ctx)
			span.SetAttributes(attribute.String("agent.model", "m1"))
			span.AddEvent("thinking")
			span.RecordError(errors.New("a retried tool call"))
			_, child := tel.TracerProvider().Tracer("agent").Start(ctx, "agent work")
			child.End()
			return conformance.Execute(ctx, req, em)
		})
	})
	tp, traceID, parentID := traceparent()
	c := st.client(t, []client.TransportFactory{client.JSONRPC()}, http.Header{"Traceparent": {tp}})
	if _, err := c.SendMessage(t.Context(), &a2a.SendMessageRequest{Message: a2a.UserMessage("hello")}); err != nil {
		t.Fatal(err)
	}
	var srv, work *span
	st.rcv.wait(t, "the server span and the agent's", func(spans []*span) bool {
		for _, s := range find(spans, func(s *span) bool { return s.TraceID == traceID }) {
			switch s.Name {
			case a2a.MethodSendMessage:
				srv = s
			case "agent work":
				work = s
			}
		}
		return srv != nil && work != nil
	})
	if srv.ParentSpanID != parentID || work.ParentSpanID != srv.SpanID {
		t.Errorf("parents: server %s (want %s), agent's %s (want the server span %s)", srv.ParentSpanID, parentID, work.ParentSpanID, srv.SpanID)
	}
	for k, v := range map[string]string{"agent.model": "m1", "a2a.outcome": "ok", "a2a.binding": a2a.BindingJSONRPC, "a2a.task.state": "TASK_STATE_COMPLETED"} {
		if srv.Attrs[k] != v {
			t.Errorf("server span %s = %q, want %q", k, srv.Attrs[k], v)
		}
	}
	if n, _ := strconv.Atoi(srv.Attrs["parley.store.calls"]); n < 3 {
		t.Errorf("parley.store.calls = %q, want the call's and the execution's", srv.Attrs["parley.store.calls"])
	}
	var names []string
	for _, e := range srv.Events {
		names = append(names, e.Name)
	}
	got := strings.Join(names, " ")
	if !strings.Contains(got, "store.Append thinking exception") {
		t.Errorf("events %q, want the slow store.Append, then thinking and the exception, in order", got)
	}
}
