package telemetry_test

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
	"parley.dev/parley/internal/testkit"
	"parley.dev/parley/server"
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
			// GetMessage and PutMessage for the request; CreateTask and the
			// updates (WORKING, the artifact, COMPLETED) for the execution.
			if n, _ := strconv.Atoi(srv.Attrs["parley.store.calls"]); n < 5 {
				t.Errorf("parley.store.calls = %q, want the request's and the execution's calls (at least 5)", srv.Attrs["parley.store.calls"])
			}
			if ms, err := strconv.ParseFloat(srv.Attrs["parley.store.duration_ms"], 64); err != nil || ms <= 0 || ms > float64(streamed.Milliseconds()) {
				t.Errorf("parley.store.duration_ms = %q, want a time within the stream's", srv.Attrs["parley.store.duration_ms"])
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
