package push_test

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/pgtest"
	"parley.dev/parley/push"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/pgstore"
)

// TestClaimsAcrossSenders drains one PostgreSQL outbox with three
// Senders, each on a Store of its own (three processes): every
// notification is delivered once, in order, never two at a time; then a
// Sender that stops in the middle of a POST leaves its rows to the others
// once its claim lapsed.
func TestClaimsAcrossSenders(t *testing.T) {
	url := pgtest.NewSchema(t, pgtest.NewDatabase(t))
	stores := make([]*pgstore.Store, 3)
	for i := range stores {
		s, err := pgstore.Open(t.Context(), url, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		stores[i] = s
	}
	var inFlight, most atomic.Int32
	var hang sync.Once
	hung, release := make(chan struct{}), make(chan struct{})
	var hanging atomic.Bool
	var hungBy string // the sender of the hung POST (its senderHeader)
	var rc *receiver
	rc = newReceiver(t, func(n int, w http.ResponseWriter) int {
		now := inFlight.Add(1)
		defer inFlight.Add(-1)
		for m := most.Load(); now > m && !most.CompareAndSwap(m, now); m = most.Load() {
		}
		if hanging.Load() {
			hang.Do(func() {
				hungBy = rc.all()[n-1].header.Get(senderHeader)
				close(hung)
				<-release
			})
		}
		time.Sleep(time.Millisecond)
		return http.StatusOK
	})
	senders := make([]*push.Sender, 3)
	for i, st := range stores {
		o := fast()
		o.Claims, o.ClaimLease, o.Rescan = st, time.Second, 200*time.Millisecond
		o.Transport = tagged{strconv.Itoa(i)}
		s, err := push.New(st, o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close(context.Background()) })
		senders[i] = s
	}
	sc := taskstore.Scope{}
	queue := func(id string, n int, tell func(seq uint64) *push.Sender) {
		cfg := &taskstore.PushConfig{TaskPushNotificationConfig: &a2a.TaskPushNotificationConfig{TaskId: id, Id: "c", Url: rc.url}}
		tk := &a2a.Task{Id: id, ContextId: "ctx", Status: &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_WORKING}}
		ev := taskstore.Event{Seq: 1, Push: true, PushConfig: cfg, Response: &a2a.StreamResponse{Payload: &a2a.StreamResponse_Task{Task: tk}}}
		if err := stores[0].CreateTask(t.Context(), sc, tk, ev); err != nil {
			t.Fatal(err)
		}
		for seq := uint64(2); seq <= uint64(n); seq++ {
			up := &a2a.TaskStatusUpdateEvent{TaskId: id, ContextId: "ctx", Status: &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_WORKING,
				Message: a2a.AgentMessage(string(rune('a' + seq%26)))}}
			if err := stores[seq%3].Append(t.Context(), sc, id, taskstore.Event{Seq: seq, Push: true,
				Response: &a2a.StreamResponse{Payload: &a2a.StreamResponse_StatusUpdate{StatusUpdate: up}}}); err != nil {
				t.Fatal(err)
			}
			tell(seq).Queued(id)
		}
	}
	queue("t1", 60, func(seq uint64) *push.Sender { return senders[seq%3] }) // every sender is told of some
	got := rc.waitDelivered(t, 60)
	time.Sleep(300 * time.Millisecond) // a duplicate would show by now
	if got = rc.delivered(); len(got) != 60 {
		t.Fatalf("%d deliveries of 60 notifications", len(got))
	}
	if m := most.Load(); m != 1 {
		t.Fatalf("%d deliveries of one configuration at once, want 1", m)
	}
	checkOrder(t, got, "t1", 1)

	// The sender that claims t2 (the first is told of it, but another's
	// rescan may come first) hangs in its first POST and is closed
	// there: another delivers all of t2 once the claim lapsed (the hung
	// POST's notification again: at least once).
	hanging.Store(true)
	queue("t2", 5, func(uint64) *push.Sender { return senders[0] })
	<-hung
	began := time.Now()
	i, err := strconv.Atoi(hungBy)
	if err != nil {
		t.Fatalf("the hung POST came from sender %q", hungBy)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	senders[i].Close(ctx) // abandons the hung POST
	cancel()
	close(release)
	all := rc.waitDelivered(t, 66)
	t.Logf("t2 taken over from sender %d after %v (claim lease 1s)", i, time.Since(began).Round(time.Millisecond))
	if decode(t, all[60]).GetTask().GetId() != "t2" {
		t.Fatalf("the hung POST was %s", all[60])
	}
	checkOrder(t, all[61:], "t2", 1)
}

// senderHeader names, in a test's POSTs, the Sender that made them.
const senderHeader = "X-Test-Sender"

// tagged is the transport of a test's Sender: it marks each request with
// the Sender's name.
type tagged struct{ name string }

func (tg tagged) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(senderHeader, tg.name)
	return http.DefaultTransport.RoundTrip(r)
}

// checkOrder fails unless bodies are the notifications of task id with
// consecutive sequence numbers from `from`: snapshot first, then status
// updates.
func checkOrder(t *testing.T, bodies [][]byte, id string, from int) {
	t.Helper()
	for i, b := range bodies {
		ev := decode(t, b)
		if i == 0 && from == 1 {
			if ev.GetTask().GetId() != id {
				t.Fatalf("first notification %s, want the %s snapshot", b, id)
			}
			continue
		}
		seq := uint64(from + i)
		want := string(rune('a' + seq%26))
		if su := ev.GetStatusUpdate(); su.GetTaskId() != id || a2a.FirstText(su.GetStatus().GetMessage()) != want {
			t.Fatalf("notification %d: %s, want event %d of %s", i, b, seq, id)
		}
	}
}
