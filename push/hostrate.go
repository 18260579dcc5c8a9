package push

import (
	"context"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Deliveries per destination host. Many configurations, of many tasks and
// callers, may name one receiver: 51 requests with 50 configurations per
// task can make a hundred thousand POSTs to it. Every attempt to a host
// waits its turn in one token bucket per host name, whatever the
// configuration, task or caller, so the Sender never sends a host more
// than HostRate POSTs a second (after a burst of HostBurst), from this
// process. A delivery that waits stays in the outbox, as one waiting out a
// backoff does: nothing is lost, and each configuration's notifications
// keep their order (its worker waits before its next one).

// Defaults of Options.HostRate and Options.HostBurst.
const (
	DefaultHostRate  = 20
	DefaultHostBurst = 40
)

// hostLimiter keeps one token bucket per destination host.
type hostLimiter struct {
	limit rate.Limit
	burst int

	mu        sync.Mutex
	hosts     map[string]*hostBucket
	nextSweep int // sweep the idle buckets when the map grows past this
}

type hostBucket struct {
	lim     *rate.Limiter
	waiting int // attempts waiting for or holding a reservation; guarded by hostLimiter.mu
}

// newHostLimiter returns a limiter of perSecond attempts a second per
// host, with bursts of burst; nil (no limit) when perSecond is negative.
func newHostLimiter(perSecond float64, burst int) *hostLimiter {
	if perSecond < 0 {
		return nil
	}
	return &hostLimiter{limit: rate.Limit(perSecond), burst: burst, hosts: map[string]*hostBucket{}, nextSweep: 1024}
}

// wait blocks until the host of rawURL may be sent one more POST, or ctx
// ends; it reports whether the POST may go. A URL without a host (which
// the guard refuses anyway) waits for nothing.
func (l *hostLimiter) wait(ctx context.Context, rawURL string) bool {
	if l == nil {
		return true
	}
	host := hostOf(rawURL)
	if host == "" {
		return true
	}
	b := l.enter(host)
	err := b.lim.Wait(ctx)
	l.leave(b)
	return err == nil
}

// enter returns the bucket of host, counting one more waiter on it.
func (l *hostLimiter) enter(host string) *hostBucket {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.hosts[host]
	if b == nil {
		if len(l.hosts) >= l.nextSweep {
			l.sweep(time.Now())
		}
		b = &hostBucket{lim: rate.NewLimiter(l.limit, l.burst)}
		l.hosts[host] = b
	}
	b.waiting++
	return b
}

func (l *hostLimiter) leave(b *hostBucket) {
	l.mu.Lock()
	b.waiting--
	l.mu.Unlock()
}

// sweep drops the buckets nobody waits on that have filled up again
// (forgetting them changes nothing), and sets the next sweep at twice
// the buckets left, so that the map's size follows the hosts in use.
// Called with l.mu held.
func (l *hostLimiter) sweep(now time.Time) {
	for h, b := range l.hosts {
		if b.waiting == 0 && b.lim.TokensAt(now) >= float64(l.burst) {
			delete(l.hosts, h)
		}
	}
	l.nextSweep = max(1024, 2*len(l.hosts))
}

// hostOf is the host name of a webhook URL, lower case, without its port:
// two ports of one machine are one host.
func hostOf(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return ""
	}
	return strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
}
