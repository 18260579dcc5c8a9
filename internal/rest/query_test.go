package rest_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/rest"
	"parley.dev/parley/internal/testkit"
)

// getTaskRecorder answers GetTask with an empty task and records the
// request; it serves nothing else.
type getTaskRecorder struct {
	a2a.Service
	got *a2a.GetTaskRequest
}

func (g *getTaskRecorder) GetTask(_ context.Context, req *a2a.GetTaskRequest) (*a2a.Task, error) {
	g.got = req
	return &a2a.Task{Id: req.Id}, nil
}

// TestQueryCurrentGeneration: the long poll's ?currentGeneration=N (A2A
// 1.1, spec §11.5) reaches GetTask as an int64, by its JSON or its proto
// name; a value that is no int64 is refused with 400 naming the member.
func TestQueryCurrentGeneration(t *testing.T) {
	for _, c := range []struct {
		query  string
		status int
		want   *int64
	}{
		{"currentGeneration=5", 200, ptr(5)},
		{"current_generation=0&historyLength=2", 200, ptr(0)},
		{"currentGeneration=9223372036854775807", 200, ptr(9223372036854775807)},
		{"currentGeneration=-3", 200, ptr(-3)},
		{"historyLength=2", 200, nil},
		{"currentGeneration=9223372036854775808", 400, nil},
		{"currentGeneration=five", 400, nil},
		{"currentGeneration=", 400, nil},
	} {
		rec := &getTaskRecorder{}
		h := rest.NewHandler(rec, &rest.Options{KeepAlive: -1, Logger: testkit.DiscardLogger})
		req := httptest.NewRequest("GET", "/tasks/t-1?"+c.query, nil)
		req.Header.Set("A2A-Version", "1.1")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != c.status {
			t.Errorf("?%s: status %d, want %d: %s", c.query, w.Code, c.status, w.Body)
			continue
		}
		if c.status != http.StatusOK {
			if rec.got != nil {
				t.Errorf("?%s: refused, yet GetTask was called", c.query)
			}
			continue
		}
		if got := rec.got.CurrentGeneration; (got == nil) != (c.want == nil) || (got != nil && *got != *c.want) {
			t.Errorf("?%s: currentGeneration %v, want %v", c.query, got, c.want)
		}
	}
}

func ptr(n int64) *int64 { return &n }
