package telemetry

import (
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"parley.dev/parley/a2a"
)

// durationHistogram makes one of the duration histograms: the metric SDK's
// own explicit-bucket histogram, with the boundaries of durationBuckets.
// Their attribute sets are made once per series (callDurations, storeOp),
// not on every measurement.
func durationHistogram(m metric.Meter, name, desc string) metric.Float64Histogram {
	return must(m.Float64Histogram(name, metric.WithUnit("s"), metric.WithDescription(desc),
		metric.WithExplicitBucketBoundaries(durationBuckets[:]...)))
}

// callDurations are the request duration series of one side (server or
// client) and binding, shared by every observed invoker of that side and
// binding: a series per method for the successful calls in the side's
// usual version, made up front, and one per method, version, outcome and
// reason for the others, made on first use (versions are those served,
// reasons the A2A error codes: closed sets). Beside them, the attributes
// of a stream open on a server, by method.
type callDurations struct {
	hist    metric.Float64Histogram
	version string // the version of the series made up front ("" on the client side)
	ok      map[*a2a.Method][]metric.RecordOption
	other   sync.Map // seriesKey → []metric.RecordOption
	open    map[*a2a.Method][]metric.AddOption
}

// seriesKey keys the series made on first use.
type seriesKey struct {
	m                        *a2a.Method
	version, outcome, reason string
}

func newCallDurations(hist metric.Float64Histogram, binding, version string) *callDurations {
	c := &callDurations{hist: hist, version: version, ok: make(map[*a2a.Method][]metric.RecordOption),
		open: make(map[*a2a.Method][]metric.AddOption)}
	for m := range a2a.Methods() {
		c.ok[m] = recordOpts(callAttrs(m, binding, version, outcomeOK, ""))
		c.open[m] = []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(keyMethod.String(m.Name), keyBinding.String(binding)))}
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

// callSide keys the request duration series of one side and binding.
type callSide struct {
	server  bool
	binding string
}

// callsOf returns the request duration series of one side and binding.
func (ins *instruments) callsOf(server bool, binding string) *callDurations {
	if c, ok := ins.calls.Load(callSide{server, binding}); ok {
		return c.(*callDurations)
	}
	hist, version := ins.clientDuration, "" // a client's calls carry no served version
	if server {
		hist, version = ins.serverDuration, a2a.ProtocolVersion
	}
	c, _ := ins.calls.LoadOrStore(callSide{server, binding}, newCallDurations(hist, binding, version))
	return c.(*callDurations)
}

// epoch is when the package was initialized.
var epoch = time.Now()

// now is the time since epoch on the monotonic clock, for measuring
// durations: it reads one clock where time.Now reads two (the wall clock
// too).
func now() time.Duration { return time.Since(epoch) }
