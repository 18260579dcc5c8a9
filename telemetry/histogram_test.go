package telemetry

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// The in-memory histogram reports what the SDK's explicit-bucket
// histogram reports for the same durations: count, sum, extremes and the
// buckets, a value on a bound counting in the bucket it closes.
func TestDurationsAsTheSDK(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	sdk, err := mp.Meter("test").Float64Histogram("d", metric.WithExplicitBucketBoundaries(durationBuckets[:]...))
	if err != nil {
		t.Fatal(err)
	}
	var h durations
	if _, ok := h.point(attribute.NewSet(), time.Time{}, time.Time{}); ok {
		t.Error("an empty histogram has a data point")
	}
	values := []time.Duration{
		3 * time.Microsecond, 500 * time.Microsecond, 501 * time.Microsecond, time.Millisecond,
		7 * time.Millisecond, 7 * time.Millisecond, 250 * time.Millisecond, time.Minute, 10 * time.Minute,
	}
	for _, d := range values {
		h.record(d)
		sdk.Record(context.Background(), d.Seconds())
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	want := rm.ScopeMetrics[0].Metrics[0].Data.(metricdata.Histogram[float64]).DataPoints[0]
	got, ok := h.point(attribute.NewSet(), want.StartTime, want.Time)
	if !ok {
		t.Fatal("no data point")
	}
	if got.Count != want.Count || got.Sum != want.Sum || got.Min != want.Min || got.Max != want.Max {
		t.Errorf("count %d sum %v min %v max %v, want %d %v %v %v", got.Count, got.Sum, got.Min, got.Max, want.Count, want.Sum, want.Min, want.Max)
	}
	if len(got.BucketCounts) != len(want.BucketCounts) {
		t.Fatalf("%d buckets, want %d", len(got.BucketCounts), len(want.BucketCounts))
	}
	for i := range want.BucketCounts {
		if got.BucketCounts[i] != want.BucketCounts[i] {
			t.Errorf("bucket %d (le %v): %d, want %d", i, append(durationBuckets[:], 0)[i], got.BucketCounts[i], want.BucketCounts[i])
		}
	}
}
