package health_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/health"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/memstore"
)

// get requests path from the test server and returns the status and body.
func get(t *testing.T, method, url string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestProbesOverHTTP(t *testing.T) {
	var storeErr error
	c := &health.Checker{Logger: slog.New(slog.DiscardHandler), Ready: func(ctx context.Context) error { return storeErr }}
	app := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "app") })
	hs := httptest.NewServer(c.Wrap(app))
	defer hs.Close()

	cases := []struct {
		method, path string
		fail         error
		code         int
		body         string
	}{
		{"GET", "/healthz", nil, 200, "ok\n"},
		{"GET", "/readyz", nil, 200, "ready\n"},
		{"HEAD", "/readyz", nil, 200, ""},
		{"GET", "/readyz", errors.New("database is locked at /secret/path"), 503, "not ready: the task store does not answer or cannot write\n"},
		{"GET", "/healthz", errors.New("down"), 200, "ok\n"}, // liveness does not depend on the store
		{"POST", "/healthz", nil, 405, "method not allowed\n"},
		{"GET", "/message:send", nil, 200, "app"}, // everything else reaches the application
	}
	for _, tc := range cases {
		storeErr = tc.fail
		code, body := get(t, tc.method, hs.URL+tc.path)
		if code != tc.code || body != tc.body {
			t.Errorf("%s %s (store error %v) = %d %q, want %d %q", tc.method, tc.path, tc.fail, code, body, tc.code, tc.body)
		}
	}
	storeErr = nil
	c.Drain()
	if code, body := get(t, "GET", hs.URL+"/readyz"); code != 503 || !strings.Contains(body, "shutting down") {
		t.Errorf("draining: /readyz = %d %q, want 503", code, body)
	}
	if code, _ := get(t, "GET", hs.URL+"/healthz"); code != 200 {
		t.Errorf("draining: /healthz = %d, want 200", code)
	}
}

// A store that does not answer within the timeout is not ready.
func TestReadyTimesOut(t *testing.T) {
	c := &health.Checker{Logger: slog.New(slog.DiscardHandler), Timeout: 50 * time.Millisecond,
		Ready: func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }}
	hs := httptest.NewServer(c)
	defer hs.Close()
	begin := time.Now()
	if code, _ := get(t, "GET", hs.URL+"/readyz"); code != 503 {
		t.Errorf("/readyz = %d, want 503", code)
	}
	if d := time.Since(begin); d > 5*time.Second {
		t.Errorf("the probe took %v", d)
	}
	if code, _ := get(t, "GET", hs.URL+"/other"); code != 404 {
		t.Errorf("/other = %d, want 404", code)
	}
}

// Check, which gRPC's health service asks too, is bounded by the same
// timeout, whatever the caller's context.
func TestCheckTimesOut(t *testing.T) {
	c := &health.Checker{Timeout: 50 * time.Millisecond, Ready: func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }}
	if err := c.Check(context.Background()); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Check of a store that does not answer = %v, want the timeout", err)
	}
	if err := (&health.Checker{}).Check(context.Background()); err != nil {
		t.Errorf("Check without Ready = %v, want ready", err)
	}
}

// failingTasks is a task store whose reads fail.
type failingTasks struct{ taskstore.Store }

func (failingTasks) GetTask(context.Context, taskstore.Scope, string) (*a2a.Task, error) {
	return nil, errors.New("disk I/O error")
}

func TestStoreReady(t *testing.T) {
	st := memstore.New()
	if err := health.StoreReady(st)(context.Background()); err != nil {
		t.Errorf("memory store: %v, want ready", err)
	}
	if err := health.StoreReady(failingTasks{st})(context.Background()); err == nil {
		t.Error("a failing store is ready")
	}
}
