// Package loadgen is a closed-loop load generator for A2A servers, and the
// "ceiling" responder its figures are compared with (DESIGN, "Performance
// intent"). Each of Concurrency workers owns one HTTP/1.1 connection and
// sends its next request as soon as the previous answer has been read to
// the end. Requests are precomputed bytes in which only the messageId is
// rewritten, and answers are read by a minimal HTTP reader, so the
// generator costs little next to the server it measures.
package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Operations and bindings.
const (
	OpSend   = "send"   // blocking SendMessage, text "hello"
	OpStream = "stream" // SendStreamingMessage, text "stream N", read to the end
	OpGet    = "get"    // GetTask of one task created before the run

	BindingJSONRPC = "jsonrpc"
	BindingREST    = "rest"
)

// Config is one load run.
type Config struct {
	URL         string        // the server's base URL (JSON-RPC endpoint; REST paths below it)
	Op          string        // OpSend, OpStream or OpGet
	Binding     string        // BindingJSONRPC or BindingREST
	Concurrency int           // workers (connections); default 64
	Duration    time.Duration // how long requests are started; default 10s
	Chunks      int           // chunks per stream (OpStream); default 20
	Timeout     time.Duration // per request; default 30s
	ServerPID   int           // when > 0, the server process whose CPU and memory are reported
}

// Result is what a run measured. Durations are in nanoseconds in JSON.
type Result struct {
	Op          string         `json:"op"`
	Binding     string         `json:"binding"`
	URL         string         `json:"url"`
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
	// Server figures, with Config.ServerPID (from /proc).
	Server *ServerStats `json:"server,omitempty"`
}

// ServerStats is the measured server process's cost during the run.
type ServerStats struct {
	PID          int     `json:"pid"`
	CPUms        float64 `json:"cpuMs"`        // utime+stime during the run
	CPUmsPerOp   float64 `json:"cpuMsPerOp"`   // CPUms / requests (successful and failed)
	PeakRSSBytes int64   `json:"peakRssBytes"` // the largest VmRSS sampled during the run
	HWMBytes     int64   `json:"vmHwmBytes"`   // VmHWM at the end: the process's lifetime peak
}

// target is the parsed URL and the request bytes of a run.
type target struct {
	addr, host string
	req        []byte // one request; idOff is where its messageId counter is
	idOff      int    // -1: nothing to rewrite
	check      func(status int, body []byte) string
}

const counterDigits = 12

// Run runs the load described by cfg until cfg.Duration has passed (or ctx
// ends) and reports what it measured.
func Run(ctx context.Context, cfg Config) (*Result, error) {
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
	t, err := newTarget(ctx, cfg)
	if err != nil {
		return nil, err
	}

	type worker struct {
		conn    rawConn
		req     []byte
		samples []time.Duration
		errs    map[string]int
		first   string
	}
	workers := make([]*worker, cfg.Concurrency)
	for i := range workers {
		w := &worker{conn: rawConn{addr: t.addr}, req: slices.Clone(t.req), errs: map[string]int{},
			samples: make([]time.Duration, 0, 4096)}
		if t.idOff >= 0 { // the worker's number, then its counter
			putHex(w.req[t.idOff-5:t.idOff-1], uint64(i))
		}
		if err := w.conn.dial(); err != nil {
			for _, w := range workers[:i] {
				w.conn.close()
			}
			return nil, err
		}
		workers[i] = w
	}

	var sampler *procSampler
	if cfg.ServerPID > 0 {
		if sampler, err = startSampler(cfg.ServerPID); err != nil {
			for _, w := range workers {
				w.conn.close()
			}
			return nil, err
		}
	}
	var ru0 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)

	runCtx, cancel := context.WithTimeout(ctx, cfg.Duration)
	defer cancel()
	var wg sync.WaitGroup
	start := time.Now()
	for _, w := range workers {
		wg.Go(func() {
			defer w.conn.close()
			var n uint64
			for runCtx.Err() == nil {
				n++
				if t.idOff >= 0 {
					putHex(w.req[t.idOff:t.idOff+counterDigits], n)
				}
				t0 := time.Now()
				status, body, err := w.conn.roundTrip(w.req, t0.Add(cfg.Timeout))
				d := time.Since(t0)
				kind := ""
				if err != nil {
					if runCtx.Err() != nil && ctx.Err() != nil {
						return // canceled from outside
					}
					kind = kindOf(err)
				} else {
					kind = t.check(status, body)
				}
				if kind != "" {
					w.errs[kind]++
					if w.first == "" {
						if err != nil {
							w.first = err.Error()
						} else {
							w.first = fmt.Sprintf("%s: HTTP %d %.200s", kind, status, body)
						}
					}
					continue
				}
				w.samples = append(w.samples, d)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	var ru1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)

	res := &Result{Op: cfg.Op, Binding: cfg.Binding, URL: cfg.URL, Concurrency: cfg.Concurrency,
		Elapsed: elapsed, ErrorKinds: map[string]int{}}
	if cfg.Op == OpStream {
		res.Chunks = cfg.Chunks
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
	}
	slices.Sort(all)
	res.OK = len(all)
	res.RPS = float64(res.OK) / elapsed.Seconds()
	if len(all) > 0 {
		res.P50, res.P90, res.P99 = quantile(all, 0.50), quantile(all, 0.90), quantile(all, 0.99)
		res.Max = all[len(all)-1]
	}
	ops := res.OK + res.Errors
	if ops > 0 {
		cpu := time.Duration(ru1.Utime.Nano() + ru1.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano())
		res.LoadCPUms = float64(cpu) / float64(time.Millisecond) / float64(ops)
	}
	if sampler != nil {
		st, err := sampler.stop()
		if err != nil {
			return res, err
		}
		if ops > 0 {
			st.CPUmsPerOp = st.CPUms / float64(ops)
		}
		res.Server = st
	}
	return res, nil
}

// quantile is the q-quantile of sorted samples (nearest rank).
func quantile(sorted []time.Duration, q float64) time.Duration {
	i := int(q*float64(len(sorted))+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// putHex writes v in hex, zero-padded, into b.
func putHex(b []byte, v uint64) {
	const digits = "0123456789abcdef"
	for i := len(b) - 1; i >= 0; i-- {
		b[i] = digits[v&15]
		v >>= 4
	}
}

// newTarget parses the URL and precomputes the request of cfg's operation
// (creating the task GetTask reads).
func newTarget(ctx context.Context, cfg Config) (*target, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return nil, fmt.Errorf("url %q: want http://HOST:PORT[/PATH] (plain HTTP/1.1)", cfg.URL)
	}
	t := &target{addr: u.Host, host: u.Host, idOff: -1}
	if u.Port() == "" {
		t.addr = u.Host + ":80"
	}
	base := strings.TrimSuffix(u.EscapedPath(), "/")
	rpcPath := u.EscapedPath()
	if rpcPath == "" {
		rpcPath = "/"
	}
	if cfg.Binding != BindingJSONRPC && cfg.Binding != BindingREST {
		return nil, fmt.Errorf("binding %q: want jsonrpc or rest", cfg.Binding)
	}
	rpc := cfg.Binding == BindingJSONRPC

	// The messageId: "lg-RRRRRRRR-WWWW-NNNNNNNNNNNN", run, worker, counter.
	run := make([]byte, 8)
	putHex(run, uint64(time.Now().UnixNano()))
	msgID := "lg-" + string(run) + "-0000-" + strings.Repeat("0", counterDigits)
	message := func(text string) string {
		return `{"message":{"messageId":"` + msgID + `","role":"ROLE_USER","parts":[{"text":"` + text + `"}]}}`
	}
	post := func(path, ctype, accept, body string) {
		h := "POST " + path + " HTTP/1.1\r\nHost: " + t.host + "\r\nA2A-Version: 1.0\r\nContent-Type: " + ctype + "\r\n"
		if accept != "" {
			h += "Accept: " + accept + "\r\n"
		}
		h += "Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n"
		t.req = []byte(h + body)
		if i := strings.Index(body, msgID); i >= 0 {
			t.idOff = len(h) + i + len(msgID) - counterDigits
		}
	}
	rpcBody := func(method, params string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":` + params + `}`
	}

	switch cfg.Op {
	case OpSend:
		if rpc {
			post(rpcPath, "application/json", "", rpcBody("SendMessage", message("hello")))
		} else {
			post(base+"/message:send", "application/a2a+json", "", message("hello"))
		}
		t.check = func(status int, body []byte) string {
			if k := checkStatus(status, body, rpc); k != "" {
				return k
			}
			if !bytes.Contains(body, []byte(`"TASK_STATE_COMPLETED"`)) {
				return "not completed"
			}
			return ""
		}
	case OpStream:
		text := "stream " + strconv.Itoa(cfg.Chunks)
		if rpc {
			post(rpcPath, "application/json", "text/event-stream", rpcBody("SendStreamingMessage", message(text)))
		} else {
			post(base+"/message:stream", "application/a2a+json", "text/event-stream", message(text))
		}
		want := cfg.Chunks
		t.check = func(status int, body []byte) string {
			if status != 200 {
				return "http " + strconv.Itoa(status)
			}
			events := bytes.Count(body, []byte("data:"))
			last := body[bytes.LastIndex(body, []byte("data:"))+1:]
			if rpc && bytes.Contains(last, []byte(`"error"`)) {
				return "rpc error"
			}
			if events < want || !bytes.Contains(last, []byte(`"TASK_STATE_COMPLETED"`)) {
				return "short stream"
			}
			return ""
		}
	case OpGet:
		id, err := createTask(ctx, t, cfg, rpc, rpcPath, base, message("hello"), rpcBody)
		if err != nil {
			return nil, err
		}
		if rpc {
			post(rpcPath, "application/json", "", rpcBody("GetTask", `{"id":"`+id+`"}`))
		} else {
			t.req = []byte("GET " + base + "/tasks/" + url.PathEscape(id) + " HTTP/1.1\r\nHost: " + t.host + "\r\nA2A-Version: 1.0\r\n\r\n")
		}
		wantID := []byte(`"id":"` + id + `"`)
		t.check = func(status int, body []byte) string {
			if k := checkStatus(status, body, rpc); k != "" {
				return k
			}
			if !bytes.Contains(body, wantID) {
				return "wrong task"
			}
			return ""
		}
	default:
		return nil, fmt.Errorf("op %q: want send, stream or get", cfg.Op)
	}
	return t, nil
}

func checkStatus(status int, body []byte, rpc bool) string {
	if status != 200 {
		return "http " + strconv.Itoa(status)
	}
	if rpc && !bytes.HasPrefix(body, []byte(`{"jsonrpc":"2.0","id":1,"result"`)) &&
		bytes.Contains(body, []byte(`"error"`)) {
		return "rpc error"
	}
	return ""
}

// createTask sends one blocking message and returns the id of its task.
func createTask(ctx context.Context, t *target, cfg Config, rpc bool, rpcPath, base, msg string, rpcBody func(string, string) string) (string, error) {
	tmp := &target{addr: t.addr, host: t.host, idOff: -1}
	h := func(path, ctype, body string) []byte {
		return []byte("POST " + path + " HTTP/1.1\r\nHost: " + t.host + "\r\nA2A-Version: 1.0\r\nContent-Type: " + ctype +
			"\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body)
	}
	msg = strings.Replace(msg, "-0000-", "-ffff-", 1) // not a worker's messageId
	if rpc {
		tmp.req = h(rpcPath, "application/json", rpcBody("SendMessage", msg))
	} else {
		tmp.req = h(base+"/message:send", "application/a2a+json", msg)
	}
	c := rawConn{addr: t.addr}
	defer c.close()
	deadline := time.Now().Add(cfg.Timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	status, body, err := c.roundTrip(tmp.req, deadline)
	if err != nil {
		return "", fmt.Errorf("creating the task to get: %w", err)
	}
	var r struct {
		Task   struct{ ID string }
		Result struct{ Task struct{ ID string } }
	}
	if status != 200 || json.Unmarshal(body, &r) != nil {
		return "", fmt.Errorf("creating the task to get: HTTP %d %.300s", status, body)
	}
	id := r.Task.ID
	if rpc {
		id = r.Result.Task.ID
	}
	if id == "" {
		return "", errors.New("creating the task to get: the answer holds no task id")
	}
	return id, nil
}

// WriteText writes r for people, a few aligned lines.
func (r *Result) WriteText(w io.Writer) {
	what := r.Op
	if r.Op == OpStream {
		what = fmt.Sprintf("stream of %d chunks", r.Chunks)
	}
	fmt.Fprintf(w, "%s over %s, %d clients, %s, %s\n", what, r.Binding, r.Concurrency, r.Elapsed.Round(time.Millisecond), r.URL)
	fmt.Fprintf(w, "  requests   %d ok, %d errors, %.0f/s\n", r.OK, r.Errors, r.RPS)
	fmt.Fprintf(w, "  latency    p50 %s  p90 %s  p99 %s  max %s\n", ms(r.P50), ms(r.P90), ms(r.P99), ms(r.Max))
	if s := r.Server; s != nil {
		fmt.Fprintf(w, "  server     %.3f CPU-ms/op (%.0f CPU-ms in all), peak RSS %.1f MiB (VmHWM %.1f MiB), pid %d\n",
			s.CPUmsPerOp, s.CPUms, float64(s.PeakRSSBytes)/(1<<20), float64(s.HWMBytes)/(1<<20), s.PID)
	}
	fmt.Fprintf(w, "  generator  %.3f CPU-ms/op\n", r.LoadCPUms)
	if r.Errors > 0 {
		kinds := slices.Sorted(maps.Keys(r.ErrorKinds))
		parts := make([]string, len(kinds))
		for i, k := range kinds {
			parts[i] = fmt.Sprintf("%s: %d", k, r.ErrorKinds[k])
		}
		fmt.Fprintf(w, "  errors     %s\n  first      %s\n", strings.Join(parts, ", "), r.FirstError)
	}
}

func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 2, 64) + "ms"
}
