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
)

// Every protocol the server lists on its card — each (version, binding)
// entry of the server's protocol table — meets the same observability
// and the same input bounds over the real wire: the caller's traceparent
// is the server span's parent, the span and the request metric are
// labelled with the binding and the version the call was served in, and
// an over-long id is refused with InvalidParams. A protocol added to the
// table is on the card, so it is tested here without a test of its own.
func TestEveryProtocolIsTracedLabelledAndBounded(t *testing.T) {
	st := newStack(t, nil, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	served, err := client.Resolve(ctx, st.srv.HTTP.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	ifaces := served.GetSupportedInterfaces()
	if len(ifaces) < 6 {
		t.Fatalf("the card lists %d interfaces, want both versions on the three bindings", len(ifaces))
	}
	for _, in := range ifaces {
		t.Run(in.GetProtocolVersion()+"/"+in.GetProtocolBinding(), func(t *testing.T) {
			card := proto.Clone(served).(*a2a.AgentCard)
			card.SupportedInterfaces = []*a2a.AgentInterface{in}
			tp, traceID, parentID := traceparent()
			c, err := client.New(card, &client.Options{Transports: client.AllTransports(), Header: http.Header{"Traceparent": {tp}}, Retries: -1})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("hello")}); err != nil {
				t.Fatalf("SendMessage: %v", err)
			}
			var srv *span
			st.rcv.wait(t, "the server span", func(spans []*span) bool {
				for _, s := range find(spans, func(s *span) bool { return s.TraceID == traceID }) {
					if s.Name == a2a.MethodSendMessage && s.ParentSpanID == parentID {
						srv = s
					}
				}
				return srv != nil
			})
			if srv.Attrs["a2a.binding"] != in.GetProtocolBinding() || srv.Attrs["a2a.protocol.version"] != in.GetProtocolVersion() {
				t.Errorf("server span labelled %s %s, want %s %s", srv.Attrs["a2a.binding"], srv.Attrs["a2a.protocol.version"],
					in.GetProtocolBinding(), in.GetProtocolVersion())
			}

			// Input bounds: an id longer than the core's bound.
			msg := a2a.UserMessage("hello")
			msg.ContextId = strings.Repeat("c", 300)
			_, err = c.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg})
			if a2a.AsError(err).Code != a2a.CodeInvalidParams {
				t.Errorf("a 300-byte contextId: %v, want InvalidParams", err)
			}
		})
	}

	// The request metric has a series per protocol.
	scrape := httptest.NewServer(st.tel.PrometheusHandler())
	defer scrape.Close()
	fams := scrapeMetrics(t, scrape.URL)
	for _, in := range ifaces {
		labels := map[string]string{"a2a_method": "SendMessage", "a2a_binding": in.GetProtocolBinding(),
			"a2a_protocol_version": in.GetProtocolVersion(), "a2a_outcome": "ok"}
		if got := value(fams, "parley_server_request_duration_seconds", labels); got != 1 {
			t.Errorf("parley_server_request_duration_seconds%v = %v, want 1", labels, got)
		}
	}
}
