package server_test

// Authentication and scoping (docs/decisions.md#b12): callers see only their
// own tasks, per principal and per tenant.

import (
	"context"
	"errors"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/agents"
	"parley.dev/parley/server"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/memstore"
)

func TestUnauthenticated(t *testing.T) {
	t.Parallel()
	card := testCard(true, true)
	card.Capabilities.ExtendedAgentCard = proto.Bool(true)
	s := newServer(t, server.Options{Card: card, RequireAuth: true, ExtendedCard: card})
	task := sendTask(t, s, as(t, "alice"), "input-required")
	for _, o := range operations(s, task.Id, "cfg") {
		t.Run(o.name, func(t *testing.T) {
			err := o.call(anon(t))
			var e *a2a.Error
			if !errors.As(err, &e) || e.Code != a2a.CodeUnauthenticated {
				t.Errorf("err = %v, want code %d (Unauthenticated)", err, a2a.CodeUnauthenticated)
			}
		})
	}
	// Nothing the anonymous calls did reached alice's task.
	got, err := s.GetTask(as(t, "alice"), &a2a.GetTaskRequest{Id: task.Id})
	if err != nil || state(got) != a2a.TaskState_TASK_STATE_INPUT_REQUIRED || len(got.History) != len(task.History) {
		t.Errorf("alice's task changed: %v, %v", got, err)
	}
}

func TestScopingByPrincipal(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	s := newServer(t, server.Options{RequireAuth: true, Agent: blockOrConform(release)})

	parked := sendTask(t, s, as(t, "alice"), "input-required")
	done := sendTask(t, s, as(t, "alice"), "hello")
	live, err := s.SendMessage(as(t, "alice"), withConfig(msgReq("block"), &a2a.SendMessageConfiguration{ReturnImmediately: true}))
	liveTask := mustTask(t, live, err)
	cfgs := map[string]string{}
	for _, tk := range []*a2a.Task{parked, done, liveTask} {
		c, err := s.CreateTaskPushNotificationConfig(as(t, "alice"), &a2a.TaskPushNotificationConfig{TaskId: tk.Id, Url: "https://hooks.example/alice"})
		if err != nil {
			t.Fatal(err)
		}
		cfgs[tk.Id] = c.Id
	}
	probeAsBob(t, s, []*a2a.Task{parked, done, liveTask}, cfgs)

	// Bob's own task, and what each sees in ListTasks.
	bobs := sendTask(t, s, as(t, "bob"), "hello")
	if got := listIDs(t, s, "bob"); !slices.Equal(got, []string{bobs.Id}) {
		t.Errorf("bob lists %v, want only his own task %s", got, bobs.Id)
	}
	want := []string{parked.Id, done.Id, liveTask.Id}
	sort.Strings(want)
	if got := listIDs(t, s, "alice"); !slices.Equal(got, want) {
		t.Errorf("alice lists %v, want %v", got, want)
	}

	// Bob's attempts changed nothing of alice's.
	for _, tk := range []*a2a.Task{parked, done} {
		got, err := s.GetTask(as(t, "alice"), &a2a.GetTaskRequest{Id: tk.Id})
		if err != nil || state(got) != state(tk) || len(got.History) != len(tk.History) {
			t.Errorf("alice's task %s changed: %v, %v", tk.Id, got, err)
		}
	}
	got, err := s.GetTask(as(t, "alice"), &a2a.GetTaskRequest{Id: liveTask.Id})
	if err != nil || a2a.IsTerminal(state(got)) {
		t.Errorf("bob's cancel reached alice's live task: %v, %v", got, err)
	}
	for id, cid := range cfgs {
		if _, err := s.GetTaskPushNotificationConfig(as(t, "alice"), &a2a.GetTaskPushNotificationConfigRequest{TaskId: id, Id: cid}); err != nil {
			t.Errorf("bob's delete removed alice's config: %v", err)
		}
	}
}

// blockOrConform keeps a task WORKING for "block" until release is closed;
// other messages go to the conformance agent.
func blockOrConform(release <-chan struct{}) server.Agent {
	return server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		if a2a.FirstText(req.Message) == "block" {
			if err := em.Status(a2a.TaskState_TASK_STATE_WORKING, nil); err != nil {
				return err
			}
			select {
			case <-release:
			case <-ctx.Done():
				return nil
			}
			return em.Status(a2a.TaskState_TASK_STATE_COMPLETED, nil)
		}
		return agents.Conformance().Execute(ctx, req, em)
	})
}

// probeAsBob aims every operation about a task at each of alice's tasks as
// bob, who must be told the task does not exist.
func probeAsBob(t *testing.T, s a2a.Service, tasks []*a2a.Task, cfgs map[string]string) {
	for _, tk := range tasks {
		for _, o := range operations(s, tk.Id, cfgs[tk.Id]) {
			switch o.name {
			case "SendMessage", "SendStreamingMessage", "ListTasks", "GetExtendedAgentCard":
				continue // not about alice's task
			}
			t.Run(short(state(tk))+"/"+o.name, func(t *testing.T) {
				wantErr(t, "bob", o.call(as(t, "bob")), a2a.ErrTaskNotFound)
			})
		}
	}
}

// listIDs returns the sorted ids of the tasks who sees in ListTasks.
func listIDs(t *testing.T, s a2a.Service, who string) []string {
	res, err := s.ListTasks(as(t, who), &a2a.ListTasksRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tk := range res.Tasks {
		out = append(out, tk.Id)
	}
	sort.Strings(out)
	return out
}

// gateStore lets a test hold a GetTask call inside the store.
type gateStore struct {
	taskstore.Store
	onGet func(sc taskstore.Scope, id string)
}

func (g *gateStore) GetTask(ctx context.Context, sc taskstore.Scope, id string) (*a2a.Task, error) {
	g.onGet(sc, id)
	return g.Store.GetTask(ctx, sc, id)
}

// TestOwnerNotLockedOutByProbe: another principal touching a task id must
// not affect the owner. While bob's CancelTask of alice's task id is held
// inside the store lookup, alice's own SubscribeToTask of that task goes
// ahead on its own (the live-task registry is per scope) and finds it.
func TestOwnerNotLockedOutByProbe(t *testing.T) {
	t.Parallel()
	var target atomic.Pointer[string]
	bobIn, bobGo, aliceIn := make(chan struct{}), make(chan struct{}), make(chan struct{})
	var bobOnce, aliceOnce sync.Once
	store := &gateStore{Store: memstore.New(), onGet: func(sc taskstore.Scope, id string) {
		if p := target.Load(); p == nil || *p != id {
			return
		}
		switch sc.Owner {
		case "bob":
			bobOnce.Do(func() { close(bobIn); <-bobGo })
		case "alice":
			aliceOnce.Do(func() { close(aliceIn) })
		}
	}}
	s := newServer(t, server.Options{RequireAuth: true, Store: store})
	task := sendTask(t, s, as(t, "alice"), "input-required")
	settle(t, s, "alice", task.Id) // nothing of alice's is live any more
	target.Store(&task.Id)

	bobRes := make(chan error, 1)
	go func() {
		_, err := s.CancelTask(as(t, "bob"), &a2a.CancelTaskRequest{Id: task.Id})
		bobRes <- err
	}()
	<-bobIn // bob's probe is inside the store lookup
	aliceRes := make(chan error, 1)
	go func() {
		for _, err := range s.SubscribeToTask(as(t, "alice"), &a2a.SubscribeToTaskRequest{Id: task.Id}) {
			aliceRes <- err
			return
		}
		aliceRes <- errors.New("empty stream")
	}()
	select {
	case <-aliceIn: // alice looks up her own task, independently of bob
	case err := <-aliceRes:
		if err != nil {
			t.Errorf("alice's SubscribeToTask during bob's probe: %v", err)
		}
	case <-time.After(3 * time.Second):
		t.Errorf("alice's SubscribeToTask waited on bob's probe of her task id")
	}
	close(bobGo)
	wantErr(t, "bob's CancelTask", <-bobRes, a2a.ErrTaskNotFound)
	if err := <-aliceRes; err != nil {
		t.Errorf("alice's SubscribeToTask of her own task: %v", err)
	}
}

func TestScopingByTenant(t *testing.T) {
	t.Parallel()
	s := newServer(t, server.Options{RequireAuth: true})
	req := msgReq("input-required")
	req.Tenant = "t1"
	task := taskOf(t)(s.SendMessage(as(t, "alice"), req))

	if _, err := s.GetTask(as(t, "alice"), &a2a.GetTaskRequest{Id: task.Id, Tenant: "t1"}); err != nil {
		t.Fatalf("GetTask in its tenant: %v", err)
	}
	for _, tenant := range []string{"", "t2"} {
		_, err := s.GetTask(as(t, "alice"), &a2a.GetTaskRequest{Id: task.Id, Tenant: tenant})
		wantErr(t, "GetTask in tenant "+tenant, err, a2a.ErrTaskNotFound)
		_, err = s.CancelTask(as(t, "alice"), &a2a.CancelTaskRequest{Id: task.Id, Tenant: tenant})
		wantErr(t, "CancelTask in tenant "+tenant, err, a2a.ErrTaskNotFound)
		f := followReq(task.Id, "more")
		f.Tenant = tenant
		_, err = s.SendMessage(as(t, "alice"), f)
		wantErr(t, "SendMessage in tenant "+tenant, err, a2a.ErrTaskNotFound)
		for _, err := range s.SubscribeToTask(as(t, "alice"), &a2a.SubscribeToTaskRequest{Id: task.Id, Tenant: tenant}) {
			wantErr(t, "SubscribeToTask in tenant "+tenant, err, a2a.ErrTaskNotFound)
			break
		}
		_, err = s.CreateTaskPushNotificationConfig(as(t, "alice"), &a2a.TaskPushNotificationConfig{TaskId: task.Id, Tenant: tenant, Url: "https://h.example/"})
		wantErr(t, "CreateTaskPushNotificationConfig in tenant "+tenant, err, a2a.ErrTaskNotFound)
		res, err := s.ListTasks(as(t, "alice"), &a2a.ListTasksRequest{Tenant: tenant})
		if err != nil || len(res.Tasks) != 0 || res.TotalSize != 0 {
			t.Errorf("ListTasks in tenant %q = %v, %v; want nothing", tenant, res, err)
		}
	}
	res, err := s.ListTasks(as(t, "alice"), &a2a.ListTasksRequest{Tenant: "t1"})
	if err != nil || len(res.Tasks) != 1 || res.Tasks[0].Id != task.Id {
		t.Errorf("ListTasks in t1 = %v, %v", res, err)
	}
}
