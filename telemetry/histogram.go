package telemetry

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"parley.dev/parley/a2a"
)

// durations is a histogram of durations with the bounds of
// durationBuckets, kept in Parley's memory with atomic counters and read
// by the SDK when the metrics are collected (see producer). It is
// what the SDK's explicit-bucket histogram keeps (count, sum, minimum,
// maximum, a count per bucket, each bucket holding the values up to its
// bound included), for a fraction of the cost of a measurement: a
// synchronous Record looks up its attribute set (by reflection) and the
// series for it, on every call; here a call is a few atomic additions.
// See producer.
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

// callDurations are the request duration histograms of one side
// (server or client) and binding, shared by every observed invoker of
// that side and binding: a series per method for the successful calls in
// the side's usual version, made up front, and one per method, version,
// outcome and reason for the others, made on first use (versions are
// those served, reasons the A2A error codes: closed sets).
type callDurations struct {
	version string // the version of the series made up front ("" on the client side)
	ok      map[*a2a.Method]*series
	other   sync.Map // seriesKey → *series
}

// series is one histogram and its attributes.
type series struct {
	attrs attribute.Set
	h     durations
}

// seriesKey keys the series made on first use.
type seriesKey struct {
	m                        *a2a.Method
	version, outcome, reason string
}

func newCallDurations(binding, version string) *callDurations {
	c := &callDurations{version: version, ok: make(map[*a2a.Method]*series)}
	for m := range a2a.Methods() {
		c.ok[m] = &series{attrs: callAttrs(m, binding, version, outcomeOK, "")}
	}
	return c
}

// callAttrs are the attributes of a request duration series.
func callAttrs(m *a2a.Method, binding, version, outcome, reason string) attribute.Set {
	kv := []attribute.KeyValue{keyMethod.String(m.Name), keyBinding.String(binding), keyOutcome.String(outcome)}
	if version != "" {
		kv = append(kv, keyVersion.String(version))
	}
	if reason != "" {
		kv = append(kv, keyReason.String(reason))
	}
	return attribute.NewSet(kv...)
}

// of returns the series of a call served in version with this outcome.
func (c *callDurations) of(m *a2a.Method, binding, version, outcome, reason string) *series {
	if outcome == outcomeOK && version == c.version {
		if s := c.ok[m]; s != nil {
			return s
		}
	}
	k := seriesKey{m, version, outcome, reason}
	if s, ok := c.other.Load(k); ok {
		return s.(*series)
	}
	s, _ := c.other.LoadOrStore(k, &series{attrs: callAttrs(m, binding, version, outcome, reason)})
	return s.(*series)
}

// points appends the data points of every series with values.
func (c *callDurations) points(points []metricdata.HistogramDataPoint[float64], start, now time.Time) []metricdata.HistogramDataPoint[float64] {
	for m := range a2a.Methods() {
		s := c.ok[m]
		if dp, ok := s.h.point(s.attrs, start, now); ok {
			points = append(points, dp)
		}
	}
	c.other.Range(func(_, v any) bool {
		s := v.(*series)
		if dp, ok := s.h.point(s.attrs, start, now); ok {
			points = append(points, dp)
		}
		return true
	})
	return points
}

// calls returns the request duration histograms of one side and binding.
func (ins *instruments) calls(server bool, binding string) *callDurations {
	ins.callsMu.Lock()
	defer ins.callsMu.Unlock()
	side := &ins.clientCalls
	if server {
		side = &ins.serverCalls
	}
	if *side == nil {
		*side = make(map[string]*callDurations)
	}
	c := (*side)[binding]
	if c == nil {
		version := "" // a client's calls carry no served version
		if server {
			version = a2a.ProtocolVersion
		}
		c = newCallDurations(binding, version)
		(*side)[binding] = c
	}
	return c
}

// producer hands the SDK's readers (OTLP and Prometheus) the histograms
// Parley keeps itself: parley.server.request.duration,
// parley.client.request.duration (by method, binding, outcome and reason)
// and parley.store.operation.duration (by operation and outcome). They
// are recorded several times per message, and through the SDK they were
// most of the metrics' cost per message. They are cumulative whatever
// temporality a reader prefers (OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE
// applies to the SDK's own instruments only).
type producer struct {
	start time.Time
	ins   atomic.Pointer[instruments] // set once the instruments are made
}

var _ sdkmetric.Producer = (*producer)(nil)

// Produce implements sdkmetric.Producer.
func (p *producer) Produce(context.Context) ([]metricdata.ScopeMetrics, error) {
	ins := p.ins.Load()
	if ins == nil {
		return nil, nil
	}
	now := time.Now()
	var metrics []metricdata.Metrics
	add := func(name, desc string, points []metricdata.HistogramDataPoint[float64]) {
		if len(points) > 0 {
			metrics = append(metrics, metricdata.Metrics{Name: name, Description: desc, Unit: "s",
				Data: metricdata.Histogram[float64]{Temporality: metricdata.CumulativeTemporality, DataPoints: points}})
		}
	}
	ins.callsMu.Lock()
	var server, client []metricdata.HistogramDataPoint[float64]
	for _, c := range ins.serverCalls {
		server = c.points(server, p.start, now)
	}
	for _, c := range ins.clientCalls {
		client = c.points(client, p.start, now)
	}
	ins.callsMu.Unlock()
	add("parley.server.request.duration", "Duration of A2A operations served, streams until they end, by method, binding and outcome.", server)
	add("parley.client.request.duration", "Duration of A2A calls made by the client library, by method, binding and outcome.", client)
	var store []metricdata.HistogramDataPoint[float64]
	for _, op := range storeOps {
		for outcome := range op.attrs {
			if dp, ok := ins.store[op.index][outcome].point(op.attrs[outcome], p.start, now); ok {
				store = append(store, dp)
			}
		}
	}
	add("parley.store.operation.duration", "Duration of task store calls, by operation and outcome.", store)
	if len(metrics) == 0 {
		return nil, nil
	}
	return []metricdata.ScopeMetrics{{Scope: instrumentation.Scope{Name: ScopeName}, Metrics: metrics}}, nil
}

// epoch is when the package was initialized.
var epoch = time.Now()

// now is the time since epoch on the monotonic clock, for measuring
// durations: it reads one clock where time.Now reads two (the wall clock
// too), which on some virtual machines costs a hundred nanoseconds a
// call, several times per message.
func now() time.Duration { return time.Since(epoch) }
