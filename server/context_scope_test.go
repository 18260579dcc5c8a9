package server_test

// Contexts are scoped like tasks (docs/decisions.md#b12): one contextId
// sent by two principals, or in two tenants, names two contexts. Tested
// over the wire, on every binding and every store, with bearer tokens.

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
	"parley.dev/parley/internal/agents"
	"parley.dev/parley/internal/pgtest"
	"parley.dev/parley/internal/testkit"
	"parley.dev/parley/server"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/memstore"
	"parley.dev/parley/taskstore/pgstore"
	"parley.dev/parley/taskstore/sqlitestore"
)

// scopeStores are the stores the wire tests of scoping run on; PostgreSQL
// is skipped without PARLEY_TEST_POSTGRES.
var scopeStores = []struct {
	name string
	open func(t *testing.T) taskstore.Store
}{
	{"memory", func(t *testing.T) taskstore.Store { return memstore.New() }},
	{"sqlite", func(t *testing.T) taskstore.Store {
		st, err := sqlitestore.Open(filepath.Join(t.TempDir(), "parley.db"))
		if err != nil {
			t.Fatal(err)
		}
		return st
	}},
	{"postgres", func(t *testing.T) taskstore.Store {
		ctx, cancel := context.WithTimeout(context.Background(), guard)
		defer cancel()
		st, err := pgstore.Open(ctx, pgtest.NewDatabase(t), nil)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}},
}

// scopeBindings are the client transports of the wire tests of scoping.
var scopeBindings = []struct {
	name string
	f    func() client.TransportFactory
}{{"JSONRPC", client.JSONRPC}, {"HTTP+JSON", client.REST}, {"GRPC", client.GRPC}}

// agentViews records what the agent was handed for each message, by
// messageId.
type agentViews struct {
	mu sync.Mutex
	m  map[string]agentView
}

type agentView struct {
	key     server.ContextKey
	taskID  string   // the task the message went to
	history []string // messageIds of the task's history the agent was handed
}

func (v *agentViews) agent() server.Agent {
	return server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		view := agentView{key: req.Context(), taskID: req.TaskID}
		for _, m := range req.Task.GetHistory() {
			view.history = append(view.history, m.GetMessageId())
		}
		v.mu.Lock()
		v.m[req.Message.GetMessageId()] = view
		v.mu.Unlock()
		return agents.Conformance().Execute(ctx, req, em)
	})
}

func (v *agentViews) of(t *testing.T, msgID string) agentView {
	t.Helper()
	v.mu.Lock()
	defer v.mu.Unlock()
	view, ok := v.m[msgID]
	if !ok {
		t.Fatalf("the agent never saw message %s", msgID)
	}
	return view
}

func TestContextScopedByOwner(t *testing.T) {
	t.Parallel()
	for _, st := range scopeStores {
		for _, b := range scopeBindings {
			t.Run(st.name+"/"+b.name, func(t *testing.T) {
				t.Parallel()
				store := st.open(t)
				t.Cleanup(func() { store.Close() }) // after the server's own cleanup
				views := &agentViews{m: map[string]agentView{}}
				srv := testkit.StartServer(t, &testkit.Options{Quiet: true, Store: store, Agent: views.agent(),
					Tokens: map[string]string{"tok-alice": "alice", "tok-bob": "bob"}})
				contextScoping(t, srv, b.f(), views)
			})
		}
	}
}

// contextScoping runs the scenario: alice and bob (and alice in a second
// tenant) use one contextId.
func contextScoping(t *testing.T, srv *testkit.Server, f client.TransportFactory, views *agentViews) {
	connect := func(token, tenant string) *client.Client {
		card := proto.Clone(srv.Card).(*a2a.AgentCard)
		for _, in := range card.SupportedInterfaces {
			in.Tenant = tenant
		}
		c, err := client.New(card, &client.Options{BearerToken: token, Transports: []client.TransportFactory{f},
			HTTPClient: testkit.H2CClient()})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	alice, bob, alice2 := connect("tok-alice", ""), connect("tok-bob", ""), connect("tok-alice", "t2")
	ctxID := "ctx-" + a2a.NewID()
	send := func(c *client.Client, taskID, text string) *a2a.Task {
		t.Helper()
		m := a2a.UserMessage(text)
		m.TaskId, m.ContextId = taskID, ctxID
		resp, err := c.SendMessage(as(t, ""), &a2a.SendMessageRequest{Message: m})
		if err != nil || resp.GetTask() == nil {
			t.Fatalf("SendMessage(%q) = %v, %v; want a task", text, resp, err)
		}
		return resp.GetTask()
	}
	list := func(c *client.Client, contextID string) []string {
		t.Helper()
		res, err := c.ListTasks(as(t, ""), &a2a.ListTasksRequest{ContextId: contextID})
		if err != nil {
			t.Fatal(err)
		}
		if int(res.GetTotalSize()) != len(res.GetTasks()) {
			t.Errorf("ListTasks(%s): totalSize %d for %d tasks", contextID, res.GetTotalSize(), len(res.GetTasks()))
		}
		var ids []string
		for _, tk := range res.GetTasks() {
			ids = append(ids, tk.GetId())
		}
		return ids
	}

	taskA := send(alice, "", "input-required")
	// Bob's view of a contextId alice uses is the view of an unused one.
	if got, unused := list(bob, ctxID), list(bob, "ctx-"+a2a.NewID()); len(got) != 0 || len(unused) != 0 {
		t.Errorf("bob lists %v in alice's context id, %v in an unused one; want nothing in both", got, unused)
	}
	taskB := send(bob, "", "input-required")
	if taskB.GetId() == taskA.GetId() || taskB.GetContextId() != ctxID || state(taskB) != a2a.TaskState_TASK_STATE_INPUT_REQUIRED {
		t.Fatalf("bob's task %s in context %s (%s); want a new task of his own in context %s",
			taskB.GetId(), taskB.GetContextId(), short(state(taskB)), ctxID)
	}
	for _, m := range taskB.GetHistory() {
		if m.GetMessageId() == taskA.GetHistory()[0].GetMessageId() {
			t.Errorf("bob's task shows alice's message %s", m.GetMessageId())
		}
	}
	taskA2 := send(alice2, "", "input-required")

	// ListTasks by contextId: each caller sees only the tasks of his own scope.
	for _, c := range []struct {
		who  string
		c    *client.Client
		want []string
	}{{"alice", alice, []string{taskA.GetId()}}, {"bob", bob, []string{taskB.GetId()}}, {"alice in tenant t2", alice2, []string{taskA2.GetId()}}} {
		if got := list(c.c, ctxID); !slices.Equal(got, c.want) {
			t.Errorf("%s lists %v in context %s, want %v", c.who, got, ctxID, c.want)
		}
	}

	// Bob's follow-up naming alice's task is told it does not exist; his
	// own completes his task, and the agent is handed only his history.
	m := a2a.UserMessage("bob's answer")
	m.TaskId, m.ContextId = taskA.GetId(), ctxID
	if _, err := bob.SendMessage(as(t, ""), &a2a.SendMessageRequest{Message: m}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("bob's follow-up on alice's task: err = %v, want TaskNotFound", err)
	}
	doneB := send(bob, taskB.GetId(), "bob's answer")
	doneA := send(alice, taskA.GetId(), "alice's answer")
	if state(doneB) != a2a.TaskState_TASK_STATE_COMPLETED || state(doneA) != a2a.TaskState_TASK_STATE_COMPLETED {
		t.Fatalf("follow-ups: bob's task %s, alice's %s; want both COMPLETED", short(state(doneB)), short(state(doneA)))
	}
	if got, want := textOf(doneA), "alice's answer"; got != want {
		t.Errorf("alice's task ended with %q, want %q", got, want)
	}

	// The agent's view: each message in its caller's context, with only
	// that caller's messages.
	keys := map[string]server.ContextKey{}
	for _, c := range []struct {
		who, tenant, principal string
		tasks                  []*a2a.Task
	}{{"alice", "", "alice", []*a2a.Task{taskA, doneA}}, {"bob", "", "bob", []*a2a.Task{taskB, doneB}}, {"alice2", "t2", "alice", []*a2a.Task{taskA2}}} {
		want := server.ContextKey{Tenant: c.tenant, Principal: c.principal, ContextID: ctxID}
		keys[fmt.Sprint(want)] = want
		own := map[string]bool{}
		for _, tk := range c.tasks {
			for _, hm := range tk.GetHistory() {
				if hm.GetRole() == a2a.Role_ROLE_USER {
					own[hm.GetMessageId()] = true
				}
			}
		}
		for id := range own {
			v := views.of(t, id)
			if v.key != want {
				t.Errorf("%s's message %s: the agent was handed context %+v, want %+v", c.who, id, v.key, want)
			}
			for _, h := range v.history {
				if !own[h] && !agentMessage(c.tasks, h) {
					t.Errorf("%s's message %s: the agent was handed message %s, not %s's", c.who, id, h, c.who)
				}
			}
		}
	}
	if len(keys) != 3 {
		t.Errorf("the three callers' contexts have %d keys, want 3", len(keys))
	}
}

// agentMessage reports whether id is an agent message of one of tasks.
func agentMessage(tasks []*a2a.Task, id string) bool {
	for _, tk := range tasks {
		for _, m := range append(tk.GetHistory(), tk.GetStatus().GetMessage()) {
			if m.GetMessageId() == id && m.GetRole() == a2a.Role_ROLE_AGENT {
				return true
			}
		}
	}
	return false
}

// textOf is the text of the task's first artifact.
func textOf(tk *a2a.Task) string {
	for _, a := range tk.GetArtifacts() {
		for _, p := range a.GetParts() {
			if s := p.GetText(); s != "" {
				return s
			}
		}
	}
	return ""
}
