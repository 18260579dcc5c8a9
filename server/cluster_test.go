package server_test

// Replicas on one PostgreSQL database (server/cluster.go): two servers,
// each with its own store, bus and lease, as two processes would have.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/server"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/pgstore"

	"parley.dev/parley/internal/eventbus"
	"parley.dev/parley/internal/pgtest"
)

// pausable is a replica's lease whose renewals a test can hold back, as
// if the process were frozen.
type pausable struct {
	*pgstore.Replica
	paused atomic.Bool
}

func (p *pausable) Renew(ctx context.Context) (bool, error) {
	if p.paused.Load() {
		return false, nil
	}
	return p.Replica.Renew(ctx)
}

// replica starts a server on the database at url as a replica with a
// lease of ttl, with opts (its Store and Cluster are the replica's).
func replica(t *testing.T, url string, ttl time.Duration, opts server.Options) (*server.Server, *pausable) {
	t.Helper()
	return wrappedReplica(t, url, ttl, opts, nil)
}

// wrappedReplica is replica with wrap, when not nil, given the options
// (the replica's Store and Cluster set) before the server starts.
func wrappedReplica(t *testing.T, url string, ttl time.Duration, opts server.Options, wrap func(*server.Options)) (*server.Server, *pausable) {
	t.Helper()
	st, err := pgstore.Open(t.Context(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	rep, err := st.Join(t.Context(), t.Name(), ttl)
	if err != nil {
		t.Fatal(err)
	}
	bus, err := pgstore.NewBus(t.Context(), st.Pool(), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bus.Close() })
	l := &pausable{Replica: rep}
	opts.Store = st
	opts.Cluster = &server.Cluster{Bus: bus, Leases: l, Poll: 500 * time.Millisecond}
	if wrap != nil {
		wrap(&opts)
	}
	return newServer(t, opts), l
}

// collect reads a stream to its end.
func collect(seq func(func(a2a.StreamEvent, error) bool)) (evs []a2a.StreamEvent, err error) {
	return collectSeeing(seq, nil)
}

// collectSeeing is collect that also hands each event, when it arrives,
// to seen (when not nil).
func collectSeeing(seq func(func(a2a.StreamEvent, error) bool), seen func(a2a.StreamEvent)) (evs []a2a.StreamEvent, err error) {
	for ev, e := range seq {
		if e != nil {
			return evs, e
		}
		if seen != nil {
			seen(ev)
		}
		evs = append(evs, ev)
	}
	return evs, nil
}

// gatedStream is an agent that works and streams 40 chunks of artifact
// "stream", one every 10 ms, and holds before chunk 20 until release is
// closed: the task is surely live until then.
func gatedStream(release <-chan struct{}) server.Agent {
	return server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		if err := em.Status(a2a.TaskState_TASK_STATE_WORKING, nil); err != nil {
			return err
		}
		const n = 40
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for i := range n {
			var tickC <-chan time.Time
			var held <-chan struct{}
			switch {
			case i == n/2:
				held = release
			case i > 0:
				tickC = tick.C
			}
			if i > 0 {
				select {
				case <-ctx.Done():
					return nil
				case <-tickC:
				case <-held:
				}
			}
			chunk := a2a.TextArtifact("stream", fmt.Sprint("chunk ", i))
			var err error
			switch i {
			case 0:
				err = em.StartArtifact(chunk)
			case n - 1:
				err = em.FinishArtifact(chunk)
			default:
				err = em.AppendArtifact(chunk)
			}
			if err != nil {
				return err
			}
		}
		return em.Status(a2a.TaskState_TASK_STATE_COMPLETED, nil)
	})
}

// TestClusterFollow: a stream started on replica A is followed on B from
// its first event, and resumed on B from the middle: the same events, in
// the same order, none missing or twice. The agent holds the task live
// until both of B's streams are under way (a terminal task takes no
// subscription, spec §3.1.6), then finishes it.
func TestClusterFollow(t *testing.T) {
	url := pgtest.NewDatabase(t)
	release := make(chan struct{})
	opts := server.Options{Agent: gatedStream(release)}
	a, _ := replica(t, url, 2*time.Second, opts)
	b, _ := replica(t, url, 2*time.Second, opts)

	first := make(chan string, 1)
	var onA []a2a.StreamEvent
	done := make(chan error, 1)
	go func() {
		var err error
		for ev, e := range a.SendStreamingMessage(anon(t), msgReq("stream")) {
			if e != nil {
				err = e
				break
			}
			if len(onA) == 0 {
				first <- ev.Response.GetTask().GetId()
			}
			onA = append(onA, ev)
		}
		done <- err
	}()
	id := <-first
	var onB, resumed []a2a.StreamEvent
	var errB, errR error
	var wg sync.WaitGroup
	pastThree, resuming := make(chan struct{}), make(chan struct{})
	var once, onceR sync.Once
	wg.Go(func() {
		onB, errB = collectSeeing(b.SubscribeToTask(anon(t), &a2a.SubscribeToTaskRequest{Id: id}), func(ev a2a.StreamEvent) {
			if ev.Seq >= 3 {
				once.Do(func() { close(pastThree) })
			}
		})
		once.Do(func() { close(pastThree) })
	})
	// The resume from event 3 starts once B has seen it (it is stored);
	// the agent goes on once the resumed stream has its first event.
	wg.Go(func() {
		defer onceR.Do(func() { close(resuming) })
		<-pastThree
		ctx := as(t, "", func(ci *a2a.CallInfo) { ci.LastEventID = "3" })
		resumed, errR = collectSeeing(b.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{Id: id}), func(a2a.StreamEvent) {
			onceR.Do(func() { close(resuming) })
		})
	})
	<-resuming
	close(release)
	wg.Wait()
	if err := <-done; err != nil || errB != nil || errR != nil {
		t.Fatalf("streams: A %v, B %v, resumed %v", err, errB, errR)
	}
	checkSeq(t, onA)
	checkSeq(t, onB[1:])
	if got := onB[0].Response.GetTask().GetStatus().GetState(); got != a2a.TaskState_TASK_STATE_WORKING {
		t.Fatalf("B's stream starts with %s, want the task's snapshot while it works", describe(onB[0]))
	}
	last := onA[len(onA)-1]
	if last.Response.GetStatusUpdate().GetStatus().GetState() != a2a.TaskState_TASK_STATE_COMPLETED {
		t.Fatalf("A's stream ends with %s", describe(last))
	}
	// B starts with a snapshot numbered with the last event it reflects,
	// then every later event of A's stream.
	from := onB[0].Seq
	if got, want := describeAll(onB[1:]), describeAll(onA[from:]); !equal(got, want) {
		t.Fatalf("B after event %d: %v\nA: %v", from, got, want)
	}
	if got, want := describeAll(resumed), describeAll(onA[3:]); !equal(got, want) || resumed[0].Seq != 4 {
		t.Fatalf("resumed on B after 3: %v (from %d)\nwant %v", got, resumed[0].Seq, want)
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestClusterCancel: CancelTask on B stops the agent running on A, whose
// stream ends CANCELED, and answers with the CANCELED task.
func TestClusterCancel(t *testing.T) {
	url := pgtest.NewDatabase(t)
	var started, causes sync.Map
	agent := cancelProbeAgent(&started, &causes)
	a, _ := replica(t, url, 2*time.Second, server.Options{Agent: agent})
	b, _ := replica(t, url, 2*time.Second, server.Options{Agent: agent})
	key := a2a.NewID()
	start, cause := make(chan struct{}), make(chan error, 1)
	started.Store(key, start)
	causes.Store(key, cause)
	evs := make(chan []a2a.StreamEvent, 1)
	ids := make(chan string, 1)
	go func() {
		var got []a2a.StreamEvent
		for ev, err := range a.SendStreamingMessage(anon(t), msgReq("working "+key)) {
			if err != nil {
				break
			}
			if len(got) == 0 {
				ids <- ev.Response.GetTask().GetId()
			}
			got = append(got, ev)
		}
		evs <- got
	}()
	id := <-ids
	<-start
	got, err := b.CancelTask(anon(t), &a2a.CancelTaskRequest{Id: id})
	if err != nil || state(got) != a2a.TaskState_TASK_STATE_CANCELED {
		t.Fatalf("CancelTask on B = %v, %v; want CANCELED", got, err)
	}
	select {
	case c := <-cause:
		if !errors.Is(c, server.ErrCanceled) {
			t.Errorf("the agent's context cause = %v, want ErrCanceled", c)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the agent on A was not canceled")
	}
	stream := <-evs
	if end := stream[len(stream)-1]; end.Response.GetStatusUpdate().GetStatus().GetState() != a2a.TaskState_TASK_STATE_CANCELED {
		t.Fatalf("A's stream: %v", describeAll(stream))
	}
	checkSeq(t, stream)
	onA, _ := a.GetTask(anon(t), &a2a.GetTaskRequest{Id: id})
	if state(onA) != a2a.TaskState_TASK_STATE_CANCELED {
		t.Fatalf("the task on A is %s", short(state(onA)))
	}
}

// losesCancels is a store on which every write of a CANCELED status
// loses the race for its sequence number, as on a replica whose runner
// elsewhere always writes first.
type losesCancels struct{ taskstore.Store }

func (s losesCancels) Append(ctx context.Context, sc taskstore.Scope, id string, ev taskstore.Event) error {
	if ev.Response.GetStatusUpdate().GetStatus().GetState() == a2a.TaskState_TASK_STATE_CANCELED {
		return taskstore.ErrSeq
	}
	return s.Store.Append(ctx, sc, id, ev)
}

// dropsFirstRequest is a Bus that loses the first request it sends, as
// one sent while the receiving replica's LISTEN connection was down.
type dropsFirstRequest struct {
	server.Bus
	dropped atomic.Bool
}

func (b *dropsFirstRequest) Notify(ctx context.Context, key string, seq uint64) error {
	if eventbus.IsRequest(key) && b.dropped.CompareAndSwap(false, true) {
		return nil
	}
	return b.Bus.Notify(ctx, key, seq)
}

// TestClusterCancelAsksRunner: CancelTask on B cannot write CANCELED (the
// runner on A always takes the number first), so B asks A to cancel the
// task; the first request is lost and B asks again. A cancels, its
// agent's context ends with ErrCanceled, and B answers the CANCELED task.
func TestClusterCancelAsksRunner(t *testing.T) {
	url := pgtest.NewDatabase(t)
	var started, causes sync.Map
	agent := cancelProbeAgent(&started, &causes)
	a, _ := replica(t, url, 2*time.Second, server.Options{Agent: agent})
	bus := &dropsFirstRequest{}
	b, _ := wrappedReplica(t, url, 2*time.Second, server.Options{Agent: agent}, func(o *server.Options) {
		o.Store = losesCancels{o.Store}
		bus.Bus = o.Cluster.Bus
		o.Cluster.Bus = bus
	})
	key := a2a.NewID()
	start, cause := make(chan struct{}), make(chan error, 1)
	started.Store(key, start)
	causes.Store(key, cause)
	resp, err := a.SendMessage(anon(t), &a2a.SendMessageRequest{Message: a2a.UserMessage("working " + key),
		Configuration: &a2a.SendMessageConfiguration{ReturnImmediately: true}})
	if err != nil {
		t.Fatal(err)
	}
	<-start
	got, err := b.CancelTask(anon(t), &a2a.CancelTaskRequest{Id: resp.GetTask().GetId()})
	if err != nil || state(got) != a2a.TaskState_TASK_STATE_CANCELED {
		t.Fatalf("CancelTask on B = %v, %v; want CANCELED", got, err)
	}
	if !bus.dropped.Load() {
		t.Fatal("B never asked A to cancel: its own write of CANCELED went through")
	}
	select {
	case c := <-cause:
		if !errors.Is(c, server.ErrCanceled) {
			t.Errorf("the agent's context cause = %v, want ErrCanceled", c)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the agent on A was not canceled")
	}
}

// TestClusterIdempotency sends one messageId to both replicas at once,
// many times: one task each time, both answers naming it.
func TestClusterIdempotency(t *testing.T) {
	url := pgtest.NewDatabase(t)
	a, _ := replica(t, url, 2*time.Second, server.Options{})
	b, _ := replica(t, url, 2*time.Second, server.Options{})
	for range 20 {
		id := a2a.NewID()
		var tasks [2]*a2a.Task
		var wg sync.WaitGroup
		for i, s := range []*server.Server{a, b} {
			wg.Go(func() {
				req := msgReq("stream 3 every 20")
				req.Message.MessageId = id
				tasks[i] = taskOf(t)(s.SendMessage(anon(t), req))
			})
		}
		wg.Wait()
		if tasks[0].Id != tasks[1].Id {
			t.Fatalf("one messageId made tasks %s and %s", tasks[0].Id, tasks[1].Id)
		}
		for i, tk := range tasks {
			if state(tk) != a2a.TaskState_TASK_STATE_COMPLETED {
				t.Errorf("answer %d: %s, want the COMPLETED task", i, short(state(tk)))
			}
		}
	}
}

// TestClusterLeaseLapse: A stops renewing its lease with a task running;
// B ends it FAILED within the lease, a follower on B sees it, A's agent
// is stopped, and A's writes are refused until it renews and joins again.
func TestClusterLeaseLapse(t *testing.T) {
	url := pgtest.NewDatabase(t)
	var started, causes sync.Map
	agent := cancelProbeAgent(&started, &causes)
	a, la := replica(t, url, 600*time.Millisecond, server.Options{Agent: agent})
	b, _ := replica(t, url, 600*time.Millisecond, server.Options{Agent: agent})
	key := a2a.NewID()
	start, cause := make(chan struct{}), make(chan error, 1)
	started.Store(key, start)
	causes.Store(key, cause)
	task := taskOf(t)(a.SendMessage(anon(t), withConfig(msgReq("working "+key), &a2a.SendMessageConfiguration{ReturnImmediately: true})))
	<-start
	follow := make(chan []a2a.StreamEvent, 1)
	go func() {
		evs, _ := collect(b.SubscribeToTask(anon(t), &a2a.SubscribeToTaskRequest{Id: task.Id}))
		follow <- evs
	}()
	la.paused.Store(true)
	began := time.Now()
	var evs []a2a.StreamEvent
	select {
	case evs = <-follow:
	case <-time.After(5 * time.Second):
		t.Fatal("B did not end the task of A, whose lease lapsed")
	}
	end := evs[len(evs)-1].Response.GetStatusUpdate().GetStatus()
	if end.GetState() != a2a.TaskState_TASK_STATE_FAILED {
		t.Fatalf("B's follower: %v", describeAll(evs))
	}
	t.Logf("ended FAILED %v after A stopped renewing (lease 600ms): %s", time.Since(began).Round(time.Millisecond), a2a.FirstText(end.GetMessage()))
	// A, alive but without its lease, is woken and stops its agent.
	select {
	case c := <-cause:
		if !errors.Is(c, server.ErrCanceled) {
			t.Errorf("A's agent context cause = %v", c)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("A's agent was not stopped")
	}
	// Its writes are refused while its lease has lapsed.
	if _, err := a.SendMessage(anon(t), msgReq("hello")); err == nil {
		t.Fatal("A made a task without its lease")
	} else {
		t.Logf("A without its lease: %v", err)
	}
	got, _ := b.GetTask(anon(t), &a2a.GetTaskRequest{Id: task.Id})
	if state(got) != a2a.TaskState_TASK_STATE_FAILED {
		t.Fatalf("the task is %s", short(state(got)))
	}
	// Renewing again, A finds the lease lost, joins under a new epoch and
	// works again.
	la.paused.Store(false)
	deadline := time.Now().Add(5 * time.Second)
	for {
		resp, err := a.SendMessage(anon(t), msgReq("hello"))
		if err == nil && state(resp.GetTask()) == a2a.TaskState_TASK_STATE_COMPLETED {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("A after renewing: %v, %v", resp, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestClusterCancelBusy cancels on B a task whose agent on A writes a
// chunk every millisecond: A's next write loses the race for its
// sequence number, reads B's CANCELED and stops; A's stream and a
// follower on B see the same events, CANCELED last.
func TestClusterCancelBusy(t *testing.T) {
	url := pgtest.NewDatabase(t)
	a, _ := replica(t, url, 2*time.Second, server.Options{})
	b, _ := replica(t, url, 2*time.Second, server.Options{})
	ids := make(chan string, 1)
	onA := make(chan []a2a.StreamEvent, 1)
	go func() {
		var got []a2a.StreamEvent
		for ev, err := range a.SendStreamingMessage(anon(t), msgReq("stream 100000 every 1")) {
			if err != nil {
				break
			}
			if len(got) == 0 {
				ids <- ev.Response.GetTask().GetId()
			}
			got = append(got, ev)
		}
		onA <- got
	}()
	id := <-ids
	onB := make(chan []a2a.StreamEvent, 1)
	go func() {
		evs, _ := collect(b.SubscribeToTask(as(t, "", func(ci *a2a.CallInfo) { ci.LastEventID = "1" }), &a2a.SubscribeToTaskRequest{Id: id}))
		onB <- evs
	}()
	time.Sleep(200 * time.Millisecond)
	got, err := b.CancelTask(anon(t), &a2a.CancelTaskRequest{Id: id})
	if err != nil || state(got) != a2a.TaskState_TASK_STATE_CANCELED {
		t.Fatalf("CancelTask on B = %v, %v", got, err)
	}
	streamA, streamB := <-onA, <-onB
	checkSeq(t, streamA)
	checkSeq(t, streamB)
	if end := streamA[len(streamA)-1]; end.Response.GetStatusUpdate().GetStatus().GetState() != a2a.TaskState_TASK_STATE_CANCELED {
		t.Fatalf("A's stream ends with %s", describe(end))
	}
	if got, want := describeAll(streamB), describeAll(streamA[1:]); !equal(got, want) {
		t.Fatalf("B's follower: %d events, A's stream %d after the first", len(got), len(want))
	}
	t.Logf("%d events before the cancel", len(streamA))
}

// TestClusterFollowUpRace sends two different follow-ups of one
// INPUT_REQUIRED task to two replicas at once, many times: one agent runs
// the task to its end, the log holds that run's events only, and the
// other follow-up is refused (the task was already WORKING) or, accepted
// at the same moment, gives way at its first write and answers with the
// completed task.
func TestClusterFollowUpRace(t *testing.T) {
	url := pgtest.NewDatabase(t)
	var ran atomic.Int32
	agent := server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		if req.Task == nil {
			return em.Status(a2a.TaskState_TASK_STATE_INPUT_REQUIRED, nil)
		}
		ran.Add(1)
		if err := em.Status(a2a.TaskState_TASK_STATE_WORKING, nil); err != nil {
			return err
		}
		time.Sleep(50 * time.Millisecond)
		if err := em.Artifact(&a2a.Artifact{ArtifactId: "answer", Parts: []*a2a.Part{a2a.TextPart(a2a.FirstText(req.Message))}}); err != nil {
			return err
		}
		return em.Status(a2a.TaskState_TASK_STATE_COMPLETED, nil)
	})
	a, _ := replica(t, url, 2*time.Second, server.Options{Agent: agent})
	b, _ := replica(t, url, 2*time.Second, server.Options{Agent: agent})
	for range 10 {
		task := taskOf(t)(a.SendMessage(anon(t), msgReq("start")))
		var got [2]*a2a.SendMessageResponse
		var errs [2]error
		var wg sync.WaitGroup
		for i, s := range []*server.Server{a, b} {
			wg.Go(func() { got[i], errs[i] = s.SendMessage(anon(t), followReq(task.Id, []string{"from a", "from b"}[i])) })
		}
		wg.Wait()
		answered := 0
		for i := range got {
			switch g := got[i].GetTask(); {
			case errs[i] != nil:
				// The other's agent was already working: refused, as on
				// one process.
				wantErr(t, fmt.Sprint("follow-up ", i), errs[i], a2a.ErrUnsupportedOperation)
			case state(g) != a2a.TaskState_TASK_STATE_COMPLETED || len(g.Artifacts) != 1:
				t.Fatalf("answer %d: %s with %d artifacts", i, short(state(g)), len(g.Artifacts))
			default:
				answered++
			}
		}
		if answered == 0 {
			t.Fatal("both follow-ups refused")
		}
		evs, err := collect(a.SubscribeToTask(as(t, "", func(ci *a2a.CallInfo) { ci.LastEventID = "1" }), &a2a.SubscribeToTaskRequest{Id: task.Id}))
		if err != nil {
			t.Fatal(err)
		}
		if d := describeAll(evs); len(d) != 4 {
			t.Fatalf("the log after the creation: %v; want INPUT_REQUIRED, WORKING, the artifact, COMPLETED", d)
		}
	}
	t.Logf("%d agent runs for 20 follow-ups of 10 tasks (two at once each)", ran.Load())
}

// TestClusterPushConfigFromAnotherReplica: a task running on A without a
// push configuration costs A's pusher nothing; once B adds one, A's
// pusher is told about the task's events.
func TestClusterPushConfigFromAnotherReplica(t *testing.T) {
	url := pgtest.NewDatabase(t)
	qa, qb := &queuedCounter{n: map[string]int{}}, &queuedCounter{n: map[string]int{}}
	a, _ := replica(t, url, 2*time.Second, server.Options{Push: qa})
	b, _ := replica(t, url, 2*time.Second, server.Options{Push: qb})

	plain := sendTask(t, a, anon(t), "hello")
	if n := qa.count(plain.Id); n != 0 {
		t.Errorf("a task without push configurations: Queued %d times; want 0", n)
	}

	first := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		_, err := collect(func(yield func(a2a.StreamEvent, error) bool) {
			for ev, e := range a.SendStreamingMessage(anon(t), msgReq("stream 60 every 10")) {
				if ev.Seq == 1 {
					first <- ev.Response.GetTask().GetId()
				}
				if !yield(ev, e) {
					return
				}
			}
		})
		done <- err
	}()
	id := <-first
	if n := qa.count(id); n != 0 {
		t.Fatalf("before its configuration: Queued %d times on A; want 0", n)
	}
	if _, err := b.CreateTaskPushNotificationConfig(anon(t), &a2a.TaskPushNotificationConfig{TaskId: id, Url: "https://hooks.example/b"}); err != nil {
		t.Fatal(err)
	}
	if n := qb.count(id); n != 1 {
		t.Errorf("B after CreateTaskPushNotificationConfig: Queued %d times; want 1 (its snapshot)", n)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// The stream ran for about 600 ms after the configuration: A told its
	// pusher about the task once B's wake-up came, then at every event.
	if n := qa.count(id); n < 10 {
		t.Errorf("A after B added a configuration: Queued %d times; want one per event after it", n)
	}
}
