package a2ahttp

import (
	"log/slog"
	"math"
	"net/http"
	"testing"
	"time"
)

func TestSparseLogAdmitsABurstThenTheRate(t *testing.T) {
	t.Parallel()
	l := newSparseLog(2, 3)
	t0 := time.Unix(1_000_000, 0)
	var admitted int
	for range 10 {
		if ok, skipped := l.admit(t0); ok {
			admitted++
			if skipped != 0 {
				t.Errorf("admit within the burst: skipped %d, want 0", skipped)
			}
		}
	}
	if admitted != 3 {
		t.Errorf("admitted %d of 10 lines at once, want the burst, 3", admitted)
	}
	// Half a second later one more line is due (2 a second): it says how
	// many were left out.
	if ok, skipped := l.admit(t0.Add(500 * time.Millisecond)); !ok || skipped != 7 {
		t.Errorf("admit after 0.5 s = %v, skipped %d; want true, 7", ok, skipped)
	}
	if ok, _ := l.admit(t0.Add(500 * time.Millisecond)); ok {
		t.Error("a second line in the same instant was admitted")
	}
	if ok, skipped := l.admit(t0.Add(time.Second)); !ok || skipped != 1 {
		t.Errorf("admit after 1 s = %v, skipped %d; want true, 1", ok, skipped)
	}
}

// TestRefusedCredentialsLogSparsely: a caller sending wrong tokens as
// fast as it can writes at most the burst and the rate of lines, on every
// protocol together; every request is still refused.
func TestRefusedCredentialsLogSparsely(t *testing.T) {
	t.Parallel()
	logs := make(logRecords, 4096)
	h, base := matrixServer(t, Options{Tokens: map[string]string{"tok": "alice"}, Logger: slog.New(logs)})
	start := time.Now()
	sent := 0
	for i := range h.protocols {
		p := &h.protocols[i]
		for range 20 {
			req, _ := http.NewRequest(http.MethodPost, base+p.sendPath, nil)
			req.Header.Set("Content-Type", p.sendType)
			req.Header.Set("A2A-Version", p.version)
			req.Header.Set("Authorization", "Bearer wrong")
			got := outcome(do(req))
			if got != "401 Unauthorized" && got != "grpc 16" {
				t.Fatalf("%s %s with a wrong token: %s, want it refused", p.version, p.binding, got)
			}
			sent++
		}
	}
	elapsed := time.Since(start)
	lines := 0
	for len(logs) > 0 {
		if r := <-logs; r.Message == "authentication refused" {
			lines++
		}
	}
	most := refusedLogBurst + int(math.Ceil(elapsed.Seconds()*refusedLogRate))
	if lines == 0 || lines > most {
		t.Errorf("%d refusals in %v wrote %d lines, want 1 to %d", sent, elapsed, lines, most)
	}
}
