// Package push delivers A2A push notifications (spec §3.5.3, decision B3):
// every event of a task with push configurations is posted to each
// configuration's webhook, in event order, at least once, from a durable
// outbox kept in the task store.
//
// The server core queues an event in the outbox in the same store write
// that records the event (taskstore.Event.Push), then tells the Sender
// (Queued). The Sender keeps one worker per configuration with queued
// notifications: it reads the configuration's oldest rows, posts them one
// at a time and deletes each once the receiver answered 2xx. So a crash
// can lose no notification (the rows are still there after a restart, and
// New starts by scanning the outbox), and a notification may be sent more
// than once (the receiver answered but the process died before deleting
// the row): receivers must be idempotent, as the specification says.
//
// What leaves the process, per notification: a POST of the StreamResponse
// in HTTP+JSON form with the headers
//
//	Content-Type: application/a2a+json
//	A2A-Version: 1.0
//	Authorization: <scheme> <credentials>      (when the config has authentication)
//	A2A-Notification-Token: <token>            (when the config has a token)
//	X-A2A-Notification-Token: <token>          (the same, under the older name)
//
// Failures: network errors, timeouts, 5xx and 429 are retried with
// exponential backoff and jitter (Backoff), never sooner than a
// Retry-After asks; any other answer (3xx, 4xx) and a refused address
// drop that notification. After MaxFailures consecutive failures the
// configuration is suspended (taskstore.Outbox.SuspendPush): its queue is
// dropped, nothing more is queued for it until it is created again, and
// the reason is logged, stored with the suspension and reported by Stats.
// Those reasons and the log lines hold no secret of the configuration (see
// Options.Logger).
//
// Webhook URLs pass the SSRF guard (Guard) at registration and at every
// connection; Forbidden says which addresses it refuses.
package push

import (
	"context"
	"crypto/rand"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"parley.dev/parley/taskstore"
)

// Options configure a Sender. The zero value of every field means its
// default.
type Options struct {
	// Logger receives delivery failures and suspensions; default
	// slog.Default(). A webhook is logged as its scheme and host only,
	// and no reason (logged, stored with a suspension, or in Stats) holds
	// the URL's path, query, fragment or user information, the
	// credentials or the token.
	Logger *slog.Logger
	// Timeout bounds one POST, answer included; default 10 s.
	Timeout time.Duration
	// Backoff is the retry schedule.
	Backoff Backoff
	// MaxFailures is how many consecutive failed attempts suspend a
	// configuration; default 20 (about 45 minutes of retries with the
	// default Backoff).
	MaxFailures int
	// MaxConcurrent bounds the POSTs in flight across all configurations
	// (each configuration has at most one); default 256. Waiting out a
	// backoff does not take a slot, so only that many receivers hanging
	// at once can delay others, by at most Timeout.
	MaxConcurrent int
	// HostRate bounds the POSTs sent to one destination host (the URL's
	// host name, whatever its port), across every configuration, task and
	// caller, in attempts per second; default DefaultHostRate (20), a
	// negative value means no bound. Attempts over it wait their turn,
	// their notifications kept in the outbox and in order. With several
	// replicas each sender applies it to what it sends.
	HostRate float64
	// HostBurst is how many attempts a host may get at once before
	// HostRate applies; default DefaultHostBurst (40), at least 1.
	HostBurst int
	// Guard vets webhook addresses; default NewGuard(nil), which refuses
	// every address that is not publicly routable.
	Guard *Guard
	// Rescan is how often the whole outbox is scanned for work, as a
	// safety net besides Queued; default 1 min.
	Rescan time.Duration
	// Transport, when set, replaces the guarded HTTP transport (tests).
	// The SSRF check at connect time is then the transport's business.
	Transport http.RoundTripper
	// Observer, when set, watches every POST (tracing).
	Observer Observer
	// Claims, when set, is the outbox's claim step, for an outbox that
	// senders in several processes drain at once (replicas on one
	// PostgreSQL database): a worker claims its configuration's rows for
	// ClaimLease instead of reading them, renews the claim before each
	// attempt, and gives the configuration up when another sender took
	// it. So one delivery per configuration is in flight across every
	// process, in order, and the rows of a sender that died go to another
	// once its claim lapsed (found by the next Rescan).
	Claims taskstore.OutboxClaims
	// ClaimLease is how long a claim lasts unrenewed; default Timeout
	// plus 5 s. It must be longer than one POST.
	ClaimLease time.Duration
}

// Sender delivers the notifications queued in a task store's outbox.
// Create it with New and stop it with Close. All methods may be called
// concurrently; Queued and Forget never block.
type Sender struct {
	store  taskstore.Outbox
	holder string // this sender's name in claims (Options.Claims)
	opts   Options
	guard  *Guard
	hosts  *hostLimiter // nil: no bound per host
	client *http.Client
	log    *slog.Logger

	ctx  context.Context
	stop context.CancelCauseFunc
	wg   sync.WaitGroup
	sem  chan struct{}
	wake chan struct{}

	mu          sync.Mutex
	targets     map[taskstore.PushTarget]*target
	dirty       map[string]bool // task ids told by Queued, not yet looked at
	scanAll     bool
	suspensions []Suspension

	delivered, attempts, failures, retries, dropped, suspended atomic.Uint64
}

// Suspension records why a configuration was suspended.
type Suspension struct {
	Target taskstore.PushTarget
	Reason string
	At     time.Time
}

// Stats are the Sender's counters since New.
type Stats struct {
	Delivered uint64 // notifications a receiver acknowledged with 2xx
	Attempts  uint64 // POSTs made (or refused by the guard)
	Failures  uint64 // failed attempts
	Retries   uint64 // failed attempts followed by a wait and another attempt
	Dropped   uint64 // notifications abandoned on a non-retryable failure
	Suspended uint64 // configurations suspended
	Active    int    // configurations with a worker
	// Recent holds the latest suspensions, newest last (at most 100).
	Recent []Suspension
}

// New returns a running Sender for the store's outbox. It starts by
// scanning the whole outbox, so notifications left by a previous process
// are sent. o may be nil. The Sender only reads and acknowledges the
// outbox: any taskstore.Store will do, since the Outbox role is all it
// uses.
func New(store taskstore.Outbox, o *Options) (*Sender, error) {
	if store == nil {
		return nil, errors.New("push: a store is required")
	}
	opts, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	rt := opts.Transport
	if rt == nil {
		rt = guardedTransport(opts.Guard)
	}
	s := &Sender{
		store: store, opts: opts, guard: opts.Guard, log: opts.Logger, holder: rand.Text(),
		hosts: newHostLimiter(opts.HostRate, opts.HostBurst),
		client: &http.Client{
			Transport: rt,
			// A redirect is an answer like any other: not followed.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		sem:     make(chan struct{}, opts.MaxConcurrent),
		wake:    make(chan struct{}, 1),
		targets: map[taskstore.PushTarget]*target{},
		dirty:   map[string]bool{},
		scanAll: true,
	}
	s.ctx, s.stop = context.WithCancelCause(context.Background())
	s.wg.Add(1)
	go s.dispatch()
	s.poke()
	return s, nil
}

// withDefaults returns a copy of the options (o may be nil) with every
// unset field at its default. It fails only when the default guard cannot
// be made.
func (o *Options) withDefaults() (Options, error) {
	opts := Options{}
	if o != nil {
		opts = *o
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Second
	}
	opts.Backoff = opts.Backoff.withDefaults()
	if opts.MaxFailures <= 0 {
		opts.MaxFailures = 20
	}
	if opts.MaxConcurrent <= 0 {
		opts.MaxConcurrent = 256
	}
	if opts.HostRate == 0 {
		opts.HostRate = DefaultHostRate
	}
	if opts.HostBurst <= 0 {
		opts.HostBurst = DefaultHostBurst
	}
	if opts.Rescan <= 0 {
		opts.Rescan = time.Minute
	}
	if opts.ClaimLease <= 0 {
		opts.ClaimLease = opts.Timeout + 5*time.Second
	}
	if opts.Guard == nil {
		g, err := NewGuard(nil)
		if err != nil {
			return Options{}, err
		}
		opts.Guard = g
	}
	return opts, nil
}

// guardedTransport returns the HTTP transport of the Sender: every
// connection goes through the guard, and never through a proxy.
func guardedTransport(g *Guard) *http.Transport {
	return &http.Transport{
		Proxy:                 nil, // the guard must see the webhook's own address
		DialContext:           g.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          1024,
		MaxIdleConnsPerHost:   32,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
}

// ErrClosed is the cause of the Sender's context after Close.
var ErrClosed = errors.New("push: sender closed")

// Close stops the Sender: deliveries in flight are abandoned (their rows
// stay queued for the next start) and Close waits for the workers, up to
// ctx's deadline. The store is not closed.
func (s *Sender) Close(ctx context.Context) error {
	s.stop(ErrClosed)
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// CheckURL vets a webhook URL at registration with the Sender's guard.
func (s *Sender) CheckURL(ctx context.Context, rawURL string) error {
	return s.guard.CheckURL(ctx, rawURL)
}

// Queued tells the Sender that a store write may have queued notifications
// for the task. It never blocks.
func (s *Sender) Queued(taskID string) {
	s.mu.Lock()
	s.dirty[taskID] = true
	s.mu.Unlock()
	s.poke()
}

// Forget tells the Sender that a configuration was deleted or replaced: a
// delivery in progress for it is abandoned, rows it had read are not sent,
// and its failure count starts again. It never blocks.
func (s *Sender) Forget(t taskstore.PushTarget) {
	s.mu.Lock()
	if tg := s.targets[t]; tg != nil {
		tg.gen++
		tg.failures = 0
		if tg.cancel != nil {
			tg.cancel()
		}
	}
	s.mu.Unlock()
}

// Stats returns the counters.
func (s *Sender) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	active := 0
	for _, t := range s.targets {
		if t.running {
			active++
		}
	}
	return Stats{
		Delivered: s.delivered.Load(), Attempts: s.attempts.Load(), Failures: s.failures.Load(),
		Retries: s.retries.Load(), Dropped: s.dropped.Load(), Suspended: s.suspended.Load(), Active: active,
		Recent: append([]Suspension(nil), s.suspensions...),
	}
}

// poke wakes the dispatcher; it never blocks.
func (s *Sender) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}
