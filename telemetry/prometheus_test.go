package telemetry_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
	"parley.dev/parley/internal/testkit"
	"parley.dev/parley/push"
	"parley.dev/parley/server"
	"parley.dev/parley/telemetry"
)

// After a known set of calls on the three bindings, the Prometheus
// endpoint, scraped over HTTP, lists each metric with its labels and the
// counts those calls make.
func TestPrometheusScrapeAfterKnownCalls(t *testing.T) {
	hook := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer hook.Close()
	st := newStack(t, nil, func(tel *telemetry.Telemetry, o *server.Options) {
		g, _ := push.NewGuard(&push.GuardOptions{AllowPrivate: true})
		s, err := push.New(o.Store, &push.Options{Guard: g, Logger: o.Logger})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close(context.Background()) })
		stop, err := tel.ObservePush(s, o.Store)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(stop)
		o.Push = s
	})
	scrape := httptest.NewServer(st.tel.PrometheusHandler())
	defer scrape.Close()
	knownCalls(t, st, hook.URL)

	var fams map[string]*dto.MetricFamily
	deadline := time.Now().Add(10 * time.Second)
	for {
		fams = scrapeMetrics(t, scrape.URL)
		// Executions end and webhooks are posted after the calls return.
		if value(fams, "parley_server_executions_active", nil) == 0 && value(fams, "parley_push_deliveries_total", nil) >= 1 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	duration := "parley_server_request_duration_seconds"
	checks := []struct {
		name    string
		labels  map[string]string
		want    float64
		atLeast bool
	}{
		{duration, map[string]string{"a2a_method": "SendMessage", "a2a_binding": "JSONRPC", "a2a_protocol_version": "1.0", "a2a_outcome": "ok"}, 3, false},
		{duration, map[string]string{"a2a_method": "GetTask", "a2a_binding": "HTTP+JSON", "a2a_protocol_version": "1.0", "a2a_outcome": "error", "a2a_error_reason": "TASK_NOT_FOUND"}, 1, false},
		{duration, map[string]string{"a2a_method": "SendStreamingMessage", "a2a_binding": "GRPC", "a2a_protocol_version": "1.0", "a2a_outcome": "ok"}, 1, false},
		{"parley_client_request_duration_seconds", map[string]string{"a2a_method": "GetTask", "a2a_binding": "HTTP+JSON", "a2a_outcome": "error", "a2a_error_reason": "TASK_NOT_FOUND"}, 1, false},
		{"parley_server_streams_open", map[string]string{"a2a_method": "SendStreamingMessage", "a2a_binding": "GRPC"}, 0, false},
		{"parley_server_executions_active", nil, 0, false},
		{"parley_store_events_appended_total", nil, 4 * 3, true}, // four tasks, each at least created, worked on, completed
		{"parley_store_operation_duration_seconds", map[string]string{"parley_store_operation": "PutMessage", "a2a_outcome": "ok"}, 4, false},
		{"parley_store_operation_duration_seconds", map[string]string{"parley_store_operation": "GetTask", "a2a_outcome": "ok"}, 1, true},
		{"parley_push_deliveries_total", nil, 1, true},
		{"parley_push_failures_total", nil, 0, false},
		{"parley_push_retries_total", nil, 0, false},
		{"parley_push_suspensions_total", nil, 0, false},
		{"parley_push_dropped_total", nil, 0, false},
		{"parley_push_outbox_depth", nil, 0, true},
	}
	for _, c := range checks {
		got := value(fams, c.name, c.labels)
		if got < 0 {
			t.Errorf("%s%v: no such series in the scrape", c.name, c.labels)
		} else if got != c.want && !(c.atLeast && got >= c.want) {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
}

// knownCalls makes the calls TestPrometheusScrapeAfterKnownCalls counts:
// three blocking SendMessage on JSON-RPC (one with a webhook), a GetTask
// of an unknown task on HTTP+JSON, a stream on gRPC.
func knownCalls(t *testing.T, st *stack, hookURL string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rpc := st.client(t, []client.TransportFactory{client.JSONRPC()}, nil)
	for range 2 {
		if _, err := rpc.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("hello")}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := rpc.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("hello"),
		Configuration: &a2a.SendMessageConfiguration{TaskPushNotificationConfig: &a2a.TaskPushNotificationConfig{Url: hookURL}}}); err != nil {
		t.Fatal(err)
	}
	rest := st.client(t, st.tel.ClientTransports(client.REST()), nil) // the client library's metrics too
	if _, err := rest.GetTask(ctx, &a2a.GetTaskRequest{Id: "no-such-task"}); err == nil {
		t.Fatal("GetTask of an unknown task succeeded")
	}
	grpc := st.client(t, []client.TransportFactory{client.GRPC()}, nil)
	if _, err := testkit.Collect(grpc.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("hello")})); err != nil {
		t.Fatal(err)
	}

}

// scrapeMetrics GETs the endpoint and parses the text format.
func scrapeMetrics(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape: %s", resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	return fams
}

// value returns the value of the series with the labels (a histogram's
// count), or -1 when there is none.
func value(fams map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	f := fams[name]
	if f == nil {
		return -1
	}
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		match := true
		for k, v := range labels {
			match = match && have[k] == v
		}
		if !match || (labels != nil && len(labels) != len(have)-3) { // the otel_scope_* labels besides
			continue
		}
		switch {
		case m.GetHistogram() != nil:
			return float64(m.GetHistogram().GetSampleCount())
		case m.GetCounter() != nil:
			return m.GetCounter().GetValue()
		case m.GetGauge() != nil:
			return m.GetGauge().GetValue()
		}
	}
	return -1
}
