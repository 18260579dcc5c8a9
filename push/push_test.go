package push_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/agents"
	"parley.dev/parley/push"
	"parley.dev/parley/server"
)

// TestEveryEventInOrder: an inline config receives every event of the
// task, the creation Task first, in stream order, each body exactly the
// stream's StreamResponse in HTTP+JSON form, with the exact headers.
func TestEveryEventInOrder(t *testing.T) {
	t.Parallel()
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, st.open(t), nil)
			rc := newReceiver(t, nil)
			cfg := &a2a.TaskPushNotificationConfig{Url: rc.url + "?k=v", Token: "tok-1",
				Authentication: &a2a.AuthenticationInfo{Scheme: "Bearer", Credentials: "secret-1"}}
			req := &a2a.SendMessageRequest{Message: a2a.UserMessage("stream 3"),
				Configuration: &a2a.SendMessageConfiguration{TaskPushNotificationConfig: cfg}}
			var want [][]byte
			for ev, err := range e.srv.SendStreamingMessage(call(t), req) {
				if err != nil {
					t.Fatalf("stream: %v", err)
				}
				b, err := a2a.Marshal(ev.Response)
				if err != nil {
					t.Fatal(err)
				}
				want = append(want, b)
			}
			if len(want) != 6 { // task, WORKING, 3 chunks, COMPLETED
				t.Fatalf("stream had %d events, want 6", len(want))
			}
			got := rc.waitDelivered(t, len(want))
			time.Sleep(50 * time.Millisecond) // nothing more may come
			got = rc.delivered()
			if len(got) != len(want) {
				t.Fatalf("receiver got %d notifications, want %d:\n%s", len(got), len(want), describe(got))
			}
			for i := range want {
				if string(got[i]) != string(want[i]) {
					t.Errorf("notification %d:\n got  %s\n want %s", i, got[i], want[i])
				}
			}
			for i, h := range rc.all() {
				wantHeaders := map[string]string{
					"Content-Type":             "application/a2a+json",
					"Authorization":            "Bearer secret-1",
					"A2a-Notification-Token":   "tok-1",
					"X-A2a-Notification-Token": "tok-1",
					"A2a-Version":              "1.0",
				}
				for k, v := range wantHeaders {
					if got := h.header.Values(k); len(got) != 1 || got[0] != v {
						t.Errorf("request %d: header %s = %q, want %q", i, k, got, v)
					}
				}
			}
		})
	}
}

// TestCreatedConfig: a config created on an existing task first receives
// a snapshot of the task, then every later event; any authentication
// scheme is sent as is; a config without authentication or token sends
// neither header.
func TestCreatedConfig(t *testing.T) {
	t.Parallel()
	e := newEnv(t, memory(t), nil)
	rc, bare := newReceiver(t, nil), newReceiver(t, nil)
	tk := e.send(t, "input-required", nil)
	e.create(t, &a2a.TaskPushNotificationConfig{TaskId: tk.Id, Url: rc.url,
		Authentication: &a2a.AuthenticationInfo{Scheme: "Basic", Credentials: "dXNlcjpwdw=="}})
	e.create(t, &a2a.TaskPushNotificationConfig{TaskId: tk.Id, Url: bare.url})
	first := rc.waitDelivered(t, 1)
	snap := decode(t, first[0]).GetTask()
	if snap == nil || snap.Id != tk.Id || snap.GetStatus().GetState() != a2a.TaskState_TASK_STATE_INPUT_REQUIRED || len(snap.History) == 0 {
		t.Fatalf("first notification of a created config = %s, want a Task snapshot in INPUT_REQUIRED with history", first[0])
	}
	e.follow(t, tk.Id, "more")
	wantKinds := []string{"task:INPUT_REQUIRED", "status:WORKING", "artifact:echo", "status:COMPLETED"}
	for _, r := range []*receiver{rc, bare} {
		got := kinds(t, r.waitDelivered(t, len(wantKinds)))
		if !slices.Equal(got, wantKinds) {
			t.Errorf("notifications %v, want %v", got, wantKinds)
		}
	}
	if h := rc.all()[0].header.Get("Authorization"); h != "Basic dXNlcjpwdw==" {
		t.Errorf("Authorization = %q, want the Basic credentials", h)
	}
	h := bare.all()[0].header
	for _, k := range []string{"Authorization", "A2A-Notification-Token", "X-A2A-Notification-Token"} {
		if v, ok := h[http.CanonicalHeaderKey(k)]; ok {
			t.Errorf("config without credentials sent %s: %q", k, v)
		}
	}
}

// TestFollowUpInlineConfig: an inline config given with a follow-up
// message receives a snapshot (with that message), then the rest.
func TestFollowUpInlineConfig(t *testing.T) {
	t.Parallel()
	e := newEnv(t, memory(t), nil)
	rc := newReceiver(t, nil)
	tk := e.send(t, "input-required", nil)
	m := a2a.UserMessage("more")
	m.TaskId = tk.Id
	if _, err := e.srv.SendMessage(call(t), &a2a.SendMessageRequest{Message: m,
		Configuration: &a2a.SendMessageConfiguration{TaskPushNotificationConfig: &a2a.TaskPushNotificationConfig{Url: rc.url}}}); err != nil {
		t.Fatal(err)
	}
	bodies := rc.waitDelivered(t, 4)
	if got, want := kinds(t, bodies), []string{"task:INPUT_REQUIRED", "status:WORKING", "artifact:echo", "status:COMPLETED"}; !slices.Equal(got, want) {
		t.Fatalf("notifications %v, want %v", got, want)
	}
	if h := decode(t, bodies[0]).GetTask().GetHistory(); len(h) == 0 || h[len(h)-1].MessageId != m.MessageId {
		t.Errorf("snapshot history does not end with the follow-up message")
	}
}

// TestRetryThenSuccess: a receiver answering 500 twice then 200 gets the
// notification, and no duplicate after its 2xx.
func TestRetryThenSuccess(t *testing.T) {
	t.Parallel()
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, st.open(t), nil)
			rc := newReceiver(t, func(n int, _ http.ResponseWriter) int {
				if n <= 2 {
					return http.StatusInternalServerError
				}
				return http.StatusOK
			})
			e.send(t, "hello", &a2a.TaskPushNotificationConfig{Url: rc.url})
			want := []string{"task:SUBMITTED", "status:WORKING", "artifact:echo", "status:COMPLETED"}
			rc.waitDelivered(t, len(want))
			time.Sleep(50 * time.Millisecond)
			hits := rc.all()
			if len(hits) != len(want)+2 {
				t.Errorf("receiver got %d requests, want %d (2 failures, then one per event)", len(hits), len(want)+2)
			}
			for i := range 3 {
				if string(hits[i].body) != string(hits[0].body) {
					t.Errorf("request %d is not a retry of the first notification", i)
				}
			}
			if got := kinds(t, rc.delivered()); !slices.Equal(got, want) {
				t.Errorf("acknowledged notifications %v, want %v", got, want)
			}
			st := e.sender.Stats()
			if st.Delivered != 4 || st.Failures != 2 || st.Retries != 2 || st.Dropped != 0 {
				t.Errorf("Stats = %+v, want 4 delivered, 2 failures, both retried", st)
			}
		})
	}
}

// TestClientErrorNotRetried: a 4xx other than 429 drops that notification
// at once; the next ones are delivered.
func TestClientErrorNotRetried(t *testing.T) {
	t.Parallel()
	e := newEnv(t, memory(t), nil)
	rc := newReceiver(t, func(n int, _ http.ResponseWriter) int {
		if n == 1 {
			return http.StatusBadRequest
		}
		return http.StatusNoContent
	})
	e.send(t, "hello", &a2a.TaskPushNotificationConfig{Url: rc.url})
	got := kinds(t, rc.waitDelivered(t, 3))
	if want := []string{"status:WORKING", "artifact:echo", "status:COMPLETED"}; !slices.Equal(got, want) {
		t.Errorf("acknowledged %v, want %v", got, want)
	}
	if n := len(rc.all()); n != 4 {
		t.Errorf("receiver got %d requests, want 4 (the 400 not retried)", n)
	}
	if st := e.sender.Stats(); st.Dropped != 1 {
		t.Errorf("Stats.Dropped = %d, want 1", st.Dropped)
	}
	if !strings.Contains(e.logs.String(), "400 Bad Request") {
		t.Errorf("the drop is not logged with the answer:\n%s", e.logs)
	}
}

// TestRetryAfter: a 503 or 429 with Retry-After is retried no sooner than
// it asks, even with a millisecond backoff.
func TestRetryAfter(t *testing.T) {
	t.Parallel()
	for _, code := range []int{http.StatusServiceUnavailable, http.StatusTooManyRequests} {
		t.Run(http.StatusText(code), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, memory(t), nil)
			rc := newReceiver(t, func(n int, w http.ResponseWriter) int {
				if n == 1 {
					w.Header().Set("Retry-After", "1")
					return code
				}
				return http.StatusOK
			})
			tk := e.send(t, "input-required", nil)
			e.create(t, &a2a.TaskPushNotificationConfig{TaskId: tk.Id, Url: rc.url})
			rc.waitDelivered(t, 1)
			hits := rc.all()
			if gap := hits[1].at.Sub(hits[0].at); gap < 990*time.Millisecond {
				t.Errorf("retry %v after a Retry-After of 1 s", gap)
			}
		})
	}
}

// TestDeleteStopsDelivery: after DeleteTaskPushNotificationConfig nothing
// more is sent to the config, neither its pending retries nor later
// events; another config of the task is not affected.
func TestDeleteStopsDelivery(t *testing.T) {
	t.Parallel()
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, st.open(t), nil)
			failing := newReceiver(t, func(int, http.ResponseWriter) int { return http.StatusBadGateway })
			healthy := newReceiver(t, nil)
			tk := e.send(t, "input-required", nil)
			doomed := e.create(t, &a2a.TaskPushNotificationConfig{TaskId: tk.Id, Url: failing.url})
			e.create(t, &a2a.TaskPushNotificationConfig{TaskId: tk.Id, Url: healthy.url})
			eventually(t, "three failed attempts", func() bool { return len(failing.all()) >= 3 })
			if err := e.srv.DeleteTaskPushNotificationConfig(call(t), &a2a.DeleteTaskPushNotificationConfigRequest{TaskId: tk.Id, Id: doomed.Id}); err != nil {
				t.Fatal(err)
			}
			time.Sleep(100 * time.Millisecond) // an attempt in flight may still arrive
			n := len(failing.all())
			e.follow(t, tk.Id, "more")
			healthy.waitDelivered(t, 4)
			// The last delivery leaves the outbox once the sender has
			// recorded it, after the receiver answered; the deleted
			// config's notifications left with it.
			eventually(t, "an empty outbox after delete and delivery", func() bool {
				ts, err := e.store.PushTargets(context.Background(), tk.Id)
				return err == nil && len(ts) == 0
			})
			time.Sleep(100 * time.Millisecond) // with a 1-5 ms backoff, many retries would come
			if got := len(failing.all()); got != n {
				t.Errorf("deleted config got %d more requests", got-n)
			}
		})
	}
}

// TestHangingReceiver: a receiver that never answers delays neither
// another receiver nor the task.
func TestHangingReceiver(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	hanging := newReceiver(t, func(int, http.ResponseWriter) int { <-release; return 200 })
	t.Cleanup(func() { close(release) }) // runs before the receiver closes
	healthy := newReceiver(t, nil)
	o := fast()
	o.Timeout = time.Minute
	e := newEnv(t, memory(t), o)

	start := time.Now()
	tk := e.send(t, "input-required", &a2a.TaskPushNotificationConfig{Url: hanging.url})
	e.create(t, &a2a.TaskPushNotificationConfig{TaskId: tk.Id, Url: healthy.url})
	done := e.follow(t, tk.Id, "more")
	if done.GetStatus().GetState() != a2a.TaskState_TASK_STATE_COMPLETED {
		t.Fatalf("task %v, want COMPLETED", done.GetStatus().GetState())
	}
	healthy.waitDelivered(t, 4)
	if d := time.Since(start); d > 5*time.Second { // the hanging one times out after a minute
		t.Errorf("task and healthy receiver took %v beside a hanging receiver", d)
	}
	// A second task to another healthy receiver is not delayed either.
	other := newReceiver(t, nil)
	e.send(t, "hello", &a2a.TaskPushNotificationConfig{Url: other.url})
	other.waitDelivered(t, 4)
	// Its first request is in flight (it may only now be leaving: the
	// dispatcher runs beside the task), and nothing after it was sent.
	eventually(t, "the hanging receiver's first request", func() bool { return len(hanging.all()) >= 1 })
	if n := len(hanging.all()); n != 1 {
		t.Errorf("hanging receiver got %d requests, want 1 still in flight", n)
	}
}

// TestSuspension: after MaxFailures consecutive failures the config is
// suspended: logged, counted, its queue dropped, later events not queued.
// Creating it again resumes delivery.
func TestSuspension(t *testing.T) {
	t.Parallel()
	var healthy atomic.Bool
	rc := newReceiver(t, func(int, http.ResponseWriter) int {
		if healthy.Load() {
			return 200
		}
		return 500
	})
	o := fast()
	o.MaxFailures = 3
	e := newEnv(t, memory(t), o)
	tk := e.send(t, "input-required", nil)
	cfg := e.create(t, &a2a.TaskPushNotificationConfig{TaskId: tk.Id, Url: rc.url})
	eventually(t, "the suspension", func() bool { return e.sender.Stats().Suspended == 1 })
	st := e.sender.Stats()
	if len(st.Recent) != 1 || st.Recent[0].Target.ConfigID != cfg.Id || !strings.Contains(st.Recent[0].Reason, "3 consecutive failed deliveries") {
		t.Errorf("Stats.Recent = %+v, want the config with the reason", st.Recent)
	}
	if st.Failures != 3 || st.Retries != 2 {
		t.Errorf("Stats: %d failures, %d retries; want 3 failures, the last not retried (suspended)", st.Failures, st.Retries)
	}
	if !strings.Contains(e.logs.String(), "configuration suspended") {
		t.Errorf("suspension not logged:\n%s", e.logs)
	}
	if n := len(rc.all()); n != 3 {
		t.Errorf("receiver got %d requests, want 3", n)
	}
	healthy.Store(true)
	e.follow(t, tk.Id, "more") // events of a suspended config are not queued
	time.Sleep(50 * time.Millisecond)
	if n := len(rc.all()); n != 3 {
		t.Errorf("suspended config got %d requests, want 3", n)
	}
	// Created again (same id): the snapshot of the finished task arrives.
	e.create(t, cfg)
	got := rc.waitDelivered(t, 1)
	if k := kind(t, got[0]); k != "task:COMPLETED" {
		t.Errorf("after re-creation got %s, want the Task snapshot", k)
	}
}

// TestRestartSendsPending: notifications queued while the receiver was
// down are sent by the next Sender on the same database.
func TestRestartSendsPending(t *testing.T) {
	t.Parallel()
	store := sqlite(t)
	rc := newReceiver(t, nil)
	down := rc.srv.Listener.Addr().String()
	rc.srv.Close() // nothing listens there now
	url := "http://" + down + "/hook"

	o := fast()
	o.Backoff = push.Backoff{Initial: time.Hour} // no retry within the test
	e := newEnv(t, store, o)
	e.send(t, "hello", &a2a.TaskPushNotificationConfig{Url: url})
	e.send(t, "stream 2", &a2a.TaskPushNotificationConfig{Url: url})
	eventually(t, "first attempts", func() bool { return e.sender.Stats().Failures >= 2 })
	e.close(t)

	up := newReceiverAt(t, down)
	newEnv(t, store, nil)
	got := kinds(t, up.waitDelivered(t, 4+5))
	slices.Sort(got)
	want := []string{"artifact:echo", "artifact:stream", "artifact:stream", "status:COMPLETED", "status:COMPLETED",
		"status:WORKING", "status:WORKING", "task:SUBMITTED", "task:SUBMITTED"}
	if !slices.Equal(got, want) {
		t.Errorf("after restart got %v, want %v", got, want)
	}
}

// TestGuardAtRegistration: without the allow options the server refuses
// a loopback or private webhook with InvalidParams, inline or created.
func TestGuardAtRegistration(t *testing.T) {
	t.Parallel()
	g, err := push.NewGuard(&push.GuardOptions{Resolver: fakeDNS})
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, memory(t), &push.Options{Guard: g})
	tk := e.send(t, "input-required", nil)
	for _, u := range []string{"http://127.0.0.1:8080/hook", "http://[::1]/hook", "https://internal.example/hook", "http://10.0.0.1/"} {
		_, err := e.srv.CreateTaskPushNotificationConfig(call(t), &a2a.TaskPushNotificationConfig{TaskId: tk.Id, Url: u})
		if !errors.Is(err, a2a.ErrInvalidParams) {
			t.Errorf("Create with %s: %v, want InvalidParams", u, err)
		}
		req := &a2a.SendMessageRequest{Message: a2a.UserMessage("hello"),
			Configuration: &a2a.SendMessageConfiguration{TaskPushNotificationConfig: &a2a.TaskPushNotificationConfig{Url: u}}}
		if _, err := e.srv.SendMessage(call(t), req); !errors.Is(err, a2a.ErrInvalidParams) {
			t.Errorf("SendMessage with inline %s: %v, want InvalidParams", u, err)
		}
	}
	if _, err := e.srv.CreateTaskPushNotificationConfig(call(t), &a2a.TaskPushNotificationConfig{TaskId: tk.Id, Url: "https://public.example/hook"}); err != nil {
		t.Errorf("Create with a public host: %v", err)
	}
}

// TestPushNeedsTheCapability: a server with a Sender must declare push.
func TestPushNeedsTheCapability(t *testing.T) {
	t.Parallel()
	e := newEnv(t, memory(t), nil)
	card := proto.Clone(e.srv.Card()).(*a2a.AgentCard)
	card.Capabilities.PushNotifications = nil
	if _, err := server.New(&server.Options{Card: card, Agent: agents.Echo(), Push: e.sender}); err == nil {
		t.Error("server.New with Push and a card without pushNotifications succeeded")
	}
}

// TestStoreOutboxDrained: once every notification is acknowledged the
// outbox is empty.
func TestStoreOutboxDrained(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sqlite(t), nil)
	rc := newReceiver(t, nil)
	for range 5 {
		e.send(t, "hello", &a2a.TaskPushNotificationConfig{Url: rc.url})
	}
	rc.waitDelivered(t, 20)
	eventually(t, "an empty outbox", func() bool {
		ts, err := e.store.PushTargets(context.Background(), "")
		return err == nil && len(ts) == 0
	})
}
