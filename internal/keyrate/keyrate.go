// Package keyrate keeps one token bucket (golang.org/x/time/rate) per key:
// per caller for a server's request rate, per destination host for push
// deliveries. Buckets are made on a key's first use and forgotten once full
// again with nobody waiting on them (a full bucket is the same as a new
// one), so the map follows the keys in use, not every key ever seen.
package keyrate

import (
	"context"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// firstSweep is the number of buckets from which the idle ones are
// swept; the next sweep comes at twice what a sweep left.
const firstSweep = 1024

// Limiter holds a token bucket of the same rate and burst per key. Its
// methods may be called concurrently. A nil *Limiter limits nothing.
type Limiter[K comparable] struct {
	limit rate.Limit
	burst int

	mu        sync.Mutex
	buckets   map[K]*bucket
	nextSweep int
}

// bucket is one key's token bucket and how many Waits hold it (guarded by
// Limiter.mu): a bucket someone waits on is not forgotten.
type bucket struct {
	lim     *rate.Limiter
	waiting int
}

// New returns a Limiter of perSecond tokens a second per key, with bursts
// of burst.
func New[K comparable](perSecond float64, burst int) *Limiter[K] {
	return &Limiter[K]{limit: rate.Limit(perSecond), burst: burst, buckets: map[K]*bucket{}, nextSweep: firstSweep}
}

// Allow takes a token from key's bucket at now, if it has one; when it
// has none, Allow takes nothing and returns false and how long until it
// will have one.
func (l *Limiter[K]) Allow(key K, now time.Time) (bool, time.Duration) {
	if l == nil {
		return true, 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.bucketLocked(key, now).lim.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 || !r.OK() {
		r.CancelAt(now)
		return false, d
	}
	return true, 0
}

// Wait blocks until key's bucket gives a token, or ctx ends (its error).
func (l *Limiter[K]) Wait(ctx context.Context, key K) error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	b := l.bucketLocked(key, time.Now())
	b.waiting++
	l.mu.Unlock()
	err := b.lim.Wait(ctx)
	l.mu.Lock()
	b.waiting--
	l.mu.Unlock()
	return err
}

// Len is the number of buckets kept.
func (l *Limiter[K]) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buckets)
}

// bucketLocked returns key's bucket, made if need be; past nextSweep
// buckets, the idle full ones are forgotten first. Callers hold mu.
func (l *Limiter[K]) bucketLocked(key K, now time.Time) *bucket {
	b := l.buckets[key]
	if b != nil {
		return b
	}
	if len(l.buckets) >= l.nextSweep {
		for k, b := range l.buckets {
			if b.waiting == 0 && b.lim.TokensAt(now) >= float64(l.burst) {
				delete(l.buckets, k)
			}
		}
		l.nextSweep = max(firstSweep, 2*len(l.buckets))
	}
	b = &bucket{lim: rate.NewLimiter(l.limit, l.burst)}
	l.buckets[key] = b
	return b
}
