package a2ahttp

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// A line a caller can cause at will (refused credentials: anyone may send
// a wrong token) is written at most at a steady rate, so that no caller
// fills the log or buries other lines in it (spec §13.4: "Implement
// appropriate rate limiting"). The lines left out are counted, and the
// next line written says how many there were.

// Rate of the lines of refused credentials: a burst of
// refusedLogBurst lines, then one every 1/refusedLogRate seconds.
const (
	refusedLogRate  = 1
	refusedLogBurst = 10
)

// sparseLog admits log lines at a bounded rate. It is safe for
// concurrent use.
type sparseLog struct {
	mu      sync.Mutex
	lim     *rate.Limiter
	skipped int // lines refused since the last one admitted
}

func newSparseLog(perSecond float64, burst int) *sparseLog {
	return &sparseLog{lim: rate.NewLimiter(rate.Limit(perSecond), burst)}
}

// admit reports whether a line may be written at now and, when it may,
// how many lines were left out since the last one written (to be logged
// with it as "skipped").
func (l *sparseLog) admit(now time.Time) (ok bool, skipped int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.lim.AllowN(now, 1) {
		l.skipped++
		return false, 0
	}
	skipped, l.skipped = l.skipped, 0
	return true, skipped
}
