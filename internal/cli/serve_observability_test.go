package cli_test

import (
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"parley.dev/parley/internal/testenv"
	"parley.dev/parley/internal/testkit"
)

// `parley serve --metrics-addr` with OTEL_* set: the probes answer on both
// ports, the metrics on the metrics port, and the span of a call carrying
// a traceparent reaches an OTLP/HTTP receiver, at the latest when the
// server stops (it flushes).
func TestServeObservability(t *testing.T) {
	var mu sync.Mutex
	var traces []string // trace ids of the spans received
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var req coltracepb.ExportTraceServiceRequest
		if r.URL.Path != "/v1/traces" || proto.Unmarshal(b, &req) != nil {
			http.Error(w, "bad request", 400)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		for _, rs := range req.GetResourceSpans() {
			for _, ss := range rs.GetScopeSpans() {
				for _, s := range ss.GetSpans() {
					traces = append(traces, hex.EncodeToString(s.GetTraceId())+"/"+s.GetName())
				}
			}
		}
	}))
	defer rcv.Close()

	addr, maddr := testkit.FreeAddr(t), testkit.FreeAddr(t)
	cmd := exec.Command(testkit.ParleyBinary(t), "serve", "--addr", addr, "--store", "memory", "--metrics-addr", maddr)
	cmd.Env = append(os.Environ(), "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT="+rcv.URL+"/v1/traces", "OTEL_METRICS_EXPORTER=none")
	p := testenv.StartProcess(t, cmd, &testenv.ProcessOptions{Name: "parley serve", KillAtCleanup: true})
	if _, err := p.WaitLine(func(l string) bool { return strings.Contains(l, "message:send") }, 15*time.Second); err != nil {
		t.Fatalf("parley serve did not start: %v", err)
	}

	for _, u := range []string{"http://" + addr + "/healthz", "http://" + addr + "/readyz", "http://" + maddr + "/healthz", "http://" + maddr + "/readyz"} {
		if code, body := fetch(t, u, nil); code != 200 {
			t.Errorf("GET %s = %d %q", u, code, body)
		}
	}
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	code, body := fetch(t, "http://"+addr+"/message:send", http.Header{"Traceparent": {"00-" + traceID + "-00f067aa0ba902b7-01"}})
	if code != 200 {
		t.Fatalf("SendMessage: %d %s", code, body)
	}
	_, metrics := fetch(t, "http://"+maddr+"/metrics", nil)
	for _, want := range []string{
		`parley_server_request_duration_seconds_count{a2a_binding="HTTP+JSON",a2a_method="SendMessage",a2a_outcome="ok"`,
		`parley_store_events_appended_total{`,
		`parley_push_outbox_depth{`,
		`go_goroutines `,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics has no %s", want)
		}
	}

	p.Signal(syscall.SIGTERM)
	select {
	case <-p.Exited():
	case <-time.After(15 * time.Second):
		t.Fatal("no exit after SIGTERM")
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(strings.Join(traces, " "), traceID+"/SendMessage") {
		t.Errorf("the receiver got no SendMessage span in the caller's trace: %v", traces)
	}
}

// fetch GETs u, or POSTs a message when u is message:send.
func fetch(t *testing.T, u string, h http.Header) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", u, nil)
	if strings.HasSuffix(u, "message:send") {
		req, _ = http.NewRequest("POST", u, strings.NewReader(`{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"hi"}]}}`))
		req.Header.Set("Content-Type", "application/a2a+json")
		req.Header.Set("A2A-Version", "1.0")
	}
	for k, v := range h {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestServeRefusesUnknownOTELExporter(t *testing.T) {
	cmd := exec.Command(testkit.ParleyBinary(t), "serve", "--store", "memory", "--addr", testkit.FreeAddr(t))
	cmd.Env = append(os.Environ(), "OTEL_TRACES_EXPORTER=zipkin")
	out, err := cmd.CombinedOutput()
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 2 || !strings.Contains(string(out), "OTEL_TRACES_EXPORTER") {
		t.Errorf("exit %v, want 2 naming the variable:\n%s", err, out)
	}
}
