package sqlitestore

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
)

// GetTask's cache never answers with a task older than the last write
// acknowledged, however readers race the writes, and forgets the tasks
// DeleteFinished deletes.
func TestGetTaskCacheFollowsWrites(t *testing.T) {
	s := openTemp(t)
	defer s.Close()
	ctx := t.Context()
	sc := taskstore.Scope{Owner: "o"}
	tk := &a2a.Task{Id: "c1", ContextId: "c", Status: &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_WORKING, Timestamp: timestamppb.Now()}}
	if err := s.CreateTask(ctx, sc, tk, taskstore.Event{Seq: 1, Response: &a2a.StreamResponse{Payload: &a2a.StreamResponse_Task{Task: tk}}}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var readers sync.WaitGroup
	stopReaders := sync.OnceFunc(func() { close(stop); readers.Wait() })
	defer stopReaders()
	for range 2 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := s.GetTask(ctx, sc, "c1"); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	const chunks = 100
	for i := 1; i <= chunks; i++ {
		ev := &a2a.StreamResponse{Payload: &a2a.StreamResponse_ArtifactUpdate{ArtifactUpdate: &a2a.TaskArtifactUpdateEvent{
			TaskId: "c1", ContextId: "c", Artifact: a2a.TextArtifact("a", fmt.Sprint(i)), Append: i > 1}}}
		batch := i%2 == 0
		var err error
		if batch {
			err = s.AppendBatch(ctx, sc, "c1", []taskstore.Event{{Seq: uint64(i + 1), Response: ev}})
		} else {
			err = s.Append(ctx, sc, "c1", taskstore.Event{Seq: uint64(i + 1), Response: ev})
		}
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.GetTask(ctx, sc, "c1")
		if err != nil {
			t.Fatal(err)
		}
		if n := len(got.GetArtifacts()[0].GetParts()); n != i {
			t.Fatalf("after chunk %d (batch %v) GetTask has %d parts", i, batch, n)
		}
	}
	stopReaders()
	// Another scope never gets the cached task.
	if _, err := s.GetTask(ctx, taskstore.Scope{Owner: "other"}, "c1"); !errors.Is(err, taskstore.ErrNotFound) {
		t.Errorf("GetTask in another scope: %v, want ErrNotFound", err)
	}
	done := &a2a.StreamResponse{Payload: &a2a.StreamResponse_StatusUpdate{StatusUpdate: &a2a.TaskStatusUpdateEvent{
		TaskId: "c1", ContextId: "c", Status: &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_COMPLETED, Timestamp: timestamppb.Now()}}}}
	if err := s.Append(ctx, sc, "c1", taskstore.Event{Seq: chunks + 2, Response: done}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetTask(ctx, sc, "c1"); err != nil || got.GetStatus().GetState() != a2a.TaskState_TASK_STATE_COMPLETED {
		t.Fatalf("GetTask after COMPLETED: %v, %v", got.GetStatus().GetState(), err)
	}
	if n, err := s.DeleteFinished(ctx, time.Now().Add(time.Hour)); err != nil || n != 1 {
		t.Fatalf("DeleteFinished = %d, %v", n, err)
	}
	if _, err := s.GetTask(ctx, sc, "c1"); !errors.Is(err, taskstore.ErrNotFound) {
		t.Errorf("GetTask after DeleteFinished: %v, want ErrNotFound", err)
	}
}

// errRead is a read that fails: cached's way to see what the cache holds.
var errRead = errors.New("read")

// cached returns the task the cache hands out for k without a read, or
// nil.
func cached(c *taskCache, k cacheKey) *a2a.Task {
	t, _ := c.get(context.Background(), k, func() (*a2a.Task, error) { return nil, errRead })
	return t
}

// readAs returns a read of k that returns t, with a write of k (a drop)
// or a clear while it reads when between says so.
func readAs(c *taskCache, k cacheKey, t *a2a.Task, between func()) *a2a.Task {
	got, _ := c.get(context.Background(), k, func() (*a2a.Task, error) {
		if between != nil {
			between()
		}
		return t, nil
	})
	return got
}

// A read that began before a write must not cache what it read once the
// write is acknowledged (taskCache.put after drop).
func TestTaskCacheRefusesReadsOlderThanADrop(t *testing.T) {
	c := newTaskCache()
	k := cacheKey{taskstore.Scope{Owner: "o"}, "t"}
	readAs(c, k, &a2a.Task{Id: "t"}, func() { c.drop(k) }) // a write of the task committed meanwhile
	if got := cached(c, k); got != nil {
		t.Fatal("a read older than the write was cached")
	}
	readAs(c, k, &a2a.Task{Id: "t"}, nil)
	if got := cached(c, k); got == nil {
		t.Fatal("a read newer than the write was not cached")
	}
	c.drop(k)
	readAs(c, k, &a2a.Task{Id: "t"}, c.clear)
	if got := cached(c, k); got != nil {
		t.Fatal("a read older than a clear was cached")
	}
}

// A task larger than cachedTaskBytes is kept only while an answer holds
// it: shared then, read from the store again once nothing holds it.
func TestTaskCacheLargeTasksWhileHeld(t *testing.T) {
	c := newTaskCache()
	k := cacheKey{taskstore.Scope{Owner: "o"}, "big"}
	big := &a2a.Task{Id: "big", Artifacts: []*a2a.Artifact{a2a.TextArtifact("a", string(make([]byte, cachedTaskBytes)))}}
	readAs(c, k, big, nil)
	if got := cached(c, k); got != big {
		t.Fatal("a large task an answer holds was not shared")
	}
	if len(c.tasks) != 0 {
		t.Fatal("a task over the size bound was kept")
	}
	runtime.KeepAlive(big)
	big = nil
	runtime.GC()
	runtime.GC()
	if got := cached(c, k); got != nil {
		t.Fatal("a large task nothing holds was kept")
	}
}

// Calls that ask for a task while another reads it wait for that read and
// share its task; one that comes after a write (a drop) reads anew; one
// whose read failed reads itself.
func TestTaskCacheSharesReadsInProgress(t *testing.T) {
	c := newTaskCache()
	k := cacheKey{taskstore.Scope{Owner: "o"}, "t"}
	tk, fresh := &a2a.Task{Id: "t"}, &a2a.Task{Id: "t"}
	reading, release := make(chan struct{}), make(chan struct{})
	var reads atomic.Int32
	first := make(chan *a2a.Task)
	go func() {
		first <- readAs(c, k, tk, func() { reads.Add(1); close(reading); <-release })
	}()
	<-reading
	joined := make(chan *a2a.Task)
	go func() { joined <- readAs(c, k, &a2a.Task{Id: "t"}, func() { reads.Add(1) }) }()
	time.Sleep(20 * time.Millisecond) // the second call waits for the first's read
	c.drop(k)
	if got := readAs(c, k, fresh, nil); got != fresh {
		t.Fatal("a call after a write joined a read from before it")
	}
	close(release)
	if got := <-first; got != tk {
		t.Fatal("the first call did not get its read")
	}
	if got := <-joined; got != tk || reads.Load() != 1 {
		t.Fatalf("the waiting call got %p (reads %d), want the first read's task %p", got, reads.Load(), tk)
	}
	// A shared read that fails: the call that waited for it reads itself.
	c.drop(k)
	failing, stop := make(chan struct{}), make(chan struct{})
	go c.get(context.Background(), k, func() (*a2a.Task, error) { close(failing); <-stop; return nil, errRead })
	<-failing
	waiter := make(chan *a2a.Task)
	go func() { waiter <- readAs(c, k, fresh, nil) }()
	time.Sleep(20 * time.Millisecond)
	close(stop)
	if got := <-waiter; got != fresh {
		t.Fatal("a call whose shared read failed did not read itself")
	}
}
