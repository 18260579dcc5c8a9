// Package push delivers A2A push notifications (DESIGN B3): every event of
// a task with push configurations is posted to each configuration's
// webhook, in event order, at least once, from a durable outbox kept in the
// task store.
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
// configuration is suspended (taskstore.Store.SuspendPush): its queue is
// dropped, nothing more is queued for it until it is created again, and
// the reason is logged and reported by Stats.
//
// Webhook URLs pass the SSRF guard (Guard) at registration and at every
// connection.
package push

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
)

// Options configure a Sender. The zero value of every field means its
// default.
type Options struct {
	// Logger receives delivery failures and suspensions; default
	// slog.Default(). Credentials and tokens are never logged.
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
	// Guard vets webhook addresses; default NewGuard(nil), which refuses
	// every address that is not publicly routable.
	Guard *Guard
	// Rescan is how often the whole outbox is scanned for work, as a
	// safety net besides Queued; default 1 min.
	Rescan time.Duration
	// Transport, when set, replaces the guarded HTTP transport (tests).
	// The SSRF check at connect time is then the transport's business.
	Transport http.RoundTripper
}

// batch is how many queued rows a worker reads at once.
const batch = 16

// Sender delivers the notifications queued in a task store's outbox.
// Create it with New and stop it with Close. All methods may be called
// concurrently; Queued and Forget never block.
type Sender struct {
	store  taskstore.Store
	opts   Options
	guard  *Guard
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

	delivered, attempts, failures, dropped, suspended atomic.Uint64
}

// target is the in-memory state of one configuration's queue. Guarded by
// Sender.mu.
type target struct {
	key      taskstore.PushTarget
	running  bool               // a worker owns the queue
	more     bool               // Queued since the worker last read the queue
	gen      uint64             // bumped by Forget and suspension: rows read before are stale
	cancel   context.CancelFunc // of the delivery in progress
	failures int                // consecutive failed attempts
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
	Dropped   uint64 // notifications abandoned on a non-retryable failure
	Suspended uint64 // configurations suspended
	Active    int    // configurations with a worker
	// Recent holds the latest suspensions, newest last (at most 100).
	Recent []Suspension
}

// New returns a running Sender for the store's outbox. It starts by
// scanning the whole outbox, so notifications left by a previous process
// are sent. o may be nil.
func New(store taskstore.Store, o *Options) (*Sender, error) {
	if store == nil {
		return nil, errors.New("push: a store is required")
	}
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
	if opts.Rescan <= 0 {
		opts.Rescan = time.Minute
	}
	if opts.Guard == nil {
		g, err := NewGuard(nil)
		if err != nil {
			return nil, err
		}
		opts.Guard = g
	}
	rt := opts.Transport
	if rt == nil {
		rt = &http.Transport{
			Proxy:                 nil, // the guard must see the webhook's own address
			DialContext:           opts.Guard.DialContext,
			ForceAttemptHTTP2:     true,
			MaxIdleConns:          1024,
			MaxIdleConnsPerHost:   32,
			IdleConnTimeout:       90 * time.Second,
			TLSHandshakeTimeout:   10 * time.Second,
			ExpectContinueTimeout: time.Second,
		}
	}
	s := &Sender{
		store: store, opts: opts, guard: opts.Guard, log: opts.Logger,
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
		Dropped: s.dropped.Load(), Suspended: s.suspended.Load(), Active: active,
		Recent: append([]Suspension(nil), s.suspensions...),
	}
}

func (s *Sender) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// dispatch finds configurations with queued rows and starts their
// workers: for the tasks Queued names, and for the whole outbox at start
// and every Rescan.
func (s *Sender) dispatch() {
	defer s.wg.Done()
	tick := time.NewTicker(s.opts.Rescan)
	defer tick.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-s.wake:
		case <-tick.C:
			s.mu.Lock()
			s.scanAll = true
			s.mu.Unlock()
		}
		s.mu.Lock()
		all, dirty := s.scanAll, s.dirty
		s.scanAll, s.dirty = false, map[string]bool{}
		s.mu.Unlock()
		if all {
			dirty = map[string]bool{"": true}
		}
		for taskID := range dirty {
			ts, err := s.store.PushTargets(s.ctx, taskID)
			if err != nil {
				if s.ctx.Err() == nil {
					s.log.Error("push: reading the outbox failed; retrying at the next scan", "err", err)
				}
				continue
			}
			for _, t := range ts {
				s.kick(t)
			}
		}
	}
}

// kick makes sure a worker will read the target's queue.
func (s *Sender) kick(key taskstore.PushTarget) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ctx.Err() != nil {
		return
	}
	t := s.targets[key]
	if t == nil {
		t = &target{key: key}
		s.targets[key] = t
	}
	if t.running {
		t.more = true
		return
	}
	t.running = true
	s.wg.Add(1)
	go s.work(t)
}

// work delivers a target's queue in order until it is empty.
func (s *Sender) work(t *target) {
	defer s.wg.Done()
	for {
		s.mu.Lock()
		t.more = false
		gen := t.gen
		s.mu.Unlock()
		rows, err := s.store.PendingPush(s.ctx, t.key, batch)
		if err != nil && s.ctx.Err() == nil {
			s.log.Error("push: reading the outbox failed", "task", t.key.TaskID, "config", t.key.ConfigID, "err", err)
			if !s.sleep(s.ctx, time.Second) {
				s.idle(t, true)
				return
			}
			continue
		}
		if len(rows) == 0 || s.ctx.Err() != nil {
			if s.idle(t, s.ctx.Err() != nil) {
				return
			}
			continue
		}
		for _, n := range rows {
			if !s.deliver(t, gen, n) {
				break
			}
		}
	}
}

// idle ends a worker whose queue is empty, unless Queued came in since
// it last read the queue. It reports whether the worker must stop.
func (s *Sender) idle(t *target, closing bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t.more && !closing {
		return false
	}
	t.running = false
	if t.failures == 0 && s.targets[t.key] == t {
		delete(s.targets, t.key)
	}
	return true
}

// outcome classifies one attempt.
type outcome int

const (
	delivered outcome = iota
	retry             // network error, timeout, 5xx, 429
	drop              // any other answer, a refused address, a bad URL
)

// deliver sends one notification, retrying as long as it may. It returns
// false when the worker must read its queue again (the target was
// forgotten or suspended, or the Sender is closing).
func (s *Sender) deliver(t *target, gen uint64, n *taskstore.Notification) bool {
	ctx, cancel := context.WithCancel(s.ctx)
	defer cancel()
	s.mu.Lock()
	if t.gen != gen {
		s.mu.Unlock()
		return false
	}
	t.cancel = cancel
	s.mu.Unlock()

	for try := 1; ; try++ {
		out, wait, why := s.attempt(ctx, n)
		if out == delivered {
			s.delivered.Add(1)
			// The receiver has it: record that even if the Sender is
			// closing, or it would be sent again after a restart.
			actx, acancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			err := s.store.DeletePush(actx, n.ID)
			acancel()
			if err != nil {
				s.log.Error("push: could not record a delivery; it will be sent again", "task", n.Target.TaskID, "config", n.Target.ConfigID, "err", err)
			}
			s.mu.Lock()
			t.failures = 0
			s.mu.Unlock()
			return ctx.Err() == nil
		}
		if ctx.Err() != nil {
			return false // forgotten or closing: the attempt does not count
		}
		s.failures.Add(1)
		log := s.log.With("task", n.Target.TaskID, "config", n.Target.ConfigID, "url", redact(n.Config.GetUrl()), "seq", n.Seq)
		s.mu.Lock()
		t.failures++
		failures := t.failures
		s.mu.Unlock()
		if out == drop {
			s.dropped.Add(1)
			log.Warn("push: notification dropped", "reason", why)
			if err := s.store.DeletePush(ctx, n.ID); err != nil && ctx.Err() == nil {
				log.Error("push: could not drop a notification", "err", err)
			}
		}
		if failures >= s.opts.MaxFailures {
			s.suspend(t, gen, fmt.Sprintf("%d consecutive failed deliveries; last: %s", failures, why))
			return false
		}
		if out == drop {
			return true
		}
		d := max(s.opts.Backoff.Delay(try), wait)
		log.Info("push: delivery failed; will retry", "reason", why, "attempt", try, "retry_in", d.Round(time.Millisecond))
		if !s.sleep(ctx, d) {
			return false
		}
	}
}

// suspend suspends a configuration in the store and records why.
func (s *Sender) suspend(t *target, gen uint64, reason string) {
	s.mu.Lock()
	stale := t.gen != gen // replaced or deleted meanwhile: nothing to suspend
	s.mu.Unlock()
	if stale {
		return
	}
	s.suspended.Add(1)
	s.log.Warn("push: configuration suspended: no more notifications are sent to it until it is created again",
		"task", t.key.TaskID, "config", t.key.ConfigID, "reason", reason)
	if err := s.store.SuspendPush(s.ctx, t.key, reason); err != nil && s.ctx.Err() == nil {
		s.log.Error("push: could not record a suspension", "task", t.key.TaskID, "config", t.key.ConfigID, "err", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if t.gen == gen {
		t.gen++
	}
	t.failures = 0
	s.suspensions = append(s.suspensions, Suspension{Target: t.key, Reason: reason, At: time.Now()})
	if len(s.suspensions) > 100 {
		s.suspensions = s.suspensions[len(s.suspensions)-100:]
	}
}

// sleep waits d or until ctx ends; it reports whether d elapsed.
func (s *Sender) sleep(ctx context.Context, d time.Duration) bool {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// attempt makes one POST. For a retry it returns the receiver's
// Retry-After (0 when none); for a failure, a reason for the log.
func (s *Sender) attempt(ctx context.Context, n *taskstore.Notification) (outcome, time.Duration, string) {
	s.attempts.Add(1)
	cfg := n.Config
	if _, err := ParseURL(cfg.GetUrl()); err != nil {
		return drop, 0, "webhook URL " + err.Error()
	}
	body, err := a2a.Marshal(n.Event)
	if err != nil {
		return drop, 0, "the event could not be encoded: " + err.Error()
	}
	ctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, cfg.GetUrl(), bytes.NewReader(body))
	if err != nil {
		return drop, 0, "webhook URL: " + err.Error()
	}
	SetHeaders(req.Header, cfg)
	select {
	case s.sem <- struct{}{}:
	case <-ctx.Done():
		return retry, 0, "no free connection slot before the timeout"
	}
	resp, err := s.client.Do(req)
	<-s.sem
	if err != nil {
		if errors.Is(err, ErrForbiddenAddress) {
			return drop, 0, err.Error()
		}
		if ctx.Err() == context.DeadlineExceeded {
			return retry, 0, fmt.Sprintf("no answer within %v", s.opts.Timeout)
		}
		return retry, 0, err.Error()
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // lets the connection be reused
	resp.Body.Close()
	code := resp.StatusCode
	switch {
	case code >= 200 && code < 300:
		return delivered, 0, ""
	case code == http.StatusTooManyRequests || code >= 500:
		return retry, retryAfter(resp.Header.Get("Retry-After"), time.Now()), "the receiver answered " + resp.Status
	default:
		return drop, 0, "the receiver answered " + resp.Status + " (not retried)"
	}
}

// ContentType is the media type of a push notification body.
const ContentType = "application/a2a+json"

// SetHeaders sets the headers of a notification for a configuration:
// Content-Type, A2A-Version, Authorization from its authentication, and
// its token under both A2A-Notification-Token and X-A2A-Notification-Token.
func SetHeaders(h http.Header, cfg *a2a.TaskPushNotificationConfig) {
	h.Set("Content-Type", ContentType)
	h.Set("A2A-Version", a2a.ProtocolVersion)
	h.Set("User-Agent", "parley-push/"+a2a.ProtocolVersion)
	if auth := cfg.GetAuthentication(); auth != nil && auth.GetScheme() != "" {
		v := auth.GetScheme()
		if auth.GetCredentials() != "" {
			v += " " + auth.GetCredentials()
		}
		h.Set("Authorization", v)
	}
	if tok := cfg.GetToken(); tok != "" {
		h.Set("A2A-Notification-Token", tok)
		h.Set("X-A2A-Notification-Token", tok)
	}
}

// redact returns a URL without its query and fragment, for logs.
func redact(raw string) string {
	u, err := ParseURL(raw)
	if err != nil {
		return "(invalid URL)"
	}
	return u.Scheme + "://" + u.Host + u.EscapedPath()
}
