package telemetry

import (
	"context"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"parley.dev/parley/a2a"
)

// The duration histograms are the SDK's, with Parley's names, unit,
// bucket boundaries and attributes.
func TestDurationHistograms(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	ins := newInstruments(mp.Meter(ScopeName))
	ctx := context.Background()
	m := a2a.MethodByName(a2a.MethodGetTask)
	record := func(c *callDurations, d time.Duration, binding, version, outcome, reason string) {
		c.hist.Record(ctx, d.Seconds(), c.of(m, binding, version, outcome, reason)...) // as observed.finish does
	}
	server := ins.callsOf(true, a2a.BindingJSONRPC)
	record(server, 3*time.Millisecond, a2a.BindingJSONRPC, a2a.ProtocolVersion, outcomeOK, "")
	record(server, time.Millisecond, a2a.BindingJSONRPC, a2a.ProtocolVersion, outcomeError, "TASK_NOT_FOUND")
	record(server, time.Millisecond, a2a.BindingJSONRPC, a2a.ProtocolVersion, outcomeError, "TASK_NOT_FOUND")
	record(ins.callsOf(false, a2a.BindingGRPC), 10*time.Minute, a2a.BindingGRPC, "", outcomeOK, "")
	ins.storeDuration.Record(ctx, 0.0005, opAppend.opts[0]...)

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		for _, mt := range sm.Metrics {
			got[mt.Name] = mt
		}
	}
	want := map[string][]struct {
		attrs  attribute.Set
		count  uint64
		bucket int // the bucket the values fall in
		sum    float64
	}{
		"parley.server.request.duration": {
			{attrs: callAttrs(m, a2a.BindingJSONRPC, a2a.ProtocolVersion, outcomeOK, ""), count: 1, bucket: 3, sum: 0.003},
			{attrs: callAttrs(m, a2a.BindingJSONRPC, a2a.ProtocolVersion, outcomeError, "TASK_NOT_FOUND"), count: 2, bucket: 1, sum: 0.002},
		},
		"parley.client.request.duration": {
			{attrs: callAttrs(m, a2a.BindingGRPC, "", outcomeOK, ""), count: 1, bucket: len(durationBuckets), sum: 600},
		},
		"parley.store.operation.duration": {
			{attrs: attribute.NewSet(keyStoreOp.String("Append"), keyOutcome.String(outcomeOK)), count: 1, bucket: 0, sum: 0.0005},
		},
	}
	for name, series := range want {
		mt, ok := got[name]
		if !ok {
			t.Errorf("no %s", name)
			continue
		}
		if mt.Unit != "s" {
			t.Errorf("%s: unit %q, want s", name, mt.Unit)
		}
		h, ok := mt.Data.(metricdata.Histogram[float64])
		if !ok || len(h.DataPoints) != len(series) {
			t.Errorf("%s: %T with %d points, want a histogram with %d", name, mt.Data, len(h.DataPoints), len(series))
			continue
		}
		for _, w := range series {
			i := slices.IndexFunc(h.DataPoints, func(p metricdata.HistogramDataPoint[float64]) bool { return p.Attributes.Equals(&w.attrs) })
			if i < 0 {
				t.Errorf("%s: no series %v", name, w.attrs.ToSlice())
				continue
			}
			p := h.DataPoints[i]
			if !slices.Equal(p.Bounds, durationBuckets[:]) {
				t.Errorf("%s: bounds %v, want %v", name, p.Bounds, durationBuckets)
			}
			if p.Count != w.count || p.BucketCounts[w.bucket] != w.count || p.Sum < w.sum*0.999 || p.Sum > w.sum*1.001 {
				t.Errorf("%s%v: count %d, buckets %v, sum %v; want %d in bucket %d, sum %v", name, w.attrs.ToSlice(), p.Count, p.BucketCounts, p.Sum, w.count, w.bucket, w.sum)
			}
		}
	}
}
