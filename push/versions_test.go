package push_test

import (
	"context"
	"encoding/json"
	"testing"

	"parley.dev/parley/a2a"
	"parley.dev/parley/push"
)

// TestPayloadByVersion: a configuration registered in a call served in
// v0.3 receives what v0.3 servers post (a v0.3 Task object, Content-Type
// application/json, A2A-Version 0.3); one registered in v1.0 receives
// StreamResponses, even when its URL ends with the fragment older
// versions marked v0.3 configurations with. Both read back with the URL
// as registered.
func TestPayloadByVersion(t *testing.T) {
	t.Parallel()
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			rc03, rc10 := newReceiver(t, nil), newReceiver(t, nil)
			e := newEnv(t, st.open(t), fast())
			tk := e.send(t, "input-required", nil)
			as03 := a2a.WithCallInfo(context.Background(), &a2a.CallInfo{Version: "0.3", Wire: "0.3"})
			c03, err := e.srv.CreateTaskPushNotificationConfig(as03, &a2a.TaskPushNotificationConfig{TaskId: tk.Id, Url: rc03.url})
			if err != nil {
				t.Fatalf("CreateTaskPushNotificationConfig in v0.3: %v", err)
			}
			url10 := rc10.url + "#a2a-version=0.3"
			c10 := e.create(t, &a2a.TaskPushNotificationConfig{TaskId: tk.Id, Url: url10})

			body := rc03.waitDelivered(t, 1)[0]
			var v03task struct{ Kind, ID string }
			if err := json.Unmarshal(body, &v03task); err != nil || v03task.Kind != "task" || v03task.ID != tk.Id {
				t.Errorf("v0.3 config got %s (%v), want a v0.3 Task object", body, err)
			}
			if h := rc03.all()[0].header; h.Get("Content-Type") != "application/json" || h.Get("A2A-Version") != "0.3" {
				t.Errorf("v0.3 config got Content-Type %q, A2A-Version %q; want application/json, 0.3", h.Get("Content-Type"), h.Get("A2A-Version"))
			}
			if k := kind(t, rc10.waitDelivered(t, 1)[0]); k != "task:INPUT_REQUIRED" {
				t.Errorf("v1.0 config got %s, want the Task snapshot as a StreamResponse", k)
			}
			if h := rc10.all()[0].header; h.Get("Content-Type") != push.ContentType || h.Get("A2A-Version") != a2a.ProtocolVersion {
				t.Errorf("v1.0 config got Content-Type %q, A2A-Version %q", h.Get("Content-Type"), h.Get("A2A-Version"))
			}
			for _, c := range []struct{ id, url string }{{c03.Id, rc03.url}, {c10.Id, url10}} {
				got, err := e.srv.GetTaskPushNotificationConfig(call(t), &a2a.GetTaskPushNotificationConfigRequest{TaskId: tk.Id, Id: c.id})
				if err != nil || got.GetUrl() != c.url {
					t.Errorf("GetTaskPushNotificationConfig(%s) = %v, %v; want the URL %s", c.id, got, err, c.url)
				}
			}
		})
	}
}

// TestPayloadWithGeneration: a configuration registered in a call served
// in the A2A 1.1 preview receives each event with the task's generation
// after it (spec §3.2.7: the event's sequence number), under A2A-Version
// 1.1; one registered in v1.0 on the same server receives the same events
// without it.
func TestPayloadWithGeneration(t *testing.T) {
	t.Parallel()
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			rc11, rc10 := newReceiver(t, nil), newReceiver(t, nil)
			e := newEnvServing(t, st.open(t), fast(), []string{"1.1", "1.0", "0.3"})
			tk := e.send(t, "input-required", nil)
			as11 := a2a.WithCallInfo(call(t), &a2a.CallInfo{Version: "1.1"})
			parked, err := e.srv.GetTask(as11, &a2a.GetTaskRequest{Id: tk.Id})
			if err != nil || parked.GetGeneration() < 1 {
				t.Fatalf("GetTask in 1.1 = %v, %v; want a generation", parked, err)
			}
			if _, err := e.srv.CreateTaskPushNotificationConfig(as11, &a2a.TaskPushNotificationConfig{TaskId: tk.Id, Url: rc11.url}); err != nil {
				t.Fatalf("CreateTaskPushNotificationConfig in 1.1: %v", err)
			}
			e.create(t, &a2a.TaskPushNotificationConfig{TaskId: tk.Id, Url: rc10.url})
			follow := a2a.UserMessage("done")
			follow.TaskId = tk.Id
			if _, err := e.srv.SendMessage(call(t), &a2a.SendMessageRequest{Message: follow}); err != nil {
				t.Fatalf("follow-up: %v", err)
			}
			// The snapshot each configuration gets first, at the parked
			// task's generation, then the follow-up's events, one more
			// each, after the follow-up's message (a timeline entry,
			// spec §3.2.7, which is no event: the receiver sees the gap).
			got11, got10 := rc11.waitDelivered(t, 3), rc10.waitDelivered(t, 3)
			for i := range 3 {
				want := parked.GetGeneration() + int64(i)
				if i > 0 {
					want++
				}
				if g := (a2a.StreamEvent{Response: decode(t, got11[i])}).Generation(); g != want {
					t.Errorf("1.1 notification %d (%s) carries generation %d, want %d", i, kind(t, got11[i]), g, want)
				}
				if g := (a2a.StreamEvent{Response: decode(t, got10[i])}).Generation(); g != 0 {
					t.Errorf("1.0 notification %d (%s) carries generation %d, want none", i, kind(t, got10[i]), g)
				}
			}
			if h := rc11.all()[0].header; h.Get("A2A-Version") != "1.1" || h.Get("Content-Type") != push.ContentType {
				t.Errorf("1.1 config got A2A-Version %q, Content-Type %q", h.Get("A2A-Version"), h.Get("Content-Type"))
			}
		})
	}
}
