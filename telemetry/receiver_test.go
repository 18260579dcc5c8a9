package telemetry_test

import (
	"context"
	"encoding/hex"
	"io"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"parley.dev/parley/internal/testkit"
)

// receiver is an OTLP trace receiver speaking the real wire protocol:
// OTLP/HTTP (protobuf bodies on /v1/traces) and, through connect-go, OTLP/gRPC
// (the TraceService's Export), on one loopback port over HTTP/1.1 and h2c.
// It keeps every span it is sent.
type receiver struct {
	URL     string // http://127.0.0.1:PORT
	discard bool   // decode and keep nothing (benchmarks); set before traffic
	mu      sync.Mutex
	spans   []*span
	wake    chan struct{}
}

// span is one received span, decoded.
type span struct {
	Name         string
	Kind         tracepb.Span_SpanKind
	TraceID      string
	SpanID       string
	ParentSpanID string
	Start, End   time.Time
	Attrs        map[string]string
	StatusError  bool
	Service      string // the resource's service.name
	Events       []event
}

// event is one event of a received span.
type event struct {
	Name  string
	Time  time.Time
	Attrs map[string]string
}

func startReceiver(t testing.TB) *receiver {
	t.Helper()
	r := &receiver{wake: make(chan struct{}, 1)}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", func(w http.ResponseWriter, req *http.Request) {
		if r.discard { // a benchmark: the collector's work is not Parley's
			io.Copy(io.Discard, req.Body)
			w.Header().Set("Content-Type", "application/x-protobuf")
			return
		}
		body, err := io.ReadAll(req.Body)
		var msg coltracepb.ExportTraceServiceRequest
		if err == nil {
			err = proto.Unmarshal(body, &msg)
		}
		if err != nil || req.Header.Get("Content-Type") != "application/x-protobuf" {
			http.Error(w, "bad OTLP request", http.StatusBadRequest)
			return
		}
		r.add(&msg)
		b, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(b)
	})
	mux.Handle("/opentelemetry.proto.collector.trace.v1.TraceService/Export", connect.NewUnaryHandler(
		"/opentelemetry.proto.collector.trace.v1.TraceService/Export",
		func(_ context.Context, req *connect.Request[coltracepb.ExportTraceServiceRequest]) (*connect.Response[coltracepb.ExportTraceServiceResponse], error) {
			r.add(req.Msg)
			return connect.NewResponse(&coltracepb.ExportTraceServiceResponse{}), nil
		}))
	hs := testkit.ServeH2C(t, mux, nil)
	r.URL = hs.URL
	return r
}

func (r *receiver) add(msg *coltracepb.ExportTraceServiceRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.discard {
		return
	}
	for _, rs := range msg.GetResourceSpans() {
		service := attrs(rs.GetResource().GetAttributes())["service.name"]
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				var evs []event
				for _, e := range s.GetEvents() {
					evs = append(evs, event{Name: e.GetName(), Time: time.Unix(0, int64(e.GetTimeUnixNano())), Attrs: attrs(e.GetAttributes())})
				}
				r.spans = append(r.spans, &span{
					Name: s.GetName(), Kind: s.GetKind(),
					TraceID: hex.EncodeToString(s.GetTraceId()), SpanID: hex.EncodeToString(s.GetSpanId()),
					ParentSpanID: hex.EncodeToString(s.GetParentSpanId()),
					Start:        time.Unix(0, int64(s.GetStartTimeUnixNano())), End: time.Unix(0, int64(s.GetEndTimeUnixNano())),
					Attrs: attrs(s.GetAttributes()), StatusError: s.GetStatus().GetCode() == tracepb.Status_STATUS_CODE_ERROR,
					Service: service, Events: evs,
				})
			}
		}
	}
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// attrs renders attribute values as strings.
func attrs(kvs []*commonpb.KeyValue) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		v := kv.GetValue()
		switch v.GetValue().(type) {
		case *commonpb.AnyValue_IntValue:
			m[kv.GetKey()] = itoa(v.GetIntValue())
		case *commonpb.AnyValue_DoubleValue:
			m[kv.GetKey()] = strconv.FormatFloat(v.GetDoubleValue(), 'f', -1, 64)
		case *commonpb.AnyValue_BoolValue:
			m[kv.GetKey()] = map[bool]string{true: "true", false: "false"}[v.GetBoolValue()]
		default:
			m[kv.GetKey()] = v.GetStringValue()
		}
	}
	return m
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// wait returns the spans received once match finds what it wants among
// them, failing the test after 10 s.
func (r *receiver) wait(t *testing.T, what string, match func([]*span) bool) []*span {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		r.mu.Lock()
		got := append([]*span(nil), r.spans...)
		r.mu.Unlock()
		if match(got) {
			return got
		}
		select {
		case <-r.wake:
		case <-deadline:
			var names []string
			for _, s := range got {
				names = append(names, s.Name+"("+s.Attrs["a2a.binding"]+")")
			}
			t.Fatalf("OTLP receiver: no %s among %d spans: %v", what, len(got), names)
		}
	}
}

// find returns the spans matching f.
func find(spans []*span, f func(*span) bool) []*span {
	var out []*span
	for _, s := range spans {
		if f(s) {
			out = append(out, s)
		}
	}
	return out
}
