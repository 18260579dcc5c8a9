package push

import (
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Backoff is the retry schedule of one notification: the n-th retry waits
// Initial·2^(n-1), capped at Max, with "equal jitter" (a uniformly random
// time between half that delay and all of it), so that many configurations
// failing together do not retry in lockstep.
type Backoff struct {
	Initial time.Duration // default 1 s
	Max     time.Duration // default 5 min
}

func (b Backoff) withDefaults() Backoff {
	if b.Initial <= 0 {
		b.Initial = time.Second
	}
	if b.Max <= 0 {
		b.Max = 5 * time.Minute
	}
	if b.Max < b.Initial {
		b.Max = b.Initial
	}
	return b
}

// Delay returns the wait before retry number n (1 for the first retry).
func (b Backoff) Delay(n int) time.Duration {
	b = b.withDefaults()
	d := b.Initial
	for i := 1; i < n && d < b.Max; i++ {
		d *= 2
	}
	d = min(d, b.Max)
	half := d / 2
	return half + rand.N(d-half+1)
}

// MaxRetryAfter caps a receiver's Retry-After.
const MaxRetryAfter = time.Hour

// retryAfter parses a Retry-After header (delay-seconds or an HTTP date),
// capped at MaxRetryAfter. It returns 0 when the header is absent or
// malformed.
func retryAfter(h string, now time.Time) time.Duration {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0
	}
	var d time.Duration
	if secs, err := strconv.ParseInt(h, 10, 64); err == nil {
		if secs <= 0 {
			return 0
		}
		d = time.Duration(min(secs, int64(MaxRetryAfter/time.Second))) * time.Second
	} else if t, err := http.ParseTime(h); err == nil {
		d = t.Sub(now)
	}
	return max(0, min(d, MaxRetryAfter))
}
