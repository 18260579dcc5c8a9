package server_test

// The push notification configuration operations (spec §3.1.7-§3.1.10).

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/testkit"
	"parley.dev/parley/server"
)

func TestPushConfigs(t *testing.T) {
	t.Parallel()
	s := newServer(t, server.Options{})
	task := sendTask(t, s, anon(t), "input-required")
	checkPushConfigLifecycle(t, s, task)

	t.Run("unknown task", func(t *testing.T) {
		for _, o := range operations(s, "no-such-task", "cfg") {
			if strings.Contains(o.name, "PushNotification") {
				wantErr(t, o.name, o.call(anon(t)), a2a.ErrTaskNotFound)
			}
		}
	})
	t.Run("bad url", func(t *testing.T) {
		for _, u := range []string{"", "not a url", "ftp://hooks.example/x", "https://", "/relative/path", "mailto:a@b.example"} {
			_, err := s.CreateTaskPushNotificationConfig(anon(t), &a2a.TaskPushNotificationConfig{TaskId: task.Id, Url: u})
			wantErr(t, fmt.Sprintf("Create with url %q", u), err, a2a.ErrInvalidParams)
			inline := &a2a.SendMessageConfiguration{TaskPushNotificationConfig: &a2a.TaskPushNotificationConfig{Url: u}}
			_, err = s.SendMessage(anon(t), withConfig(msgReq("hello"), inline))
			wantErr(t, fmt.Sprintf("SendMessage with inline url %q", u), err, a2a.ErrInvalidParams)
		}
	})
	t.Run("missing ids", func(t *testing.T) {
		_, err := s.CreateTaskPushNotificationConfig(anon(t), &a2a.TaskPushNotificationConfig{Url: "https://hooks.example/"})
		wantErr(t, "Create without taskId", err, a2a.ErrInvalidParams)
		_, err = s.GetTaskPushNotificationConfig(anon(t), &a2a.GetTaskPushNotificationConfigRequest{TaskId: task.Id})
		wantErr(t, "Get without id", err, a2a.ErrInvalidParams)
		err = s.DeleteTaskPushNotificationConfig(anon(t), &a2a.DeleteTaskPushNotificationConfigRequest{TaskId: task.Id})
		wantErr(t, "Delete without id", err, a2a.ErrInvalidParams)
	})
	t.Run("inline config", func(t *testing.T) { checkInlinePushConfigs(t, s) })
}

// checkPushConfigLifecycle creates two configurations of a task, reads and
// lists them, deletes one (twice: it is idempotent) and checks what is left.
func checkPushConfigLifecycle(t *testing.T, s a2a.Service, task *a2a.Task) {
	t.Helper()
	created, err := s.CreateTaskPushNotificationConfig(anon(t), &a2a.TaskPushNotificationConfig{
		TaskId: task.Id, Url: "https://hooks.example/a", Token: "tok",
		Authentication: &a2a.AuthenticationInfo{Scheme: "Bearer", Credentials: "secret"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if created.Id == "" || created.TaskId != task.Id || created.Url != "https://hooks.example/a" || created.Token != "tok" {
		t.Errorf("created %v: want an assigned id and the fields given", created)
	}
	second, err := s.CreateTaskPushNotificationConfig(anon(t), &a2a.TaskPushNotificationConfig{TaskId: task.Id, Url: "http://hooks.example/b"})
	if err != nil || second.Id == "" || second.Id == created.Id {
		t.Fatalf("second config %v, %v: want another assigned id", second, err)
	}

	got, err := s.GetTaskPushNotificationConfig(anon(t), &a2a.GetTaskPushNotificationConfigRequest{TaskId: task.Id, Id: created.Id})
	if err != nil || !proto.Equal(got, created) {
		t.Errorf("Get = %v, %v; want %v", got, err, created)
	}
	list, err := s.ListTaskPushNotificationConfigs(anon(t), &a2a.ListTaskPushNotificationConfigsRequest{TaskId: task.Id})
	if err != nil || len(list.Configs) != 2 || list.NextPageToken != "" {
		t.Errorf("List = %v, %v; want 2 configs", list, err)
	}

	del := &a2a.DeleteTaskPushNotificationConfigRequest{TaskId: task.Id, Id: created.Id}
	if err := s.DeleteTaskPushNotificationConfig(anon(t), del); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if err := s.DeleteTaskPushNotificationConfig(anon(t), del); err != nil {
		t.Errorf("Delete again = %v; want nil (idempotent)", err)
	}
	_, err = s.GetTaskPushNotificationConfig(anon(t), &a2a.GetTaskPushNotificationConfigRequest{TaskId: task.Id, Id: created.Id})
	wantErr(t, "Get after delete", err, a2a.ErrTaskNotFound)
	list, err = s.ListTaskPushNotificationConfigs(anon(t), &a2a.ListTaskPushNotificationConfigsRequest{TaskId: task.Id})
	if err != nil || len(list.Configs) != 1 || list.Configs[0].Id != second.Id {
		t.Errorf("List after delete = %v, %v", list, err)
	}
}

// checkInlinePushConfigs: a configuration given with a send is stored for
// the new task, and for the task of a follow-up.
func checkInlinePushConfigs(t *testing.T, s a2a.Service) {
	inline := &a2a.SendMessageConfiguration{TaskPushNotificationConfig: &a2a.TaskPushNotificationConfig{Url: "https://hooks.example/inline", Token: "t1"}}
	tk := taskOf(t)(s.SendMessage(anon(t), withConfig(msgReq("hello"), inline)))
	list, err := s.ListTaskPushNotificationConfigs(anon(t), &a2a.ListTaskPushNotificationConfigsRequest{TaskId: tk.Id})
	if err != nil || len(list.Configs) != 1 {
		t.Fatalf("List = %v, %v; want the inline config", list, err)
	}
	c := list.Configs[0]
	if c.Id == "" || c.TaskId != tk.Id || c.Url != "https://hooks.example/inline" || c.Token != "t1" {
		t.Errorf("inline config stored as %v", c)
	}
	// On a follow-up too.
	parked := sendTask(t, s, anon(t), "input-required")
	f := withConfig(followReq(parked.Id, "more"), &a2a.SendMessageConfiguration{TaskPushNotificationConfig: &a2a.TaskPushNotificationConfig{Url: "https://hooks.example/follow"}})
	if _, err := followUp(t, s, "", f); err != nil {
		t.Fatal(err)
	}
	list, err = s.ListTaskPushNotificationConfigs(anon(t), &a2a.ListTaskPushNotificationConfigsRequest{TaskId: parked.Id})
	if err != nil || len(list.Configs) != 1 || list.Configs[0].Url != "https://hooks.example/follow" || list.Configs[0].TaskId != parked.Id {
		t.Errorf("follow-up inline config: %v, %v", list, err)
	}
}

// queuedCounter is a server.Pusher that counts Queued calls per task.
type queuedCounter struct {
	testkit.NoDelivery
	mu sync.Mutex
	n  map[string]int
}

func (q *queuedCounter) Queued(taskID string) {
	q.mu.Lock()
	q.n[taskID]++
	q.mu.Unlock()
}

func (q *queuedCounter) count(taskID string) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.n[taskID]
}

// TestQueuedOnlyWithPushConfigs checks that the pusher is told about a
// task's writes once the task may have a push configuration, and not
// while it is known to have none (so no outbox lookup is spent on it).
func TestQueuedOnlyWithPushConfigs(t *testing.T) {
	t.Parallel()
	q := &queuedCounter{n: map[string]int{}}
	s := newServer(t, server.Options{Push: q})

	plain := sendTask(t, s, anon(t), "hello")
	if n := q.count(plain.Id); n != 0 {
		t.Errorf("a task without push configurations: Queued %d times; want 0", n)
	}

	inline := taskOf(t)(s.SendMessage(anon(t), withConfig(msgReq("hello"), &a2a.SendMessageConfiguration{
		TaskPushNotificationConfig: &a2a.TaskPushNotificationConfig{Url: "https://hooks.example/inline"}})))
	if n := q.count(inline.Id); n < 4 { // created, working, artifact, completed
		t.Errorf("a task created with a push configuration: Queued %d times; want one per event (4)", n)
	}

	later := sendTask(t, s, anon(t), "input-required")
	if n := q.count(later.Id); n != 0 {
		t.Fatalf("before its configuration: Queued %d times; want 0", n)
	}
	if _, err := s.CreateTaskPushNotificationConfig(anon(t), &a2a.TaskPushNotificationConfig{TaskId: later.Id, Url: "https://hooks.example/later"}); err != nil {
		t.Fatal(err)
	}
	n := q.count(later.Id)
	if n != 1 {
		t.Errorf("after CreateTaskPushNotificationConfig: Queued %d times; want 1 (its snapshot)", n)
	}
	taskOf(t)(s.SendMessage(anon(t), followReq(later.Id, "hello")))
	if q.count(later.Id) <= n {
		t.Errorf("a follow-up's events on a task with a configuration: Queued no more than %d times", n)
	}
}
