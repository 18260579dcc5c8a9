package server

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/version"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/memstore"
)

// Options configure a Server. The zero value of every field means its
// default.
type Options struct {
	// ProtocolVersions are the A2A versions (Major.Minor) served, newest
	// first (default DefaultProtocolVersions: 1.0 and 0.3; 1.1, the
	// preview of the next version, is served only when listed). A call in
	// any other version is refused with VersionNotSupportedError listing
	// these (spec §3.6.2). Serving 0.3 takes its bindings too (package
	// a2ahttp mounts them when the list has it); 1.1 is served on the
	// v1.0 bindings, told apart by the A2A-Version service parameter.
	ProtocolVersions []string
	// Card is the public agent card. Its capabilities gate operations
	// (spec §3.3.4) and its extensions decide which are required. New
	// refuses a card whose capabilities the other options do not back:
	// pushNotifications needs Push (and Push needs pushNotifications).
	// Required.
	Card *a2a.AgentCard
	// ExtendedCard is served by GetExtendedAgentCard to authenticated
	// callers. Card must then declare capabilities.extendedAgentCard; a
	// card that declares it without an ExtendedCard makes the operation
	// answer ExtendedAgentCardNotConfiguredError.
	ExtendedCard *a2a.AgentCard
	// Agent does the work. Required.
	Agent Agent
	// Store keeps tasks; default an in-memory store.
	Store taskstore.Store
	// RequireAuth makes every operation need an authenticated principal
	// (CallInfo.Principal). Callers are scoped to their own tasks either
	// way (decision B12); without authentication all share one scope.
	RequireAuth bool
	// Logger receives structured logs; default slog.Default().
	Logger *slog.Logger
	// IdempotencyWindow is how long a messageId is remembered for
	// idempotent resends (decision B14: a resend returns the original
	// result and does not run the agent again); default 24 h.
	IdempotencyWindow time.Duration
	// Retention removes terminal tasks whose status is older than this;
	// 0 keeps them forever.
	Retention time.Duration
	// ResumeWindow is how long a task's events are kept, after they are
	// recorded, for streams that resume with Last-Event-ID; default 1 h.
	// A resume from a pruned event gets a Task snapshot first. The last
	// event of every task is always kept. Negative keeps every event as
	// long as its task. A task's timeline (§3.2.8, the 1.1 preview) is
	// not pruned with its events: the store keeps its entries and its
	// artifacts' generations for the task's life (taskstore.Fold).
	ResumeWindow time.Duration
	// SubscriberBuffer is how many events at least may wait for a
	// stream's reader (default 256); a task's streams share 16 times that,
	// so a lone stream holds up to 4,096. A reader further behind is not
	// cut off: it reads what it missed from the task's event log, then
	// live events again.
	SubscriberBuffer int
	// SweepInterval is how often the retention and idempotency windows
	// are applied; default a tenth of Retention, between 1 s and 1 min.
	SweepInterval time.Duration
	// CursorKey signs ListTasks page tokens; default a random key (tokens
	// then do not survive a restart).
	CursorKey []byte
	// Now returns the current time; default time.Now (tests replace it).
	Now func() time.Time
	// Push delivers push notifications (package push). It is required
	// exactly when the card declares pushNotifications: New refuses a card
	// that promises notifications nobody would deliver, and a Pusher the
	// card gives no way to use. Without it the push configuration
	// operations answer PushNotificationNotSupportedError.
	Push Pusher
	// Limits bound request sizes and per-caller task quotas; the zero
	// value means every default (see Limits).
	Limits Limits
	// ExecutionContext, when set, makes the context an agent execution
	// runs in from ctx, the one the core made for it (canceled when the
	// execution ends, the task is canceled or the server shuts down), and
	// caller, the context of the request that started it. It returns ctx
	// or a context derived from it; package telemetry carries the
	// request's span into it, so that the agent's spans nest under it.
	ExecutionContext func(ctx, caller context.Context, req *Request) context.Context
	// LongPollTimeout is how long GetTask holds a long poll (A2A 1.1's
	// currentGeneration, spec §3.2.7) before it answers the task
	// unchanged; default DefaultLongPollTimeout. Negative turns holds
	// off: such a GetTask is answered at once, as the spec allows. Keep
	// it below the timeouts of proxies in front of the server.
	LongPollTimeout time.Duration
	// Cluster, when set, makes the server one replica of several that share
	// Store: streams follow tasks running on other replicas through the
	// store's log, CancelTask reaches their agents, and the tasks of a
	// replica whose lease lapsed end FAILED. Without it the server assumes
	// it owns the store: at start it ends FAILED every task left SUBMITTED
	// or WORKING.
	Cluster *Cluster
}

// DefaultResumeWindow is Options.ResumeWindow's default.
const DefaultResumeWindow = time.Hour

// DefaultLongPollTimeout is Options.LongPollTimeout's default.
const DefaultLongPollTimeout = 30 * time.Second

// Server is the A2A core. It implements a2a.Service. Create it with New and
// stop it with Shutdown (a drain, then a stop) or Close (a stop).
type Server struct {
	opts  Options
	card  *a2a.AgentCard
	agent Agent
	store taskstore.Store
	log   *slog.Logger
	now   func() time.Time
	// generations: a version served shows task generations (the 1.1
	// preview, spec §3.2.7), so streams must look at each call's version.
	generations bool

	base     context.Context // parent of every agent execution
	workers  *workers        // run executions and pipelined writes
	stop     context.CancelCauseFunc
	wg       sync.WaitGroup
	stopOnce sync.Once

	limits limits  // Options.Limits resolved
	quota  *quotas // nil when the task quotas are off

	mu       sync.Mutex
	runs     map[runKey]*run          // live tasks, by scope and id
	inflight map[msgKey]chan struct{} // first sends of a messageId in progress
	// lost holds the tasks whose end the store did not take, until it
	// does (finishLost).
	lost unfinished

	// The drain of Shutdown: draining refuses new messages; execs counts
	// the executions not over yet, detached ones included, and idle, when
	// not nil, is closed when that count drops to zero (both under mu).
	draining atomic.Bool
	drainCh  chan struct{} // closed when the drain starts: long polls answer (see hold)
	drainMu  sync.Once
	execs    int
	idle     chan struct{}

	// With Options.Cluster: the announcer of appends.
	notes     *notifier
	stopNotes context.CancelFunc
	notesDone chan struct{}
}

// Server must keep implementing every operation of a2a.Service.
var _ a2a.Service = (*Server)(nil)

// New returns a server. It checks the options, and moves every task whose
// execution was lost (SUBMITTED or WORKING in the store, left by a crash) to
// FAILED with a status message saying why.
func New(opts *Options) (*Server, error) {
	o := Options{}
	if opts != nil {
		o = *opts
	}
	if err := o.check(); err != nil {
		return nil, err
	}
	o.fillDefaults()
	s := &Server{
		opts: o, card: o.Card, agent: o.Agent, store: o.Store, log: o.Logger, now: o.Now,
		runs: map[runKey]*run{}, inflight: map[msgKey]chan struct{}{}, drainCh: make(chan struct{}),
		lost:   unfinished{wake: make(chan struct{}, 1)},
		limits: o.Limits.resolved(), quota: newQuotas(o.Limits),
		generations: slices.ContainsFunc(o.ProtocolVersions, version.ShowsGeneration),
	}
	if s.card.GetCapabilities().GetExtendedAgentCard() && o.ExtendedCard == nil {
		s.log.Warn("the card declares capabilities.extendedAgentCard but Options.ExtendedCard is nil: " +
			"GetExtendedAgentCard will answer ExtendedAgentCardNotConfiguredError")
	}
	s.base, s.stop = context.WithCancelCause(context.Background())
	s.workers = newWorkers(s.base)
	if o.Cluster != nil {
		s.startCluster()
		s.reap(context.Background()) // what replicas that died left
	} else if err := s.recover(context.Background()); err != nil {
		return nil, err
	}
	s.wg.Add(1)
	go s.sweep()
	return s, nil
}

// check reports the first problem with the options: a missing Card or
// Agent, an invalid card, a capability the card and the options disagree
// on (see checkCapabilities), or a TaskRate that is not a number.
func (o *Options) check() error {
	if o.Card == nil {
		return errors.New("server: Options.Card is required")
	}
	if o.Agent == nil {
		return errors.New("server: Options.Agent is required")
	}
	for _, v := range o.ProtocolVersions {
		if _, ok := version.Lookup(v); !ok {
			return fmt.Errorf("server: protocol version %q in Options.ProtocolVersions is not one Parley serves (%v)", v, version.Known())
		}
	}
	if v := a2a.CheckRequired(o.Card); len(v) > 0 {
		return fmt.Errorf("server: invalid agent card: %s: %s", v[0].Field, v[0].Description)
	}
	if err := o.checkCapabilities(); err != nil {
		return err
	}
	if math.IsNaN(o.Limits.TaskRate) {
		return errors.New("server: Options.Limits.TaskRate is NaN")
	}
	if o.Cluster != nil {
		return o.Cluster.check()
	}
	return nil
}

// checkCapabilities refuses a card that promises what the server will not
// do, and options the card gives no way to reach:
//
//   - pushNotifications needs Options.Push: without a Pusher, configurations
//     would be accepted and nothing ever delivered. Options.Push in turn
//     needs pushNotifications, or no configuration could be registered.
//   - Options.ExtendedCard needs extendedAgentCard, or it is never served.
//     The reverse (declared, nothing configured) is allowed: the operation
//     then answers ExtendedAgentCardNotConfiguredError, as the specification
//     requires, and New logs a warning.
//
// streaming needs nothing: the core serves every declared stream.
func (o *Options) checkCapabilities() error {
	caps := o.Card.GetCapabilities()
	switch {
	case caps.GetPushNotifications() && o.Push == nil:
		return errors.New("server: the card declares capabilities.pushNotifications but Options.Push is nil, " +
			"so no notification would ever be delivered: set Options.Push (a push.Sender) or set the capability to false")
	case !caps.GetPushNotifications() && o.Push != nil:
		return errors.New("server: Options.Push is set but the card does not declare capabilities.pushNotifications: " +
			"declare it, or leave Options.Push nil")
	case !caps.GetExtendedAgentCard() && o.ExtendedCard != nil:
		return errors.New("server: Options.ExtendedCard is set but the card does not declare capabilities.extendedAgentCard, " +
			"so it would never be served: declare it, or leave Options.ExtendedCard nil")
	}
	return nil
}

// fillDefaults sets every unset field that has a default.
func (o *Options) fillDefaults() {
	if len(o.ProtocolVersions) == 0 {
		o.ProtocolVersions = DefaultProtocolVersions()
	} else {
		o.ProtocolVersions = slices.Clone(o.ProtocolVersions)
		version.Sort(o.ProtocolVersions) // newest first, whatever the order given
	}
	if o.Store == nil {
		o.Store = memstore.New()
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.IdempotencyWindow <= 0 {
		o.IdempotencyWindow = 24 * time.Hour
	}
	if o.ResumeWindow == 0 {
		o.ResumeWindow = DefaultResumeWindow
	}
	if o.LongPollTimeout == 0 {
		o.LongPollTimeout = DefaultLongPollTimeout
	}
	if o.SubscriberBuffer <= 0 {
		o.SubscriberBuffer = 256
	}
	if len(o.CursorKey) == 0 {
		o.CursorKey = make([]byte, 32)
		_, _ = rand.Read(o.CursorKey)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

// recover fails tasks whose execution was lost in a crash.
func (s *Server) recover(ctx context.Context) error {
	lost, err := s.store.ListActive(ctx)
	if err != nil {
		return fmt.Errorf("server: listing unfinished tasks: %w", err)
	}
	for _, st := range lost {
		if err := s.failLost(ctx, st, "the task's execution was lost: the server stopped before the task finished"); err != nil {
			return fmt.Errorf("server: failing lost task %s: %w", st.Task.Id, err)
		}
		s.log.Warn("task execution lost in a restart: marked FAILED", "task", st.Task.Id)
	}
	return nil
}

// failLost appends a FAILED status saying why to a task whose execution
// was lost. It returns taskstore.ErrSeq when the task changed since it
// was read (another replica ended it first).
func (s *Server) failLost(ctx context.Context, st taskstore.ScopedTask, why string) error {
	t := st.Task
	msg := a2a.AgentMessage(why)
	msg.TaskId, msg.ContextId = t.Id, t.ContextId
	status := &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_FAILED, Message: msg, Timestamp: a2a.Timestamp(s.now())}
	seq, err := s.store.LastSeq(ctx, st.Scope, t.Id)
	if err != nil {
		return err
	}
	// The task as of seq or later: one ended since st was listed (by
	// another replica) is left alone, and one changed after seq makes
	// the append below fail with ErrSeq. Either way no event follows a
	// terminal one.
	now, err := s.store.GetTask(ctx, st.Scope, t.Id)
	if err != nil {
		return err
	}
	if !a2a.IsActive(now.GetStatus().GetState()) {
		return taskstore.ErrSeq
	}
	ev := &a2a.StreamResponse{Payload: &a2a.StreamResponse_StatusUpdate{StatusUpdate: &a2a.TaskStatusUpdateEvent{
		TaskId: t.Id, ContextId: t.ContextId, Status: status}}}
	if err := s.store.Append(ctx, st.Scope, t.Id, taskstore.Event{Seq: seq + 1, Response: ev, Push: s.delivering()}); err != nil {
		return err
	}
	s.queued(t.Id)
	s.announce(t.Id)
	return nil
}

// sweep applies the retention, resume and idempotency windows periodically, and
// forgets idle callers' quota state.
func (s *Server) sweep() {
	defer s.wg.Done()
	every := s.opts.SweepInterval
	if every <= 0 {
		every = time.Minute
		if r := s.opts.Retention; r > 0 && r/10 < every {
			every = max(r/10, time.Second)
		}
	}
	s.every(every, s.sweepOnce)
}

// sweepOnce is one pass of sweep.
func (s *Server) sweepOnce() {
	ctx := s.base
	now := s.now()
	if r := s.opts.Retention; r > 0 {
		if n, err := s.store.DeleteFinished(ctx, now.Add(-r)); err != nil {
			s.log.Error("retention sweep failed", "err", err)
		} else if n > 0 {
			s.log.Info("retention: removed finished tasks", "count", n)
		}
	}
	if w := s.opts.ResumeWindow; w > 0 {
		if _, err := s.store.PruneEvents(ctx, now.Add(-w)); err != nil {
			s.log.Error("resume window sweep failed", "err", err)
		}
	}
	if _, err := s.store.DeleteMessagesBefore(ctx, now.Add(-s.opts.IdempotencyWindow)); err != nil {
		s.log.Error("idempotency sweep failed", "err", err)
	}
	s.quota.prune(now)
}

// every calls fn every d (the first time d from now) until the server's
// base context is done.
func (s *Server) every(d time.Duration, fn func()) {
	tick := time.NewTicker(d)
	defer tick.Stop()
	for {
		select {
		case <-s.base.Done():
			return
		case <-tick.C:
		}
		fn()
	}
}

// Card returns the public agent card. The caller must not modify it.
func (s *Server) Card() *a2a.AgentCard { return s.card }

// Close stops the server at once: running agents see their context
// canceled with cause ErrShutdown, and Close waits for their Execute calls
// to return (up to ctx's deadline). Tasks they leave unfinished, detached
// background work included, end FAILED with a status message saying the
// server is shutting down, which their streams get as their terminal event.
// The store is not closed. Shutdown is the graceful stop: it lets the work
// in progress finish first.
func (s *Server) Close(ctx context.Context) error {
	s.stopOnce.Do(func() { s.stop(ErrShutdown) })
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = ctx.Err()
	}
	for _, r := range s.liveRuns() {
		r.mu.Lock()
		if ex := r.exec; ex != nil && !ex.done {
			r.fail(ex, shutdownMessage)
			r.finish(ex)
		}
		r.mu.Unlock()
	}
	s.stopCluster()
	return err
}
