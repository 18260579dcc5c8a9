package server_test

// Pipelined artifact chunks (server/pipe.go): stored in order, published
// once stored, drained before anything else is written, and a chunk that
// could not be stored fails the agent's next call and the task.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/testkit"
	"parley.dev/parley/server"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/memstore"
)

// batchSpy is a memory store whose AppendBatch records the size of each
// batch, waits for gate when one is set, sleeps delay, and fails with fail
// when set.
type batchSpy struct {
	*memstore.Store
	delay time.Duration

	mu    sync.Mutex
	sizes []int
	gate  chan struct{}
	fail  error
	// wrote, when set, is signalled after the events are written, and the
	// call then returns only once hold is closed.
	wrote, hold chan struct{}
	// created, when set, is signalled after each CreateTaskBatch.
	created chan struct{}
	// failCreates is how many CreateTaskBatch calls fail with fail.
	failCreates int
	// entered, when set, is signalled as AppendBatch begins.
	entered chan struct{}
}

func (b *batchSpy) CreateTaskBatch(ctx context.Context, sc taskstore.Scope, t *a2a.Task, evs []taskstore.Event) error {
	b.mu.Lock()
	failing := b.failCreates > 0
	b.failCreates--
	b.mu.Unlock()
	if failing {
		return errors.New("disk full")
	}
	err := b.Store.CreateTaskBatch(ctx, sc, t, evs)
	if b.created != nil {
		b.created <- struct{}{}
	}
	return err
}

func (b *batchSpy) AppendBatch(ctx context.Context, sc taskstore.Scope, id string, evs []taskstore.Event) error {
	b.mu.Lock()
	b.sizes = append(b.sizes, len(evs))
	gate, fail, wrote, hold, entered := b.gate, b.fail, b.wrote, b.hold, b.entered
	b.mu.Unlock()
	if entered != nil {
		entered <- struct{}{}
	}
	if gate != nil {
		<-gate
	}
	time.Sleep(b.delay)
	if fail != nil {
		return fail
	}
	err := b.Store.AppendBatch(ctx, sc, id, evs)
	if wrote != nil {
		wrote <- struct{}{}
		<-hold
	}
	return err
}

func (b *batchSpy) batchSizes() []int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.sizes)
}

// An agent far ahead of a slow store: its chunks are stored in batches
// (never more than the queue's bound plus the status that ends it), and
// the stream and the stored task have every chunk, in order.
func TestPipelinedChunksInOrder(t *testing.T) {
	t.Parallel()
	const chunks = 700
	agent := server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		for i := range chunks {
			if err := em.AppendArtifact(a2a.TextArtifact("a", fmt.Sprint(i))); err != nil {
				return err
			}
		}
		return em.Status(a2a.TaskState_TASK_STATE_COMPLETED, nil)
	})
	store := &batchSpy{Store: memstore.New(), delay: 2 * time.Millisecond}
	s := newServer(t, server.Options{Agent: agent, Store: store, SubscriberBuffer: 2 * chunks})
	evs, err := testkit.Collect(s.SendStreamingMessage(anon(t), msgReq("go")))
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != chunks+2 {
		t.Fatalf("%d events, want %d", len(evs), chunks+2)
	}
	checkSeq(t, evs)
	for i, ev := range evs[1 : chunks+1] {
		if got := a2a.JoinText(ev.Response.GetArtifactUpdate().GetArtifact().GetParts()); got != fmt.Sprint(i) {
			t.Fatalf("event %d: chunk %q, want %q", i+1, got, fmt.Sprint(i))
		}
	}
	if d := describe(evs[chunks+1]); d != "status:COMPLETED" {
		t.Errorf("last event %s, want status:COMPLETED", d)
	}
	sizes := store.batchSizes()
	if len(sizes) < 2 || slices.Max(sizes) < 2 || slices.Max(sizes) > 257 {
		t.Errorf("batch sizes %v: want several batches, some of more than one event, none over 257", sizes)
	}
	task, err := s.GetTask(anon(t), &a2a.GetTaskRequest{Id: evs[0].Response.GetTask().GetId()})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(task.GetArtifacts()[0].GetParts()); n != chunks {
		t.Errorf("stored artifact has %d parts, want %d", n, chunks)
	}
}

// A chunk the store refuses is never published: the agent's next call
// fails, and the task ends FAILED, whether the agent goes on to a status
// or simply returns.
func TestPipelinedChunkFailure(t *testing.T) {
	t.Parallel()
	for _, then := range []string{"status", "return"} {
		t.Run(then, func(t *testing.T) {
			next := make(chan error, 1)
			store := &batchSpy{Store: memstore.New(), fail: errors.New("disk full"), created: make(chan struct{}, 2)}
			agent := server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
				if err := em.Status(a2a.TaskState_TASK_STATE_WORKING, nil); err != nil {
					return err
				}
				<-store.created // the chunk is written alone, after the task
				if err := em.StartArtifact(a2a.TextArtifact("a", "lost")); err != nil {
					return err // queued: no error yet
				}
				if then == "return" {
					return nil
				}
				err := em.Status(a2a.TaskState_TASK_STATE_COMPLETED, nil)
				next <- err
				return err
			})
			s := newServer(t, server.Options{Agent: agent, Store: store})
			evs := streamWant(t, s, "task:SUBMITTED", "status:WORKING", "status:FAILED")
			if then == "status" {
				if err := <-next; err == nil || a2a.AsError(err).Code != a2a.CodeInternal {
					t.Errorf("the call after the lost chunk returned %v, want an internal error", err)
				}
			}
			wantFailedWithout(t, s, evs[0].Response.GetTask().GetId())
		})
	}
}

// A task whose making the store refuses: nothing is published, the
// agent's next call fails, and the task is made FAILED when the execution
// ends; the events the agent queued after the making are dropped.
func TestPipelinedCreateFailure(t *testing.T) {
	t.Parallel()
	next := make(chan error, 1)
	store := &batchSpy{Store: memstore.New(), failCreates: 1, created: make(chan struct{}, 2)}
	agent := server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		if err := em.Status(a2a.TaskState_TASK_STATE_WORKING, nil); err != nil {
			return err // queued: no error yet
		}
		time.Sleep(20 * time.Millisecond) // a pause: the writer tries to make the task
		err := em.AppendArtifact(a2a.TextArtifact("a", "lost"))
		if err == nil {
			err = em.Status(a2a.TaskState_TASK_STATE_COMPLETED, nil)
		}
		next <- err
		return err
	})
	s := newServer(t, server.Options{Agent: agent, Store: store})
	evs := streamWant(t, s, "task:SUBMITTED", "status:FAILED")
	checkSeq(t, evs)
	if err := <-next; err == nil || a2a.AsError(err).Code != a2a.CodeInternal {
		t.Errorf("the call after the failed making returned %v, want an internal error", err)
	}
	wantFailedWithout(t, s, evs[0].Response.GetTask().GetId())
}

// streamWant sends a streaming message and checks the events it gets.
func streamWant(t *testing.T, s *server.Server, want ...string) []a2a.StreamEvent {
	t.Helper()
	evs, err := testkit.Collect(s.SendStreamingMessage(anon(t), msgReq("go")))
	if err != nil {
		t.Fatal(err)
	}
	if got := describeAll(evs); !slices.Equal(got, want) {
		t.Errorf("events = %v, want %v", got, want)
	}
	return evs
}

// wantFailedWithout checks that the stored task is FAILED without
// artifacts: the chunks that could not be stored are not in it.
func wantFailedWithout(t *testing.T, s *server.Server, id string) {
	t.Helper()
	task, err := s.GetTask(anon(t), &a2a.GetTaskRequest{Id: id})
	if err != nil {
		t.Fatal(err)
	}
	if st := task.GetStatus().GetState(); st != a2a.TaskState_TASK_STATE_FAILED || len(task.GetArtifacts()) != 0 {
		t.Errorf("stored task: %s with %d artifacts, want FAILED with none", st, len(task.GetArtifacts()))
	}
}

// An event stored at once (here an artifact of a task whose published
// state is INPUT_REQUIRED) after a pipelined write that failed is not
// written either: the agent's call fails, and the task ends FAILED
// without it. (With Options.Cluster the failed write may have read that
// another replica ended the task: nothing may follow that.)
func TestNoWriteAfterFailedPipelinedWrite(t *testing.T) {
	t.Parallel()
	store := &batchSpy{Store: memstore.New()}
	artifactErr := make(chan error, 1)
	agent := server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		if req.Task == nil {
			return em.Status(a2a.TaskState_TASK_STATE_INPUT_REQUIRED, nil)
		}
		if err := em.Status(a2a.TaskState_TASK_STATE_WORKING, nil); err != nil {
			return err
		}
		store.mu.Lock()
		entered, gate := store.entered, store.gate
		store.mu.Unlock()
		<-entered // the WORKING write is in flight
		go func() { time.Sleep(10 * time.Millisecond); close(gate) }()
		err := em.Artifact(a2a.TextArtifact("a", "after the lost write"))
		artifactErr <- err
		return err
	})
	s := newServer(t, server.Options{Agent: agent, Store: store})
	task := taskOf(t)(s.SendMessage(anon(t), msgReq("start")))
	store.mu.Lock()
	store.entered, store.gate, store.fail = make(chan struct{}, 1), make(chan struct{}), errors.New("disk full")
	store.mu.Unlock()
	if _, err := s.SendMessage(anon(t), followReq(task.Id, "go on")); err != nil {
		t.Fatal(err)
	}
	if err := <-artifactErr; err == nil || a2a.AsError(err).Code != a2a.CodeInternal {
		t.Errorf("the artifact after the lost write: %v, want an internal error", err)
	}
	wantFailedWithout(t, s, task.Id)
}

// CancelTask while chunks are being stored: the chunks come first, then
// CANCELED, on the stream and in CancelTask's answer.
func TestCancelAfterPipelinedChunks(t *testing.T) {
	t.Parallel()
	emitted := make(chan struct{})
	agent := server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		if err := em.Status(a2a.TaskState_TASK_STATE_WORKING, nil); err != nil {
			return err
		}
		for _, text := range []string{"one", "two"} {
			if err := em.AppendArtifact(a2a.TextArtifact("a", text)); err != nil {
				return err
			}
		}
		close(emitted)
		<-ctx.Done()
		return nil
	})
	gate := make(chan struct{})
	store := &batchSpy{Store: memstore.New(), gate: gate}
	s := newServer(t, server.Options{Agent: agent, Store: store})
	var evs []a2a.StreamEvent
	var streamErr error
	taskID := make(chan string, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev, err := range s.SendStreamingMessage(anon(t), msgReq("go")) {
			if err != nil {
				streamErr = err
				return
			}
			if tk := ev.Response.GetTask(); tk != nil {
				taskID <- tk.GetId()
			}
			evs = append(evs, ev)
		}
	}()
	id := <-taskID
	<-emitted
	canceled := make(chan *a2a.Task, 1)
	go func() {
		task, err := s.CancelTask(anon(t), &a2a.CancelTaskRequest{Id: id})
		if err != nil {
			t.Errorf("CancelTask: %v", err)
		}
		canceled <- task
	}()
	time.Sleep(20 * time.Millisecond) // let CancelTask wait for the write
	store.mu.Lock()
	store.gate = nil
	store.mu.Unlock()
	close(gate)
	task := <-canceled
	<-done
	if streamErr != nil {
		t.Fatal(streamErr)
	}
	want := []string{"task:SUBMITTED", "status:WORKING", "artifact:a:one:append=true:last=false", "artifact:a:two:append=true:last=false", "status:CANCELED"}
	if got := describeAll(evs); !slices.Equal(got, want) {
		t.Errorf("events = %v, want %v", got, want)
	}
	if st := task.GetStatus().GetState(); st != a2a.TaskState_TASK_STATE_CANCELED || a2a.JoinText(task.GetArtifacts()[0].GetParts()) != "one\ntwo" {
		t.Errorf("CancelTask answered %s with %v, want CANCELED with both chunks", st, task.GetArtifacts())
	}
}

// A push configuration created while a write of chunks has committed but
// not been published yet: its first notification, a Task snapshot, and
// the notifications after it hold every event, so the configuration loses
// none of them.
func TestPushConfigAfterPipelinedChunks(t *testing.T) {
	t.Parallel()
	proceed, finish := make(chan struct{}), make(chan struct{})
	agent := server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		// The first event, which makes the task, is stored while the
		// agent waits; then the chunk is queued, and written alone.
		if err := em.Status(a2a.TaskState_TASK_STATE_WORKING, nil); err != nil {
			return err
		}
		<-proceed
		if err := em.AppendArtifact(a2a.TextArtifact("a", "one")); err != nil {
			return err
		}
		<-finish
		if err := em.AppendArtifact(a2a.TextArtifact("a", "two")); err != nil {
			return err
		}
		return em.Status(a2a.TaskState_TASK_STATE_COMPLETED, nil)
	})
	store := &batchSpy{Store: memstore.New()}
	s := newServer(t, server.Options{Agent: agent, Store: store})
	task := taskOf(t)(s.SendMessage(anon(t), withConfig(msgReq("go"), &a2a.SendMessageConfiguration{ReturnImmediately: true})))
	wrote := make(chan struct{}, 1)
	store.mu.Lock()
	store.wrote, store.hold = wrote, make(chan struct{})
	store.mu.Unlock()
	close(proceed)
	<-wrote // "one" is stored, not yet published
	put := make(chan error, 1)
	go func() {
		_, err := s.CreateTaskPushNotificationConfig(anon(t), &a2a.TaskPushNotificationConfig{TaskId: task.Id, Id: "cfg", Url: "https://hooks.example/x"})
		put <- err
	}()
	time.Sleep(20 * time.Millisecond) // let the configuration wait for the write, if it does
	store.mu.Lock()
	store.wrote = nil
	store.mu.Unlock()
	close(store.hold)
	if err := <-put; err != nil {
		t.Fatal(err)
	}
	subscribed, ended := make(chan struct{}), make(chan error, 1)
	go func() {
		var err error
		first := true
		for _, err = range s.SubscribeToTask(anon(t), &a2a.SubscribeToTaskRequest{Id: task.Id}) {
			if first {
				close(subscribed)
				first = false
			}
		}
		ended <- err
	}()
	<-subscribed
	close(finish)
	if err := <-ended; err != nil {
		t.Fatal(err)
	}
	final, err := s.GetTask(anon(t), &a2a.GetTaskRequest{Id: task.Id})
	if err != nil || state(final) != a2a.TaskState_TASK_STATE_COMPLETED {
		t.Fatalf("GetTask: %v, %v; want COMPLETED", state(final), err)
	}
	ns, err := store.PendingPush(anon(t), taskstore.PushTarget{TaskID: task.Id, ConfigID: "cfg"}, 100)
	if err != nil || len(ns) == 0 {
		t.Fatalf("PendingPush: %d notifications, %v", len(ns), err)
	}
	snap := ns[0].Event.GetTask()
	if snap == nil {
		t.Fatalf("first notification %v, want a Task", ns[0].Event)
	}
	for i, n := range ns[1:] {
		if n.Seq != ns[0].Seq+1+uint64(i) {
			t.Fatalf("notification %d has seq %d after a snapshot at %d: a gap", i+1, n.Seq, ns[0].Seq)
		}
		taskstore.Apply(snap, n.Event)
	}
	if got, want := a2a.JoinText(snap.GetArtifacts()[0].GetParts()), a2a.JoinText(final.GetArtifacts()[0].GetParts()); got != want {
		t.Errorf("the notifications hold the artifact %q, the task %q", got, want)
	}
}
