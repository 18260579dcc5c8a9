package server

// Per-caller quotas on tasks (Limits.MaxOpenTasks, Limits.TaskRate), kept
// in memory: nothing here touches the store, so the quotas cost a map
// lookup on the path of a new task.

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"
	"time"

	"parley.dev/parley/a2a"
)

// quotas counts, per caller, the open tasks and the tokens of the task
// rate bucket. A nil *quotas has every quota off. Its methods may be
// called concurrently; its lock is never held while taking another.
type quotas struct {
	maxOpen int     // 0: off
	rate    float64 // new tasks per second; 0: off
	burst   float64

	mu      sync.Mutex
	callers map[string]*callerUse // by principal
}

// callerUse is what one caller holds.
type callerUse struct {
	open   map[string]struct{} // ids of the caller's open tasks (nil when maxOpen is off)
	tokens float64             // of the rate bucket, as of filled
	filled time.Time
}

// newQuotas returns the quotas of l, or nil when they are all off.
func newQuotas(l Limits) *quotas {
	q := &quotas{maxOpen: l.MaxOpenTasks, callers: map[string]*callerUse{}}
	switch {
	case q.maxOpen == 0:
		q.maxOpen = DefaultMaxOpenTasks
	case q.maxOpen < 0:
		q.maxOpen = 0
	}
	if l.TaskRate > 0 && !math.IsInf(l.TaskRate, 1) {
		q.rate = l.TaskRate
		q.burst = float64(l.TaskBurst)
		if l.TaskBurst <= 0 {
			q.burst = max(1, math.Ceil(l.TaskRate))
		}
	}
	if q.maxOpen == 0 && q.rate == 0 {
		return nil
	}
	return q
}

// admit counts a new task of the caller, or refuses it when the caller is
// at its open-task quota or out of rate tokens. The caller must later call
// closed for the id (when the task becomes terminal, or is never made).
func (q *quotas) admit(principal, id string, now time.Time) error {
	if q == nil {
		return nil
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	u := q.callers[principal]
	if u == nil {
		u = &callerUse{tokens: q.burst, filled: now}
		if q.maxOpen > 0 {
			u.open = map[string]struct{}{}
		}
		q.callers[principal] = u
	}
	if q.maxOpen > 0 && len(u.open) >= q.maxOpen {
		return quotaError(fmt.Sprintf("quota exceeded: this caller already has %d open tasks, the most allowed (limit maxOpenTasks); "+
			"wait for some to finish, or cancel some, before starting another", len(u.open)),
			"maxOpenTasks", strconv.Itoa(q.maxOpen), nil)
	}
	if q.rate > 0 {
		u.refill(q, now)
		if u.tokens < 1 {
			wait := time.Duration((1 - u.tokens) / q.rate * float64(time.Second))
			ms := max(1, wait.Milliseconds())
			return quotaError(fmt.Sprintf("rate limit exceeded: this caller may start %s new tasks per second (burst %d); retry in %d ms",
				strconv.FormatFloat(q.rate, 'g', -1, 64), int(q.burst), ms),
				"taskRate", strconv.FormatFloat(q.rate, 'g', -1, 64)+"/s",
				map[string]string{"burst": strconv.Itoa(int(q.burst)), "retryAfterMs": strconv.FormatInt(ms, 10)})
		}
		u.tokens--
	}
	if q.maxOpen > 0 {
		u.open[id] = struct{}{}
	}
	return nil
}

// refill adds the tokens earned since the last refill. Callers hold q.mu.
func (u *callerUse) refill(q *quotas, now time.Time) {
	if now.After(u.filled) {
		u.tokens = min(q.burst, u.tokens+now.Sub(u.filled).Seconds()*q.rate)
		u.filled = now
	}
}

// refund gives back what admit took for a task that was never made (its
// message was a resend, or could not be recorded): the open place and the
// rate token.
func (q *quotas) refund(principal, id string) {
	if q == nil {
		return
	}
	q.mu.Lock()
	if u := q.callers[principal]; u != nil {
		delete(u.open, id)
		if q.rate > 0 {
			u.tokens = min(q.burst, u.tokens+1)
		}
	}
	q.mu.Unlock()
}

// closed stops counting a task of the caller as open. It is a no-op for a
// task that was not counted (one an earlier process started, or a second
// call for the same task).
func (q *quotas) closed(principal, id string) {
	if q == nil || q.maxOpen == 0 {
		return
	}
	q.mu.Lock()
	if u := q.callers[principal]; u != nil {
		delete(u.open, id)
	}
	q.mu.Unlock()
}

// prune forgets the callers that hold nothing: no open task and a full
// rate bucket. The server's sweep calls it, so that a caller's entry is not
// remade for every task while it is active.
func (q *quotas) prune(now time.Time) {
	if q == nil {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	for p, u := range q.callers {
		if len(u.open) > 0 {
			continue
		}
		if q.rate > 0 {
			if u.refill(q, now); u.tokens < q.burst {
				continue
			}
		}
		delete(q.callers, p)
	}
}

// isQuota reports whether err is a refusal by a quota (quotaError).
func isQuota(err error) bool {
	if err == nil {
		return false // and no error value made for errors.As
	}
	var e *a2a.Error
	return errors.As(err, &e) && e.Metadata["quota"] != ""
}

// quotaError is the refusal of a new task by a quota: an
// UnsupportedOperationError (see Limits.MaxOpenTasks for why) whose
// ErrorInfo metadata names the quota and its limit, plus extra.
func quotaError(msg, quota, limit string, extra map[string]string) *a2a.Error {
	md := map[string]string{"quota": quota, "limit": limit}
	for k, v := range extra {
		md[k] = v
	}
	return &a2a.Error{Code: a2a.CodeUnsupportedOperation, Message: msg, Metadata: md}
}
