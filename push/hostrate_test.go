package push_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/push"
	"parley.dev/parley/taskstore"
)

// TestHostRate: notifications of several tasks and configurations for one
// host (two receivers on 127.0.0.1, two ports) are sent no faster than
// the host's rate after its burst, all of them, each configuration's in
// order; another host (localhost) meanwhile is not held up by them.
func TestHostRate(t *testing.T) {
	t.Parallel()
	const rate, burst = 20, 2
	type arrival struct {
		cfg string
		seq int
		at  time.Time
	}
	const total = 3*8 + 2
	var mu sync.Mutex
	var got []arrival
	all := make(chan struct{})
	receiver := func() *httptest.Server {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var sr a2a.StreamResponse
			body, _ := io.ReadAll(r.Body)
			if err := a2a.Unmarshal(body, &sr); err != nil {
				t.Errorf("notification %s: %v", body, err)
			}
			seq, _ := strconv.Atoi(sr.GetStatusUpdate().GetStatus().GetMessage().GetMessageId())
			mu.Lock()
			got = append(got, arrival{r.URL.Query().Get("cfg"), seq, time.Now()})
			if len(got) == total {
				close(all)
			}
			mu.Unlock()
			w.WriteHeader(http.StatusNoContent)
		}))
		t.Cleanup(srv.Close)
		return srv
	}
	a1, a2, b := receiver(), receiver(), receiver()
	bURL := strings.Replace(b.URL, "127.0.0.1", "localhost", 1)

	ctx := context.Background()
	store := memory(t)
	sc := taskstore.Scope{}
	// Host 127.0.0.1: two tasks, three configurations, 8 events each.
	// Host localhost: one task, one configuration, 2 events.
	targets := []struct {
		task, cfg, url string
		events         int
	}{{"t1", "a", a1.URL, 8}, {"t1", "b", a2.URL, 8}, {"t2", "c", a1.URL, 8}, {"t3", "other", bURL, 2}}
	// Event i of a task carries i as its status message's id: the order
	// a receiver sees.
	event := func(i int) *a2a.StreamResponse {
		m := a2a.AgentMessage("working")
		m.MessageId = strconv.Itoa(i)
		return &a2a.StreamResponse{Payload: &a2a.StreamResponse_StatusUpdate{StatusUpdate: &a2a.TaskStatusUpdateEvent{
			TaskId: "x", ContextId: "c", Status: &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_WORKING, Message: m}}}}
	}
	made := map[string]bool{}
	for _, tg := range targets {
		if !made[tg.task] {
			made[tg.task] = true
			tk := &a2a.Task{Id: tg.task, ContextId: "c",
				Status: &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_WORKING, Timestamp: a2a.Timestamp(time.Now())}}
			if err := store.CreateTask(ctx, sc, tk, taskstore.Event{Seq: 1}); err != nil {
				t.Fatal(err)
			}
		}
		cfg := &a2a.TaskPushNotificationConfig{Id: tg.cfg, TaskId: tg.task, Url: tg.url + "/hook?cfg=" + tg.cfg}
		if err := store.PutPushConfig(ctx, sc, &taskstore.PushConfig{TaskPushNotificationConfig: cfg}, taskstore.Event{}); err != nil {
			t.Fatal(err)
		}
	}
	seqs := map[string]uint64{}
	for i := range 8 {
		for _, task := range []string{"t1", "t2", "t3"} {
			if task == "t3" && i >= 2 {
				continue
			}
			seqs[task]++
			if err := store.Append(ctx, sc, task, taskstore.Event{Seq: seqs[task] + 1, Response: event(i), Push: true}); err != nil {
				t.Fatal(err)
			}
		}
	}
	o := fast()
	o.HostRate, o.HostBurst = rate, burst
	start := time.Now()
	s, err := push.New(store, o) // it scans the outbox at start
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)

	select {
	case <-all:
	case <-time.After(30 * time.Second):
		mu.Lock()
		t.Fatalf("%d of %d notifications delivered", len(got), total)
	}
	mu.Lock()
	defer mu.Unlock()
	perCfg := map[string]int{}
	var lastA, lastB time.Time
	for _, a := range got {
		if a.seq != perCfg[a.cfg] {
			t.Errorf("config %s: notification %d arrived as number %d: out of order", a.cfg, a.seq, perCfg[a.cfg])
		}
		perCfg[a.cfg]++
		if a.cfg == "other" {
			lastB = a.at
		} else {
			lastA = a.at
		}
	}
	for _, tg := range targets {
		if perCfg[tg.cfg] != tg.events {
			t.Errorf("config %s got %d notifications, want %d", tg.cfg, perCfg[tg.cfg], tg.events)
		}
	}
	// 24 POSTs to one host at 20/s after a burst of 2 take at least 1.1 s.
	if min := time.Duration(float64(24-burst) / rate * float64(time.Second)); lastA.Sub(start) < min {
		t.Errorf("24 notifications to one host delivered in %v, faster than its rate allows (%v)", lastA.Sub(start), min)
	}
	if !lastB.Before(lastA) {
		t.Errorf("the other host's notifications ended at %v, after the busy host's (%v): held up by it", lastB.Sub(start), lastA.Sub(start))
	}
	if st := s.Stats(); st.Failures != 0 || st.Attempts != total {
		t.Errorf("Stats = %+v, want %d attempts, no failures", st, total)
	}
}
