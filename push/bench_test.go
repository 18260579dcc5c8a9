package push_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/push"
	"parley.dev/parley/taskstore"
)

// BenchmarkDelivery measures end-to-end throughput: queueing an event in
// the store's outbox (the write the server makes for each task event) and
// its delivery to fast receivers (204, keep-alive). With 100 receivers the
// events are spread over 100 tasks, one configuration each. The bound per
// destination host is off (Options.HostRate): every receiver is on
// 127.0.0.1.
func BenchmarkDelivery(b *testing.B) {
	for _, receivers := range []int{1, 100} {
		for _, st := range stores {
			b.Run(fmt.Sprintf("receivers=%d/%s", receivers, st.name), func(b *testing.B) {
				benchDelivery(b, st.open(b), receivers)
			})
		}
	}
}

func benchDelivery(b *testing.B, store taskstore.Store, receivers int) {
	ctx := context.Background()
	var got atomic.Int64
	done := make(chan struct{})
	var want atomic.Int64
	sc := taskstore.Scope{}
	tasks := make([]*a2a.Task, receivers)
	for i := range receivers {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if got.Add(1) == want.Load() {
				close(done)
			}
			w.WriteHeader(http.StatusNoContent)
		}))
		b.Cleanup(srv.Close)
		tk := &a2a.Task{Id: fmt.Sprintf("task-%03d", i), ContextId: "c",
			Status: &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_WORKING, Timestamp: a2a.Timestamp(time.Now())}}
		if err := store.CreateTask(ctx, sc, tk, taskstore.Event{Seq: 1}); err != nil {
			b.Fatal(err)
		}
		cfg := &a2a.TaskPushNotificationConfig{Id: "p", TaskId: tk.Id, Url: srv.URL + "/hook", Token: "t",
			Authentication: &a2a.AuthenticationInfo{Scheme: "Bearer", Credentials: "c"}}
		if err := store.PutPushConfig(ctx, sc, &taskstore.PushConfig{TaskPushNotificationConfig: cfg}, taskstore.Event{}); err != nil {
			b.Fatal(err)
		}
		tasks[i] = tk
	}
	o := fast()
	o.Logger = slog.New(slog.DiscardHandler)
	o.HostRate = -1 // the receivers share one host: measure delivery, not the bound per host
	s, err := push.New(store, o)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close(ctx)
	ev := &a2a.StreamResponse{Payload: &a2a.StreamResponse_StatusUpdate{StatusUpdate: &a2a.TaskStatusUpdateEvent{
		TaskId: "x", ContextId: "c", Status: &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_WORKING}}}}

	want.Store(int64(b.N))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tk := tasks[i%receivers]
		// Each task's events follow its creation (seq 1) one by one.
		seq := uint64(i/receivers + 2)
		if err := store.Append(ctx, sc, tk.Id, taskstore.Event{Seq: seq, Response: ev, Push: true}); err != nil {
			b.Fatal(err)
		}
		s.Queued(tk.Id)
	}
	select {
	case <-done:
	case <-time.After(time.Minute):
		b.Fatalf("delivered %d of %d", got.Load(), b.N)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "notifications/s")
	if st := s.Stats(); st.Failures != 0 {
		b.Errorf("Stats = %+v, want no failures", st)
	}
}
