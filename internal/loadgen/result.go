package loadgen

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// summarize gathers what the workers measured into a Result; cpu is the
// generator's own CPU time during the run.
func summarize(cfg Config, workers []*worker, elapsed, cpu time.Duration) *Result {
	res := &Result{Op: cfg.Op, Binding: cfg.Binding, URL: cfg.URL, URLs: cfg.URLs, Concurrency: cfg.Concurrency,
		Elapsed: elapsed, ErrorKinds: map[string]int{}}
	if cfg.Op == OpStream {
		res.Chunks = cfg.Chunks
		if cfg.Binding != BindingGRPC { // gRPC streams carry no event numbers
			res.Resume = &ResumeStats{}
		}
	}
	var all []time.Duration
	for _, w := range workers {
		all = append(all, w.samples...)
		for k, n := range w.errs {
			res.ErrorKinds[k] += n
			res.Errors += n
		}
		if res.FirstError == "" {
			res.FirstError = w.first
		}
		if res.Resume != nil {
			res.Resume.StreamsCut += w.streamsCut
			res.Resume.EventsLost += w.eventsLost
			res.Resume.EventsDuplicated += w.eventsDup
		}
	}
	slices.Sort(all)
	res.OK = len(all)
	res.RPS = float64(res.OK) / elapsed.Seconds()
	if len(all) > 0 {
		res.P50, res.P90, res.P99 = quantile(all, 0.50), quantile(all, 0.90), quantile(all, 0.99)
		res.Max = all[len(all)-1]
	}
	if ops := res.OK + res.Errors; ops > 0 {
		res.LoadCPUms = float64(cpu) / float64(time.Millisecond) / float64(ops)
	}
	return res
}

// quantile is the q-quantile of sorted samples (nearest rank).
func quantile(sorted []time.Duration, q float64) time.Duration {
	i := int(q*float64(len(sorted))+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// WriteText writes r for people, a few aligned lines.
func (r *Result) WriteText(w io.Writer) {
	what := r.Op
	if r.Op == OpStream {
		what = fmt.Sprintf("stream of %d chunks", r.Chunks)
	}
	fmt.Fprintf(w, "%s over %s, %d clients, %s, %s\n", what, r.Binding, r.Concurrency, r.Elapsed.Round(time.Millisecond),
		strings.Join(append([]string{r.URL}, r.URLs...), " "))
	fmt.Fprintf(w, "  requests   %d ok, %d errors, %.0f/s\n", r.OK, r.Errors, r.RPS)
	fmt.Fprintf(w, "  latency    p50 %s  p90 %s  p99 %s  max %s\n", ms(r.P50), ms(r.P90), ms(r.P99), ms(r.Max))
	for _, s := range append([]*ServerStats{r.Server}, r.Servers...) {
		if s != nil {
			fmt.Fprintf(w, "  server     %.3f CPU-ms/op (%.0f CPU-ms, %d requests), peak RSS %.1f MiB (VmHWM %.1f MiB), pid %d %s%s\n",
				s.CPUmsPerOp, s.CPUms, s.Requests, float64(s.PeakRSSBytes)/(1<<20), float64(s.HWMBytes)/(1<<20), s.PID, s.URL, r.ratios(s))
		}
	}
	fmt.Fprintf(w, "  generator  %.3f CPU-ms/op\n", r.LoadCPUms)
	if s := r.Resume; s != nil {
		fmt.Fprintf(w, "  events     %d lost, %d duplicated; %d streams cut and resumed\n", s.EventsLost, s.EventsDuplicated, s.StreamsCut)
	}
	if r.Errors > 0 {
		kinds := slices.Sorted(maps.Keys(r.ErrorKinds))
		parts := make([]string, len(kinds))
		for i, k := range kinds {
			parts[i] = fmt.Sprintf("%s: %d", k, r.ErrorKinds[k])
		}
		fmt.Fprintf(w, "  errors     %s\n  first      %s\n", strings.Join(parts, ", "), r.FirstError)
	}
	if a := r.Attack; a != nil {
		fmt.Fprintf(w, "  attack     %d stalled uploads, %d stuck reads, %d slow headers (answers %v), %d slow readers (%d streams opened)\n",
			a.StalledUploads, a.StuckReads, a.SlowHeaders, a.Answers, a.SlowReaders, a.Connections)
	}
}

// ms renders d in milliseconds, to two decimals.
func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 2, 64) + "ms"
}

// ratios describes s beside the yardsticks of a side-by-side run: " (the
// floor)" for the floor itself, and for any other server its CPU per
// request as a multiple of the floor's and of the ceiling's.
func (r *Result) ratios(s *ServerStats) string {
	if s.Yardstick != "" {
		return " (the " + s.Yardstick + ")"
	}
	var parts []string
	for _, kind := range []string{"floor", "ceiling"} {
		for _, y := range r.Servers {
			if y.Yardstick == kind && y.CPUmsPerOp > 0 && s.CPUmsPerOp > 0 {
				parts = append(parts, fmt.Sprintf("%.2f× %s", s.CPUmsPerOp/y.CPUmsPerOp, kind))
			}
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return ": " + strings.Join(parts, ", ")
}
