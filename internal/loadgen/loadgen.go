// Package loadgen is a closed-loop load generator for A2A servers, and the
// "ceiling" responder its figures are compared with (see
// docs/performance.md). Each of Concurrency workers owns one HTTP/1.1
// connection (HTTP/2 without TLS for gRPC) and sends its next request as
// soon as the previous answer has been read to the end. Requests are
// precomputed bytes in which only the messageId is rewritten, and answers
// are read by a minimal HTTP reader, so the generator costs little next
// to the server it measures.
package loadgen

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Operations and bindings.
const (
	OpSend   = "send"   // blocking SendMessage, text "hello"
	OpStream = "stream" // SendStreamingMessage, text "stream N", read to the end
	OpGet    = "get"    // GetTask of one task created before the run

	BindingJSONRPC = "jsonrpc"
	BindingREST    = "rest"
	BindingGRPC    = "grpc" // over HTTP/2 without TLS
)

// Config is one load run. Zero values take the defaults noted.
type Config struct {
	URL string // the server's base URL (JSON-RPC endpoint; REST paths below it)
	// URLs are more base URLs, of other replicas of the same agent: the
	// workers are spread over URL and these in turn (worker i on the
	// i-th modulo their number), each keeping its connection to one.
	URLs        []string
	Op          string        // OpSend, OpStream or OpGet
	Binding     string        // BindingJSONRPC, BindingREST or BindingGRPC
	Concurrency int           // workers (connections); default 64
	Duration    time.Duration // how long requests are started; default 10s
	Chunks      int           // chunks per stream (OpStream); default 20
	Timeout     time.Duration // per request; default 30s
	// ServerPIDs are the local server processes whose CPU and memory are
	// reported (from /proc): one, for the whole run, or one per URL (URL,
	// then URLs), each then charged with the requests sent to its URL.
	// Two servers measured side by side in one run (say, one with a
	// feature on and one without) see the same machine: the difference
	// between them is not the machine's from one run to the next.
	ServerPIDs []int
	// Hostile traffic beside the load (see Attack): connections that
	// stall a large upload, and streams read very slowly.
	StalledUploads, SlowReaders int
	// StalledOver aims the stalled uploads at one protocol of the server,
	// "VERSION/BINDING" (1.0 or 0.3; jsonrpc, rest or grpc), over HTTP/2
	// without TLS; empty: the run's binding over HTTP/1.1.
	StalledOver string
	// StalledToken, when set, is the bearer token the stalled uploads
	// send: they are then an authenticated caller's, not anonymous.
	StalledToken string
	// StuckReads are hostile GetTasks of a large task that never take
	// their answer (see stuckRead), each on an HTTP/2 connection of its
	// own, as StalledToken's caller; StuckSize is the size of the text the
	// task echoes (default 8 MiB: a task of 16 MB).
	StuckReads, StuckSize int
	// SlowHeaders are connections that never finish their headers, spread
	// over SlowHeaderSources loopback addresses (default 5), beside a
	// control client (see slowHeader).
	SlowHeaders, SlowHeaderSources int
	// CutShare is the share (0 to 1) of streams (OpStream) whose
	// connection the generator drops after some events, then resumes
	// with SubscribeToTask and Last-Event-ID (see ResumeStats). The
	// latency of such a stream covers both parts.
	CutShare float64
}

// Result is what a run measured. Durations are in nanoseconds in JSON.
type Result struct {
	Op          string         `json:"op"`
	Binding     string         `json:"binding"`
	URL         string         `json:"url"`
	URLs        []string       `json:"urls,omitempty"` // Config.URLs
	Concurrency int            `json:"concurrency"`
	Chunks      int            `json:"chunks,omitempty"`
	Elapsed     time.Duration  `json:"elapsedNs"`
	OK          int            `json:"ok"`
	Errors      int            `json:"errors"`
	ErrorKinds  map[string]int `json:"errorKinds,omitempty"`
	FirstError  string         `json:"firstError,omitempty"`
	RPS         float64        `json:"rps"` // successful requests per second
	P50         time.Duration  `json:"p50Ns"`
	P90         time.Duration  `json:"p90Ns"`
	P99         time.Duration  `json:"p99Ns"`
	Max         time.Duration  `json:"maxNs"`
	// The generator's own CPU per request, to show it is not the bottleneck.
	LoadCPUms float64 `json:"loadCpuMsPerOp"`
	// Server figures, with one Config.ServerPIDs (from /proc).
	Server *ServerStats `json:"server,omitempty"`
	// Servers are the figures of each URL's server, with one
	// Config.ServerPIDs per URL.
	Servers []*ServerStats `json:"servers,omitempty"`
	// Attack is what the hostile connections met, when there were any.
	Attack *Attack `json:"attack,omitempty"`
	// Resume is what the event numbers of the streams showed (OpStream).
	Resume *ResumeStats `json:"resume,omitempty"`
}

// ServerStats is the measured server process's cost during the run.
type ServerStats struct {
	PID          int     `json:"pid"`
	URL          string  `json:"url,omitempty"` // with a server per URL
	Requests     int     `json:"requests"`      // successful and failed, sent to it
	CPUms        float64 `json:"cpuMs"`         // utime+stime during the run
	CPUmsPerOp   float64 `json:"cpuMsPerOp"`    // CPUms / requests (successful and failed)
	PeakRSSBytes int64   `json:"peakRssBytes"`  // the largest VmRSS sampled during the run
	HWMBytes     int64   `json:"vmHwmBytes"`    // VmHWM at the end: the process's lifetime peak
	// Yardstick is "ceiling" or "floor" when the server is that responder
	// (side by side: asked at YardstickPath before the run).
	Yardstick string `json:"yardstick,omitempty"`
}

// Run runs the load described by cfg until cfg.Duration has passed (or ctx
// ends) and reports what it measured.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	cfg = cfg.withDefaults()
	if _, err := parseStallTarget(cfg.StalledOver); err != nil {
		return nil, err
	}
	if cfg.Binding == BindingGRPC && cfg.SlowReaders > 0 {
		return nil, errors.New("slow readers read SSE streams: over jsonrpc or rest only")
	}
	if cfg.Binding == BindingGRPC && cfg.StalledUploads > 0 && cfg.StalledOver == "" {
		cfg.StalledOver = "1.0/grpc" // the run's binding, which is HTTP/2 only
	}
	var targets []*target
	for _, u := range append([]string{cfg.URL}, cfg.URLs...) {
		c := cfg
		c.URL = u
		t, err := newTarget(ctx, c)
		if err != nil {
			return nil, err
		}
		targets = append(targets, t)
	}
	t := targets[0]
	gate := &dialGate{} // the run's connection attempts, paced after errors
	workers, err := dialWorkers(targets, cfg.Concurrency, gate)
	if err != nil {
		return nil, err
	}
	if n := len(cfg.ServerPIDs); n > 1 && n != len(targets) {
		closeWorkers(workers)
		return nil, fmt.Errorf("%d server pids for %d URLs: give one, or one per URL", n, len(targets))
	}
	var samplers []*procSampler
	for _, pid := range cfg.ServerPIDs {
		s, err := startSampler(pid)
		if err != nil {
			closeWorkers(workers)
			return nil, err
		}
		samplers = append(samplers, s)
	}
	var atk *attacker
	actx, stopAttack := context.WithCancel(ctx)
	defer stopAttack()
	if cfg.StalledUploads > 0 || cfg.SlowReaders > 0 || cfg.StuckReads > 0 || cfg.SlowHeaders > 0 {
		if atk, err = startAttack(actx, t.ep, &cfg, gate); err != nil {
			closeWorkers(workers)
			return nil, err
		}
		time.Sleep(time.Second) // let the hostile connections settle in
	}
	cpu0 := selfCPU()
	elapsed := runWorkers(ctx, cfg, workers)
	cpu := selfCPU() - cpu0

	res := summarize(cfg, workers, elapsed, cpu)
	if atk != nil {
		stopAttack()
		res.Attack = atk.stop(&cfg)
	}
	urls := append([]string{cfg.URL}, cfg.URLs...)
	for i, s := range samplers {
		st, err := s.stop()
		if err != nil {
			return res, err
		}
		st.Requests = res.OK + res.Errors
		if len(samplers) > 1 {
			st.URL, st.Requests = urls[i], requestsTo(workers, targets[i])
			st.Yardstick = yardstickKind(ctx, urls[i])
			res.Servers = append(res.Servers, st)
		} else {
			res.Server = st
		}
		if st.Requests > 0 {
			st.CPUmsPerOp = st.CPUms / float64(st.Requests)
		}
	}
	return res, nil
}

// requestsTo counts the requests the workers sent to t, successful and
// failed.
func requestsTo(workers []*worker, t *target) int {
	n := 0
	for _, w := range workers {
		if w.t == t {
			n += len(w.samples)
			for _, k := range w.errs {
				n += k
			}
		}
	}
	return n
}

// withDefaults is cfg with its zero (or negative) numbers replaced by the
// defaults.
func (cfg Config) withDefaults() Config {
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 64
	}
	if cfg.Duration <= 0 {
		cfg.Duration = 10 * time.Second
	}
	if cfg.Chunks <= 0 {
		cfg.Chunks = 20
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	if cfg.SlowHeaderSources <= 0 {
		cfg.SlowHeaderSources = 5
	}
	if cfg.StuckSize <= 0 {
		cfg.StuckSize = 8 << 20
	}
	cfg.CutShare = min(max(cfg.CutShare, 0), 1)
	return cfg
}
