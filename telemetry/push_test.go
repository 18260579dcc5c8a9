package telemetry_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
	"parley.dev/parley/push"
	"parley.dev/parley/server"
	"parley.dev/parley/telemetry"
)

// A webhook's POSTs carry a traceparent in the trace of the call that
// caused them, and each POST has its own client span there.
func TestWebhookJoinsTheCallersTrace(t *testing.T) {
	got := make(chan string, 16)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("Traceparent")
	}))
	defer hook.Close()
	st := newStack(t, nil, func(tel *telemetry.Telemetry, o *server.Options) {
		g, err := push.NewGuard(&push.GuardOptions{AllowPrivate: true})
		if err != nil {
			t.Fatal(err)
		}
		s, err := push.New(o.Store, &push.Options{Guard: g, Observer: tel.PushObserver(), Logger: o.Logger})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close(context.Background()) })
		o.Push = s
	})
	tp, traceID, _ := traceparent()
	c := st.client(t, []client.TransportFactory{client.REST()}, http.Header{"Traceparent": {tp}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("hello"),
		Configuration: &a2a.SendMessageConfiguration{TaskPushNotificationConfig: &a2a.TaskPushNotificationConfig{Url: hook.URL + "/hook"}}})
	if err != nil {
		t.Fatal(err)
	}
	// The echo task makes several events; each POST must be in the trace.
	for i := 0; i < 2; i++ {
		select {
		case h := <-got:
			parts := strings.Split(h, "-")
			if len(parts) != 4 || parts[1] != traceID {
				t.Fatalf("webhook POST %d: traceparent %q, want one in trace %s", i, h, traceID)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("webhook POST %d did not arrive", i)
		}
	}
	spans := st.rcv.wait(t, "push.webhook client span", func(spans []*span) bool {
		return len(find(spans, func(s *span) bool { return s.Name == "push.webhook" && s.TraceID == traceID })) > 0
	})
	wh := find(spans, func(s *span) bool { return s.Name == "push.webhook" && s.TraceID == traceID })[0]
	if wh.Kind != tracepb.Span_SPAN_KIND_CLIENT || wh.Attrs["parley.push.outcome"] != "delivered" || wh.Attrs["server.address"] != "127.0.0.1" {
		t.Errorf("webhook span: kind %v attrs %v", wh.Kind, wh.Attrs)
	}
	for k, v := range wh.Attrs {
		if strings.Contains(v, "/hook") {
			t.Errorf("webhook span attribute %s = %q holds the webhook's path", k, v)
		}
	}
}
