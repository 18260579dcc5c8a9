package push

import (
	"context"
	"fmt"
	"time"

	"parley.dev/parley/taskstore"
)

// batch is how many queued rows a worker reads at once.
const batch = 16

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
		rows, err := s.read(t.key)
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

// read returns the target's oldest rows: claimed with Options.Claims,
// read as they are otherwise.
func (s *Sender) read(key taskstore.PushTarget) ([]*taskstore.Notification, error) {
	if c := s.opts.Claims; c != nil {
		return c.ClaimPush(s.ctx, s.holder, key, batch, s.opts.ClaimLease)
	}
	return s.store.PendingPush(s.ctx, key, batch)
}

// stillOurs renews the claim on a row before an attempt (with
// Options.Claims): false when another sender took the row, or it is gone.
// A renewal that fails for another reason lets the attempt go on: the
// claim still runs, and a duplicate is the worst outcome.
func (s *Sender) stillOurs(ctx context.Context, n *taskstore.Notification) bool {
	c := s.opts.Claims
	if c == nil {
		return true
	}
	ok, err := c.RenewPush(ctx, s.holder, n.ID, s.opts.ClaimLease)
	if err != nil {
		if ctx.Err() == nil {
			s.log.Warn("push: renewing a claim failed", "task", n.Target.TaskID, "config", n.Target.ConfigID, "err", err)
		}
		return ctx.Err() == nil
	}
	return ok
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

	p := prepare(n)
	for try := 1; ; try++ {
		// The host's turn first (Options.HostRate), then the claim's
		// renewal: a claim that lapsed while waiting is found here.
		if !s.hosts.wait(ctx, n.Config.GetUrl()) {
			return false // forgotten or closing
		}
		if !s.stillOurs(ctx, n) {
			return false // another sender has the configuration now
		}
		out, wait, why := s.attempt(ctx, n, p)
		if out == delivered {
			s.acknowledge(ctx, t, n)
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
			// Logged before it is counted (as are retries and
			// suspensions): whoever sees it in Stats finds it logged.
			log.Warn("push: notification dropped", "reason", why)
			s.dropped.Add(1)
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
		s.retries.Add(1)
		if !s.sleep(ctx, d) {
			return false
		}
	}
}

// acknowledge removes a delivered notification from the outbox and
// resets the target's failure count. The receiver has it, so the removal
// is recorded even if ctx ends (the Sender closing): otherwise the
// notification would be sent again after a restart.
func (s *Sender) acknowledge(ctx context.Context, t *target, n *taskstore.Notification) {
	s.delivered.Add(1)
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	err := s.store.DeletePush(actx, n.ID)
	cancel()
	if err != nil {
		s.log.Error("push: could not record a delivery; it will be sent again", "task", n.Target.TaskID, "config", n.Target.ConfigID, "err", err)
	}
	s.mu.Lock()
	t.failures = 0
	s.mu.Unlock()
}

// suspend suspends a configuration in the store and records why.
func (s *Sender) suspend(t *target, gen uint64, reason string) {
	s.mu.Lock()
	stale := t.gen != gen // replaced or deleted meanwhile: nothing to suspend
	s.mu.Unlock()
	if stale {
		return
	}
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
	// Counted with its record, under the lock, so that Stats never shows
	// a suspension in Suspended and not yet in Recent.
	s.suspended.Add(1)
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
