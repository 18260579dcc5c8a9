package telemetry

import (
	"context"
	"math"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// durations is a histogram of durations with the bounds of
// durationBuckets, kept in Parley's memory with atomic counters and read
// by the SDK when the metrics are collected (see storeProducer). It is
// what the SDK's explicit-bucket histogram keeps (count, sum, minimum,
// maximum, a count per bucket, each bucket holding the values up to its
// bound included), for a fraction of the cost of a measurement: a
// synchronous Record looks up its attribute set (by reflection) and the
// series for it, on every call; here a call is a few atomic additions.
type durations struct {
	count    atomic.Uint64
	sum      atomic.Int64 // nanoseconds
	min, max atomic.Int64 // nanoseconds; valid once count > 0
	buckets  [len(durationBuckets) + 1]atomic.Uint64
}

// bucketBounds are durationBuckets in nanoseconds.
var bucketBounds = func() [len(durationBuckets)]int64 {
	var b [len(durationBuckets)]int64
	for i, s := range durationBuckets {
		b[i] = int64(math.Round(s * 1e9))
	}
	return b
}()

// record adds one duration.
func (h *durations) record(d time.Duration) {
	n := int64(d)
	i := 0
	for i < len(bucketBounds) && n > bucketBounds[i] {
		i++
	}
	h.buckets[i].Add(1)
	h.sum.Add(n)
	if h.count.Add(1) == 1 {
		// The first value: min and max start from it. A value recorded
		// concurrently may be lost from the extremes, never from the
		// counts.
		h.min.Store(n)
		h.max.Store(n)
		return
	}
	for m := h.min.Load(); n < m && !h.min.CompareAndSwap(m, n); m = h.min.Load() {
	}
	for m := h.max.Load(); n > m && !h.max.CompareAndSwap(m, n); m = h.max.Load() {
	}
}

// point is the histogram as a cumulative data point; ok is false while it
// is empty (the SDK reports no series for an attribute set never seen).
func (h *durations) point(attrs attribute.Set, start, now time.Time) (metricdata.HistogramDataPoint[float64], bool) {
	count := h.count.Load()
	if count == 0 {
		return metricdata.HistogramDataPoint[float64]{}, false
	}
	p := metricdata.HistogramDataPoint[float64]{
		Attributes: attrs, StartTime: start, Time: now,
		Bounds:       durationBuckets[:],
		BucketCounts: make([]uint64, len(h.buckets)),
		Sum:          time.Duration(h.sum.Load()).Seconds(),
		Min:          metricdata.NewExtrema(time.Duration(h.min.Load()).Seconds()),
		Max:          metricdata.NewExtrema(time.Duration(h.max.Load()).Seconds()),
	}
	// Count is the sum of the buckets read, so that the two agree even
	// while values are being recorded.
	for i := range h.buckets {
		p.BucketCounts[i] = h.buckets[i].Load()
		p.Count += p.BucketCounts[i]
	}
	return p, true
}

// storeProducer hands the SDK's readers (OTLP and Prometheus) the
// parley.store.operation.duration histogram, by operation and outcome:
// the store makes several calls per message, and this instrument, fed
// through the SDK, was most of the metrics' cost per message.
type storeProducer struct {
	start time.Time
	ins   atomic.Pointer[instruments] // set once the instruments are made
}

var _ sdkmetric.Producer = (*storeProducer)(nil)

// Produce implements sdkmetric.Producer.
func (p *storeProducer) Produce(context.Context) ([]metricdata.ScopeMetrics, error) {
	ins := p.ins.Load()
	if ins == nil {
		return nil, nil
	}
	now := time.Now()
	var points []metricdata.HistogramDataPoint[float64]
	for _, op := range storeOps {
		for outcome := range op.attrs {
			if dp, ok := ins.store[op.index][outcome].point(op.attrs[outcome], p.start, now); ok {
				points = append(points, dp)
			}
		}
	}
	if len(points) == 0 {
		return nil, nil
	}
	return []metricdata.ScopeMetrics{{
		Scope: instrumentation.Scope{Name: ScopeName},
		Metrics: []metricdata.Metrics{{
			Name: "parley.store.operation.duration", Unit: "s",
			Description: "Duration of task store calls, by operation and outcome.",
			Data:        metricdata.Histogram[float64]{Temporality: metricdata.CumulativeTemporality, DataPoints: points},
		}},
	}}, nil
}

// epoch is when the package was initialized.
var epoch = time.Now()

// now is the time since epoch on the monotonic clock, for measuring
// durations: it reads one clock where time.Now reads two (the wall clock
// too), which on some virtual machines costs a hundred nanoseconds a
// call, several times per message.
func now() time.Duration { return time.Since(epoch) }
