package loadgen

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"syscall"
	"time"
)

// worker is one closed-loop client: it owns one connection and has one
// request in flight at a time. Only its own goroutine touches it during
// the run.
type worker struct {
	index   int     // its number among the workers
	t       *target // where it sends
	conn    rawConn
	h2      *h2Conn         // instead of conn, over gRPC
	req     []byte          // its copy of the request, whose messageId it rewrites
	samples []time.Duration // the latencies of the successful requests
	errs    map[string]int  // the failed requests, by kind
	first   string          // the first failure, described
	// Streams (resume.go): what the event numbers showed, and buffers.
	streamsCut, eventsLost, eventsDup int
	part                              []byte // a cut stream's events, then the resumed ones
	ids                               []uint64
	seen                              []bool
}

// dialWorkers makes n workers spread over the targets in turn, each with
// its connection open and its number written into its messageId, their
// attempts paced by gate. On failure no connection stays open.
func dialWorkers(targets []*target, n int, gate *dialGate) ([]*worker, error) {
	workers := make([]*worker, n)
	for i := range workers {
		t := targets[i%len(targets)]
		w := &worker{index: i, t: t, conn: rawConn{redialer: redialer{addr: t.addr, gate: gate}}, req: slices.Clone(t.req), errs: map[string]int{},
			samples: make([]time.Duration, 0, 4096)}
		if t.idOff >= 0 { // the worker's number, then its counter
			putHex(w.req[t.idOff-5:t.idOff-1], uint64(i))
		}
		if t.grpcURL != "" {
			w.h2 = newH2Conn(t.grpcURL, gate)
		} else if err := w.conn.dial(time.Now().Add(dialTimeout)); err != nil {
			closeWorkers(workers[:i])
			return nil, err
		}
		workers[i] = w
	}
	return workers, nil
}

// closeWorkers closes the workers' connections.
func closeWorkers(workers []*worker) {
	for _, w := range workers {
		w.close()
	}
}

// close closes the worker's connection.
func (w *worker) close() {
	if w.h2 != nil {
		w.h2.close()
	}
	w.conn.close()
}

// runWorkers runs every worker for cfg.Duration, or until ctx ends, and
// returns how long they ran.
func runWorkers(ctx context.Context, cfg Config, workers []*worker) time.Duration {
	runCtx, cancel := context.WithTimeout(ctx, cfg.Duration)
	defer cancel()
	var wg sync.WaitGroup
	start := time.Now()
	for _, w := range workers {
		wg.Go(func() { w.run(ctx, runCtx, w.t, cfg.Timeout) })
	}
	wg.Wait()
	return time.Since(start)
}

// run sends requests one after the other until runCtx ends, and closes
// the connection. A request cut short because ctx (the caller's) ended is
// not counted.
func (w *worker) run(ctx, runCtx context.Context, t *target, timeout time.Duration) {
	defer w.close()
	w.conn.stop = runCtx.Done()
	if w.h2 != nil {
		w.h2.stop = runCtx.Done()
	}
	var n uint64
	for runCtx.Err() == nil {
		n++
		if t.idOff >= 0 {
			putHex(w.req[t.idOff:t.idOff+counterDigits], n)
		}
		t0 := time.Now()
		var status int
		var body []byte
		var err error
		if w.h2 != nil {
			status, body, err = w.h2.roundTrip(w.req, t0.Add(timeout))
		} else if t.cuts(n, w.index) {
			status, body, err = w.cutAndResume(t, n, t0.Add(timeout))
		} else {
			status, body, err = w.conn.roundTrip(w.req, t0.Add(timeout))
		}
		d := time.Since(t0)
		if err != nil && (errors.Is(err, errStopped) || runCtx.Err() != nil && ctx.Err() != nil) {
			return // the run ended before the request was sent, or canceled from outside
		}
		if w.judge(t, status, body, err) {
			w.samples = append(w.samples, d)
		}
	}
}

// judge reports whether a request succeeded, counting its failure when it
// did not.
func (w *worker) judge(t *target, status int, body []byte, err error) bool {
	var kind string
	if err != nil {
		kind = kindOf(err)
	} else if kind = t.check(status, body); kind == "" && t.numbered {
		kind = w.checkIDs(body)
	}
	if kind == "" {
		return true
	}
	w.errs[kind]++
	if w.first == "" {
		if err != nil {
			w.first = err.Error()
		} else {
			w.first = fmt.Sprintf("%s: HTTP %d %.200s", kind, status, body)
		}
	}
	return false
}

// selfCPU is the CPU time (user and system) this process has used.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
