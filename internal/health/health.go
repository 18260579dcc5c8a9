// Package health answers the probes of orchestrators such as Kubernetes:
// GET /healthz (liveness: the process serves HTTP) and GET /readyz
// (readiness: the task store answers, and the server is not shutting
// down). They live outside the A2A routes, need no credentials and say
// nothing about the agent's data: a failed readiness check is logged, and
// the probe only learns "not ready".
package health

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"parley.dev/parley/taskstore"
)

// The probe paths.
const (
	LivePath  = "/healthz"
	ReadyPath = "/readyz"
)

// DefaultTimeout bounds one readiness check.
const DefaultTimeout = 900 * time.Millisecond

// Checker answers the two probes. Its zero value reports always ready.
type Checker struct {
	// Ready reports whether the server can do its work; nil means always.
	Ready func(ctx context.Context) error
	// Timeout bounds one Ready call (default DefaultTimeout, under the
	// one-second probe timeout Kubernetes uses by default).
	Timeout time.Duration
	// Logger receives failed checks (default slog.Default()).
	Logger *slog.Logger

	draining atomic.Bool
}

// Drain makes /readyz answer 503 from now on (the server is shutting
// down: the load balancer should send no more requests), while /healthz
// stays 200.
func (c *Checker) Drain() { c.draining.Store(true) }

// Wrap returns next with the two probe paths answered in front of it.
func (c *Checker) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == LivePath || r.URL.Path == ReadyPath {
			c.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// ServeHTTP answers GET and HEAD of /healthz and /readyz with 200 or
// 503 and a one-line plain-text body; other paths get 404.
func (c *Checker) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != LivePath && r.URL.Path != ReadyPath {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	if r.URL.Path == LivePath {
		answer(w, r, http.StatusOK, "ok")
		return
	}
	if c.draining.Load() {
		answer(w, r, http.StatusServiceUnavailable, "not ready: shutting down")
		return
	}
	if err := c.Check(r.Context()); err != nil {
		log := c.Logger
		if log == nil {
			log = slog.Default()
		}
		log.Warn("readiness check failed", "err", err)
		answer(w, r, http.StatusServiceUnavailable, "not ready: the task store does not answer or cannot write")
		return
	}
	answer(w, r, http.StatusOK, "ready")
}

// Check runs Ready under the timeout: the readiness of every probe, HTTP's
// /readyz and gRPC's health service alike, so that a store that does not
// answer makes neither wait past the timeout.
func (c *Checker) Check(ctx context.Context) error {
	if c.Ready == nil {
		return nil
	}
	d := c.Timeout
	if d <= 0 {
		d = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	return c.Ready(ctx)
}

func answer(w http.ResponseWriter, r *http.Request, code int, text string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	if r.Method != http.MethodHead {
		w.Write([]byte(text + "\n"))
	}
}

// probeTaskID is an id no task has (task ids are UUIDs).
const probeTaskID = "parley-readiness-probe"

// StoreReady returns a readiness check of the store. A store that can
// probe its writes (taskstore.WriteProber) is ready when a probe write
// commits, so readiness turns off while it cannot write (a full disk) and
// back on once it can. Any other store is asked for a task that does not
// exist: "not found" is an answer, so the store is ready; any other error,
// or none before the deadline, is not.
func StoreReady(st taskstore.Tasks) func(context.Context) error {
	if w, ok := st.(taskstore.WriteProber); ok {
		return w.ProbeWrite
	}
	return func(ctx context.Context) error {
		_, err := st.GetTask(ctx, taskstore.Scope{}, probeTaskID)
		if err == nil || errors.Is(err, taskstore.ErrNotFound) {
			return nil
		}
		return err
	}
}
