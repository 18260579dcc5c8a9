package telemetry

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"parley.dev/parley/a2a"
)

// The duration histograms are the metric SDK's own explicit-bucket
// histograms (Float64Histogram, with the boundaries of durationBuckets):
// parley.server.request.duration and parley.client.request.duration, by
// method, binding, protocol version, outcome and reason, and
// parley.store.operation.duration, by operation and outcome. Their
// attribute sets are made once (a set per series, handed to Record with
// metric.WithAttributeSet), not on every measurement.

// durationHistogram makes one of the duration histograms.
func durationHistogram(m metric.Meter, name, desc string) metric.Float64Histogram {
	return must(m.Float64Histogram(name, metric.WithUnit("s"), metric.WithDescription(desc),
		metric.WithExplicitBucketBoundaries(durationBuckets[:]...)))
}

// callDurations are the request duration series of one side (server or
// client) and binding, shared by every observed invoker of that side and
// binding: a series per method for the successful calls in the side's
// usual version, made up front, and one per method, version, outcome and
// reason for the others, made on first use (versions are those served,
// reasons the A2A error codes: closed sets).
type callDurations struct {
	hist    metric.Float64Histogram
	version string // the version of the series made up front ("" on the client side)
	ok      map[*a2a.Method][]metric.RecordOption
	other   sync.Map // seriesKey → []metric.RecordOption
}

// seriesKey keys the series made on first use.
type seriesKey struct {
	m                        *a2a.Method
	version, outcome, reason string
}

func newCallDurations(hist metric.Float64Histogram, binding, version string) *callDurations {
	c := &callDurations{hist: hist, version: version, ok: make(map[*a2a.Method][]metric.RecordOption)}
	for m := range a2a.Methods() {
		c.ok[m] = recordOpts(callAttrs(m, binding, version, outcomeOK, ""))
	}
	return c
}

// recordOpts are the options of a Record with the attribute set.
func recordOpts(set attribute.Set) []metric.RecordOption {
	return []metric.RecordOption{metric.WithAttributeSet(set)}
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

// of returns the record options of a call's series.
func (c *callDurations) of(m *a2a.Method, binding, version, outcome, reason string) []metric.RecordOption {
	if outcome == outcomeOK && version == c.version {
		if o := c.ok[m]; o != nil {
			return o
		}
	}
	k := seriesKey{m, version, outcome, reason}
	if o, ok := c.other.Load(k); ok {
		return o.([]metric.RecordOption)
	}
	o, _ := c.other.LoadOrStore(k, recordOpts(callAttrs(m, binding, version, outcome, reason)))
	return o.([]metric.RecordOption)
}

// record records the duration of a call served in version with this
// outcome.
func (c *callDurations) record(ctx context.Context, d time.Duration, m *a2a.Method, binding, version, outcome, reason string) {
	c.hist.Record(ctx, d.Seconds(), c.of(m, binding, version, outcome, reason)...)
}

// calls returns the request duration series of one side and binding.
func (ins *instruments) calls(server bool, binding string) *callDurations {
	ins.callsMu.Lock()
	defer ins.callsMu.Unlock()
	side, hist, version := ins.clientCalls, ins.clientDuration, "" // a client's calls carry no served version
	if server {
		side, hist, version = ins.serverCalls, ins.serverDuration, a2a.ProtocolVersion
	}
	c := side[binding]
	if c == nil {
		c = newCallDurations(hist, binding, version)
		side[binding] = c
	}
	return c
}

// epoch is when the package was initialized.
var epoch = time.Now()

// now is the time since epoch on the monotonic clock, for measuring
// durations: it reads one clock where time.Now reads two (the wall clock
// too).
func now() time.Duration { return time.Since(epoch) }
