package push

import (
	"context"
	"net/url"
	"strings"

	"parley.dev/parley/internal/keyrate"
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

// hostLimiter keeps one token bucket per destination host (package
// keyrate); nil: no bound per host.
type hostLimiter struct{ hosts *keyrate.Limiter[string] }

// newHostLimiter returns a limiter of perSecond attempts a second per
// host, with bursts of burst; nil (no limit) when perSecond is negative.
func newHostLimiter(perSecond float64, burst int) *hostLimiter {
	if perSecond < 0 {
		return nil
	}
	return &hostLimiter{keyrate.New[string](perSecond, burst)}
}

// wait blocks until the host of rawURL may be sent one more POST, or ctx
// ends; it reports whether the POST may go. A URL without a host (which
// the guard refuses anyway) waits for nothing.
func (l *hostLimiter) wait(ctx context.Context, rawURL string) bool {
	if l == nil {
		return true
	}
	host := hostOf(rawURL)
	return host == "" || l.hosts.Wait(ctx, host) == nil
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
