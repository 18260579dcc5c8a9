package server

// One replica of many on a shared store (Options.Cluster). Without
// Options.Cluster none of this runs: a process that owns its store fans
// out in memory only.
//
// The store's event log is the truth every replica reads. A process
// feeds its streams in memory from the executions it runs, as on one
// machine; a run that is watched (a stream, a blocking call) while no
// local execution feeds it follows the log instead (tail), woken by the
// Bus when another replica announces an append, with a fallback poll.
// CancelTask writes CANCELED itself, whoever runs the task, and wakes the
// runner on the Bus under cancelKey; the runner reads the log, finds the
// task ended, and stops its agent. A runner too busy for that write to
// get a sequence number is asked, under cancelRequestKey, to cancel the
// task itself. Only that request makes a runner cancel: any other wake-up,
// such as the one a Bus sends every watcher when it reconnects, makes it
// read the log and act on what the log says. Any write that loses the
// race for a sequence number (ErrSeq) reads what the other wrote before
// going on (run.append). Leases: every replica renews its own and ends
// FAILED the active tasks whose runner's lease lapsed.

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/eventbus"
	"parley.dev/parley/taskstore"
)

// Bus tells the replicas sharing a store that a task's log grew (Notify,
// after the append committed) and wakes the followers of a task (Watch).
// pgstore.Bus is one on PostgreSQL's LISTEN/NOTIFY.
type Bus = eventbus.Bus

// Cluster makes a Server one replica of several sharing Options.Store.
type Cluster struct {
	// Bus carries wake-ups between the replicas: a task's log grew, a
	// task was canceled. Required.
	Bus Bus
	// Leases is this replica's lease on the store, which fences its task
	// writes. Required.
	Leases Leases
	// Poll is how often a follower reads the log when no wake-up came;
	// default 2 s.
	Poll time.Duration
}

// Leases is a replica's lease on a shared store (package pgstore's
// Replica is one).
type Leases interface {
	// TTL is how long the lease lasts unrenewed. The server renews it
	// every TTL/3 and looks for orphans as often, so a dead replica's
	// tasks end FAILED within about TTL·4/3.
	TTL() time.Duration
	// Renew extends the lease. lost reports that it had lapsed (and a
	// new one was taken): other replicas may have ended this one's tasks.
	Renew(ctx context.Context) (lost bool, err error)
	// Orphans returns the SUBMITTED or WORKING tasks whose runner holds
	// no lease.
	Orphans(ctx context.Context) ([]taskstore.ScopedTask, error)
	// ClaimMessage takes over, for this replica, a recorded message that
	// has neither a task nor a reply, recorded by a replica that holds no
	// lease (it stopped before the agent's first update). It reports
	// whether this call took it; of replicas trying at once, one does.
	ClaimMessage(ctx context.Context, s taskstore.Scope, messageID string) (bool, error)
}

// ErrLeaseLost is the cause of the context of the executions a replica
// gives up when it finds its lease lapsed: other replicas may have ended
// their tasks meanwhile.
var ErrLeaseLost = errors.New("server: this replica's lease on the store lapsed")

// ErrTaskTaken is what an agent's Emitter returns, and the cause of its
// context, when another replica runs the task now: both accepted a
// follow-up at the same moment, and the other wrote first.
var ErrTaskTaken = errors.New("server: another replica runs the task now")

// cancelKey is the Bus key on which a replica that ended a task (CancelTask,
// a dead replica's task failed) wakes the replica running it, which reads
// the log. Task ids are minted by servers, so no task has this id.
func cancelKey(taskID string) string { return "cancel:" + taskID }

// cancelRequestKey is the Bus key on which CancelTask asks the replica
// running a task to write the cancellation itself (askRunnerToCancel). It
// is a request key: a Bus that reconnects does not wake its watchers, so
// a wake-up on it is a request, never a dropped connection.
func cancelRequestKey(taskID string) string { return eventbus.RequestKey(cancelKey(taskID)) }

// pushKey is the Bus key on which a replica that added a push
// configuration to a task wakes the replica running it: that one's
// pusher must look at the task's events from then on (run.queued).
func pushKey(taskID string) string { return "push:" + taskID }

// check reports what is missing from a Cluster.
func (c *Cluster) check() error {
	if c.Bus == nil || c.Leases == nil {
		return errors.New("server: Options.Cluster needs a Bus and Leases")
	}
	if c.Leases.TTL() <= 0 {
		return errors.New("server: Options.Cluster.Leases has no TTL")
	}
	return nil
}

// notifier announces appended logs on the Bus off the write path: task
// ids are collected and sent by one goroutine, each once however many
// events it got meanwhile, all in one round trip when the Bus is an
// eventbus.ManyNotifier.
type notifier struct {
	bus  eventbus.Bus
	wake chan struct{}
	mu   sync.Mutex
	ids  map[string]struct{}
}

func newNotifier(bus eventbus.Bus) *notifier {
	return &notifier{bus: bus, wake: make(chan struct{}, 1), ids: map[string]struct{}{}}
}

// add queues an announcement for the task; it never blocks.
func (n *notifier) add(taskID string) {
	n.mu.Lock()
	n.ids[taskID] = struct{}{}
	n.mu.Unlock()
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

// run sends announcements until ctx ends.
func (n *notifier) run(ctx context.Context, log func(error)) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-n.wake:
		}
		n.flush(ctx, log)
	}
}

// flush sends what is queued.
func (n *notifier) flush(ctx context.Context, log func(error)) {
	n.mu.Lock()
	ids := n.ids
	n.ids = map[string]struct{}{}
	n.mu.Unlock()
	if len(ids) == 0 {
		return
	}
	if many, ok := n.bus.(eventbus.ManyNotifier); ok {
		list := make([]string, 0, len(ids))
		for id := range ids {
			list = append(list, id)
		}
		if err := many.NotifyMany(ctx, list); err != nil {
			log(err) // followers still poll
		}
		return
	}
	for id := range ids {
		if err := n.bus.Notify(ctx, id, 0); err != nil {
			log(err)
		}
	}
}

// announce is called after every write of a task's log that committed:
// it tells the other replicas that the log grew, and the tasks waiting to
// be ended that the store writes again (committed).
func (s *Server) announce(taskID string) {
	s.committed()
	if s.notes != nil {
		s.notes.add(taskID)
	}
}

// startCluster starts the announcer and the lease keeper.
func (s *Server) startCluster() {
	c := s.opts.Cluster
	s.notes = newNotifier(c.Bus)
	var nctx context.Context
	nctx, s.stopNotes = context.WithCancel(context.Background())
	s.notesDone = make(chan struct{})
	go func() {
		defer close(s.notesDone)
		s.notes.run(nctx, func(err error) { s.log.Warn("cluster: announcing an append failed", "err", err) })
	}()
	s.wg.Add(1)
	go s.keepLease()
}

// stopCluster sends the last announcements (those of Close's writes).
func (s *Server) stopCluster() {
	if s.notes == nil {
		return
	}
	s.stopNotes()
	<-s.notesDone
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	s.notes.flush(ctx, func(error) {})
}

// keepLease renews the lease every TTL/3 and ends the orphans it finds.
func (s *Server) keepLease() {
	defer s.wg.Done()
	l := s.opts.Cluster.Leases
	s.every(max(l.TTL()/3, 10*time.Millisecond), func() {
		lost, err := l.Renew(s.base)
		if err != nil {
			if s.base.Err() == nil {
				s.log.Error("cluster: renewing the lease failed", "err", err)
			}
			return
		}
		if lost {
			s.log.Error("cluster: this replica's lease had lapsed (paused or cut off from the store): giving up its running tasks, which other replicas end FAILED")
			s.abandonAll()
		}
		s.reap(s.base)
	})
}

// abandonAll cancels every local execution with cause ErrLeaseLost.
func (s *Server) abandonAll() {
	for _, r := range s.liveRuns() {
		r.mu.Lock()
		if ex := r.exec; ex != nil && !ex.done {
			ex.cancel(ErrLeaseLost)
		}
		r.mu.Unlock()
	}
}

// reap ends FAILED the active tasks whose runner lost its lease.
func (s *Server) reap(ctx context.Context) {
	lost, err := s.opts.Cluster.Leases.Orphans(ctx)
	if err != nil {
		if ctx.Err() == nil {
			s.log.Error("cluster: looking for tasks of dead replicas failed", "err", err)
		}
		return
	}
	for _, st := range lost {
		err := s.failLost(ctx, st, "the task's execution was lost: the replica running it stopped renewing its lease")
		switch {
		case err == nil:
			s.log.Warn("cluster: task of a dead replica marked FAILED", "task", st.Task.Id)
			// Should its runner be alive after all (paused, cut off), it
			// reads the log at this and stops its agent.
			if err := s.opts.Cluster.Bus.Notify(ctx, cancelKey(st.Task.Id), 0); err != nil {
				s.log.Warn("cluster: waking the runner of a failed task failed", "task", st.Task.Id, "err", err)
			}
		case errors.Is(err, taskstore.ErrSeq):
			// Another replica got there first, or the runner wrote.
		default:
			s.log.Error("cluster: could not fail a task of a dead replica", "task", st.Task.Id, "err", err)
		}
	}
}

// follow makes the run follow the store's log while it is watched (a
// subscriber or a waiter) and no local execution feeds it. Callers hold
// r.mu and have loaded the task.
func (r *run) follow() {
	s := r.s
	if s.opts.Cluster == nil || s.base.Err() != nil || r.tail != nil || r.exec != nil || r.task == nil ||
		a2a.IsTerminal(r.task.GetStatus().GetState()) || len(r.subs)+len(r.waiters) == 0 {
		return
	}
	ctx, cancel := context.WithCancel(s.base)
	t := &tail{cancel: cancel}
	r.tail = t
	s.ref(r)
	s.wg.Add(1)
	after := r.seq
	go func() {
		defer s.wg.Done()
		defer s.release(r)
		defer cancel()
		r.tailLog(ctx, t, after)
	}()
}

// tail is a run's follower of the log.
type tail struct{ cancel context.CancelFunc }

// unfollow stops the run's follower, if any. Callers hold r.mu.
func (r *run) unfollow() {
	if r.tail != nil {
		r.tail.cancel()
		r.tail = nil
	}
}

// unfollowIfIdle stops the follower when nobody watches the run any
// more. Callers hold r.mu.
func (r *run) unfollowIfIdle() {
	if len(r.subs)+len(r.waiters) == 0 {
		r.unfollow()
	}
}

// tailLog publishes the logged events after `after` until the task ends
// or the follower is stopped.
func (r *run) tailLog(ctx context.Context, t *tail, after uint64) {
	for ev, err := range eventbus.Follow(ctx, r.s.store, r.s.opts.Cluster.Bus, r.scope, r.id, after, r.s.opts.Cluster.Poll) {
		r.mu.Lock()
		if r.tail != t {
			r.mu.Unlock()
			return
		}
		if err != nil {
			r.tail = nil
			if ctx.Err() == nil {
				r.s.log.Error("cluster: following a task's log failed", "task", r.id, "err", err)
				r.cutOff(err)
			}
			r.mu.Unlock()
			return
		}
		r.absorb(ev)
		r.mu.Unlock()
	}
	r.mu.Lock()
	if r.tail == t {
		r.tail = nil
	}
	r.mu.Unlock()
}

// cutOff closes every subscriber with an error naming the last event it
// got, where a resume picks up. Callers hold r.mu.
func (r *run) cutOff(cause error) {
	code := a2a.CodeInternal
	if a2a.AsError(cause).Code == a2a.CodeUnavailable {
		code = a2a.CodeUnavailable // the store's outage: retry later
	}
	for sub := range r.subs {
		last := sub.lastSeq()
		delete(r.subs, sub)
		sub.close(a2a.NewError(code, "stream closed: %v; call SubscribeToTask with Last-Event-ID %d to resume", cause, last).
			WithMeta("taskId", r.id).WithMeta("lastEventId", strconv.FormatUint(last, 10)))
	}
	r.wake()
}

// catchUp applies and publishes the logged events after the run's last
// one, which another replica wrote. The run's own write in flight is
// settled first, so that its events, once stored, are not taken for
// another replica's. Callers hold r.mu and have loaded the task.
func (r *run) catchUp(ctx context.Context) error {
	r.settleInflight()
	for {
		evs, err := r.s.store.Events(ctx, r.scope, r.id, r.seq, resumePage)
		if err != nil {
			return err
		}
		for _, ev := range evs {
			r.absorb(ev)
		}
		if len(evs) < resumePage {
			return nil
		}
	}
}

// absorb applies and publishes a logged event that another replica
// wrote, when it is the run's next one. An event that ends the task stops
// the local execution, if any (CancelTask on another replica, or a
// replica that took this one's lease for lost). Callers hold r.mu.
func (r *run) absorb(ev a2a.StreamEvent) {
	if ev.Seq != r.seq+1 || r.task == nil {
		return
	}
	if m := ev.Response.GetMessage(); m != nil { // a client's follow-up (taskstore.ClientMessage)
		r.entered(m)
		return
	}
	taskstore.Apply(r.task, ev.Response)
	r.publish(ev.Response, true)
	if !a2a.IsTerminal(r.task.GetStatus().GetState()) {
		return
	}
	r.s.quota.closed(r.scope.Owner, r.id)
	if ex := r.exec; ex != nil {
		ex.cancel(ErrCanceled)
		r.finish(ex)
	}
}

// watchOthers starts watching, for a local execution, what other
// replicas ask of its task (see watch).
func (r *run) watchOthers(ex *execution) {
	bus := r.s.opts.Cluster.Bus
	ended, stopEnded := bus.Watch(cancelKey(r.id))
	asked, stopAsked := bus.Watch(cancelRequestKey(r.id))
	push, stopPush := bus.Watch(pushKey(r.id))
	go func() {
		defer stopEnded()
		defer stopAsked()
		defer stopPush()
		r.watch(ex, ended, asked, push)
	}()
}

// watch serves watchOthers until the execution ends. A wake-up on push
// means another replica added a push configuration, or that the Bus may
// have missed one: the run's events go to the pusher from then on, and
// the pusher looks at those already written. One on ended means another
// replica ended the task (CancelTask, or a lease taken for lost), or that
// the Bus may have missed it: the run reads the log, which stops the
// execution when it holds a terminal status (see absorb). Only one on
// asked, a request key that no reconnection wakes, makes the run cancel
// the task itself when the log does not hold its end.
func (r *run) watch(ex *execution, ended, asked, push <-chan struct{}) {
	for {
		cancel := false
		select {
		case <-ex.ended:
			return
		case <-push:
			r.mu.Lock()
			r.mayPush = true
			r.queued()
			r.mu.Unlock()
			continue
		case <-ended:
		case <-asked:
			cancel = true
		}
		r.mu.Lock()
		ctx := context.WithoutCancel(ex.ctx)
		err := r.catchUp(ctx)
		if err == nil && cancel && !ex.done && r.exec == ex && !a2a.IsTerminal(r.task.GetStatus().GetState()) {
			err = r.cancelTask(ctx)
		}
		if err != nil && !errors.Is(err, ErrTaskClosed) {
			r.s.log.Error("cluster: reading or canceling a task for another replica failed", "task", r.id, "err", err)
		}
		r.mu.Unlock()
	}
}

// askRunnerToCancel asks the replica running the task to cancel it
// (watch), and waits until the task is terminal: canceled, or ended
// otherwise first. The request is sent again every poll interval while
// waiting, since one sent while the runner's Bus was reconnecting is lost
// (request keys are not woken by a reconnection). It gives up after two
// leases and five seconds. Callers hold r.mu, which is let go while
// waiting, and have loaded the task.
func (r *run) askRunnerToCancel(ctx context.Context) error {
	c := r.s.opts.Cluster
	if err := c.Bus.Notify(ctx, cancelRequestKey(r.id), 0); err != nil {
		return a2a.Internal(err)
	}
	ch := r.wait()
	r.follow()
	defer func() { r.mu.Unlock(); r.unwait(ch); r.mu.Lock() }()
	limit := time.NewTimer(2*c.Leases.TTL() + 5*time.Second)
	defer limit.Stop()
	poll := c.Poll
	if poll <= 0 {
		poll = eventbus.DefaultPoll
	}
	again := time.NewTicker(poll)
	defer again.Stop()
	for !a2a.IsTerminal(r.task.GetStatus().GetState()) {
		r.mu.Unlock()
		select {
		case <-ctx.Done():
			r.mu.Lock()
			return context.Cause(ctx)
		case <-limit.C:
			r.mu.Lock()
			return a2a.NewError(a2a.CodeInternal, "task %q: the replica running it did not cancel it in time; try again", r.id).
				WithMeta("taskId", r.id)
		case <-again.C:
			if err := c.Bus.Notify(ctx, cancelRequestKey(r.id), 0); err != nil {
				r.s.log.Warn("cluster: asking the runner to cancel a task again failed", "task", r.id, "err", err)
			}
		case <-ch:
		}
		r.mu.Lock()
	}
	return nil
}

// readTask reads the task and the number of its last event so that they
// agree: with other writers on the store, an event may land between the
// two reads, so the number is read before and after the task until it
// did not move.
func (r *run) readTask(ctx context.Context) (*a2a.Task, uint64, error) {
	st := r.s.store
	if r.s.opts.Cluster == nil {
		t, err := st.GetTask(ctx, r.scope, r.id)
		if err != nil {
			return nil, 0, err
		}
		seq, err := st.LastSeq(ctx, r.scope, r.id)
		return t, seq, err
	}
	for range 20 {
		before, err := st.LastSeq(ctx, r.scope, r.id)
		if err != nil {
			return nil, 0, err
		}
		t, err := st.GetTask(ctx, r.scope, r.id)
		if err != nil {
			return nil, 0, err
		}
		after, err := st.LastSeq(ctx, r.scope, r.id)
		if err != nil {
			return nil, 0, err
		}
		if before == after {
			return t, after, nil
		}
	}
	return nil, 0, errors.New("the task changed on every read")
}
