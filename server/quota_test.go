package server_test

// Per-caller task quotas (Limits.MaxOpenTasks, Limits.TaskRate): counted
// in memory, refused with UnsupportedOperationError whose ErrorInfo
// metadata names the quota.

import (
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"parley.dev/parley/internal/testkit"

	"parley.dev/parley/a2a"
	"parley.dev/parley/server"
)

// wantQuota checks err is the refusal of the quota named, with its limit.
func wantQuota(t testing.TB, what string, err error, quota, limit string) *a2a.Error {
	t.Helper()
	var e *a2a.Error
	if !errors.As(err, &e) || e.Code != a2a.CodeUnsupportedOperation {
		t.Fatalf("%s: err = %v, want UnsupportedOperationError for quota %s", what, err, quota)
	}
	if e.Metadata["quota"] != quota || e.Metadata["limit"] != limit {
		t.Errorf("%s: metadata %v, want quota %q limit %q", what, e.Metadata, quota, limit)
	}
	return e
}

func TestMaxOpenTasks(t *testing.T) {
	t.Parallel()
	s := newServer(t, server.Options{Limits: server.Limits{MaxOpenTasks: 2}})
	// Finished tasks and direct replies hold no quota.
	for range 3 {
		sendTask(t, s, anon(t), "hello")
		sendTask(t, s, anon(t), "fail")
		if _, err := s.SendMessage(anon(t), msgReq("message")); err != nil {
			t.Fatal(err)
		}
	}
	a := sendTask(t, s, anon(t), "input-required")
	b := sendTask(t, s, anon(t), "auth-required")

	refused := msgReq("input-required")
	_, err := s.SendMessage(anon(t), refused)
	wantQuota(t, "a third open task", err, "maxOpenTasks", "2")
	_, err = testkit.Collect(s.SendStreamingMessage(anon(t), msgReq("input-required")))
	wantQuota(t, "a third open task (stream)", err, "maxOpenTasks", "2")

	// The quota is the caller's: another principal, and the same caller
	// under another tenant name, are counted apart and together.
	sendTask(t, s, as(t, "alice"), "input-required")
	tenant := msgReq("input-required")
	tenant.Tenant = "elsewhere"
	_, err = s.SendMessage(anon(t), tenant)
	wantQuota(t, "a third open task under another tenant", err, "maxOpenTasks", "2")

	// Follow-ups on open tasks go on.
	resp, err := followUp(t, s, "", followReq(a.Id, "done"))
	if tk := mustTask(t, resp, err); state(tk) != a2a.TaskState_TASK_STATE_COMPLETED {
		t.Fatalf("follow-up: %v", tk)
	}
	// a completed: one place is free; the refused messageId may now run.
	taskOf(t)(s.SendMessage(anon(t), refused))
	_, err = s.SendMessage(anon(t), msgReq("input-required"))
	wantQuota(t, "at the quota again", err, "maxOpenTasks", "2")

	// A resend of an accepted message is answered, not refused.
	if _, err := s.SendMessage(anon(t), refused); err != nil {
		t.Errorf("resend at the quota: %v; want the original answer", err)
	}
	// Canceling frees a place.
	if _, err := s.CancelTask(anon(t), &a2a.CancelTaskRequest{Id: b.Id}); err != nil {
		t.Fatal(err)
	}
	sendTask(t, s, anon(t), "input-required")
}

// TestMaxOpenTasksConcurrent: many callers racing for the last places get
// exactly the quota.
func TestMaxOpenTasksConcurrent(t *testing.T) {
	t.Parallel()
	const quota = 5
	s := newServer(t, server.Options{Limits: server.Limits{MaxOpenTasks: quota}})
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok, refused := 0, 0
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.SendMessage(anon(t), msgReq("input-required"))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				ok++
			case errors.Is(err, a2a.ErrUnsupportedOperation):
				refused++
			default:
				t.Errorf("SendMessage: %v", err)
			}
		}()
	}
	wg.Wait()
	if ok != quota || refused != 20-quota {
		t.Errorf("%d accepted, %d refused; want %d and %d", ok, refused, quota, 20-quota)
	}
}

// TestMaxOpenTasksDefault: the default is 10,000, and a negative value
// turns the quota off.
func TestMaxOpenTasksDefault(t *testing.T) {
	t.Parallel()
	if server.DefaultMaxOpenTasks != 10000 {
		t.Errorf("DefaultMaxOpenTasks = %d", server.DefaultMaxOpenTasks)
	}
	s := newServer(t, server.Options{Limits: server.Limits{MaxOpenTasks: -1}})
	for range 20 {
		sendTask(t, s, anon(t), "input-required")
	}
}

// fakeClock is an Options.Now a test moves by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func TestTaskRate(t *testing.T) {
	t.Parallel()
	clock := &fakeClock{t: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
	s := newServer(t, server.Options{Now: clock.Now, Limits: server.Limits{TaskRate: 2, TaskBurst: 3}})
	for range 3 {
		sendTask(t, s, anon(t), "hello")
	}
	_, err := s.SendMessage(anon(t), msgReq("hello"))
	e := wantQuota(t, "a fourth task in the same instant", err, "taskRate", "2/s")
	if ms, _ := strconv.Atoi(e.Metadata["retryAfterMs"]); ms != 500 || e.Metadata["burst"] != "3" {
		t.Errorf("metadata %v; want retryAfterMs 500 and burst 3", e.Metadata)
	}
	// Another caller has its own bucket.
	sendTask(t, s, as(t, "alice"), "hello")
	// Half a second earns one task.
	clock.advance(500 * time.Millisecond)
	sendTask(t, s, anon(t), "hello")
	_, err = s.SendMessage(anon(t), msgReq("hello"))
	wantQuota(t, "the earned task spent", err, "taskRate", "2/s")
	// A long pause fills the bucket to its burst, no more.
	clock.advance(time.Hour)
	for range 3 {
		sendTask(t, s, anon(t), "hello")
	}
	_, err = s.SendMessage(anon(t), msgReq("hello"))
	wantQuota(t, "after the burst", err, "taskRate", "2/s")
	// Follow-ups are not new tasks.
	clock.advance(time.Second)
	parked := sendTask(t, s, anon(t), "input-required")
	sendTask(t, s, anon(t), "input-required")
	if _, err := followUp(t, s, "", followReq(parked.Id, "more")); err != nil {
		t.Errorf("follow-up with an empty bucket: %v", err)
	}
}

// TestTaskRateResend: a resend of a new task's message, which is found
// only when the task's start records it, costs its caller no token: the
// bucket's next task is still accepted. At the limit a resend is answered,
// not refused.
func TestTaskRateResend(t *testing.T) {
	t.Parallel()
	clock := &fakeClock{t: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
	s := newServer(t, server.Options{Now: clock.Now, Limits: server.Limits{TaskRate: 1, TaskBurst: 2}})
	first := msgReq("hello")
	tk := taskOf(t)(s.SendMessage(anon(t), first))
	for range 3 {
		if again := taskOf(t)(s.SendMessage(anon(t), first)); again.Id != tk.Id {
			t.Fatalf("resend answered with task %s, want %s", again.Id, tk.Id)
		}
	}
	sendTask(t, s, anon(t), "hello") // the bucket's second token
	_, err := s.SendMessage(anon(t), msgReq("hello"))
	wantQuota(t, "a third task in the same instant", err, "taskRate", "1/s")
	if again := taskOf(t)(s.SendMessage(anon(t), first)); again.Id != tk.Id {
		t.Fatalf("resend at the limit answered with task %s, want %s", again.Id, tk.Id)
	}
}

// TestTaskRateOffByDefault: without TaskRate, a burst of tasks from one
// caller is not limited.
func TestTaskRateOffByDefault(t *testing.T) {
	t.Parallel()
	s := newServer(t, server.Options{})
	for range 50 {
		sendTask(t, s, anon(t), "hello")
	}
}

// TestTaskRateDefaultBurst: the burst defaults to the rate rounded up.
func TestTaskRateDefaultBurst(t *testing.T) {
	t.Parallel()
	clock := &fakeClock{t: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
	s := newServer(t, server.Options{Now: clock.Now, Limits: server.Limits{TaskRate: 1.5}})
	sendTask(t, s, anon(t), "hello")
	sendTask(t, s, anon(t), "hello")
	_, err := s.SendMessage(anon(t), msgReq("hello"))
	wantQuota(t, "a third task", err, "taskRate", "1.5/s")
}
