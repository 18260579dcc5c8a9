package equivalence_test

import (
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/server"
)

// What the scenario tables are written with: server configurations,
// credentials, request builders, outcome accessors and checks.

// unknownTask is the id of a task that does not exist.
const unknownTask = "no-such-task"

// Server configurations.
var (
	plain       = config{}
	tokens      = map[string]string{"tok-alice": "alice", "tok-bob": "bob"}
	authed      = config{tokens: tokens}
	noStreaming = config{mutate: func(c *a2a.AgentCard, _ *server.Options) { c.Capabilities.Streaming = nil }}
	noPush      = config{mutate: func(c *a2a.AgentCard, _ *server.Options) { c.Capabilities.PushNotifications = nil }}
	extensions  = config{mutate: func(c *a2a.AgentCard, _ *server.Options) {
		c.Capabilities.Extensions = []*a2a.AgentExtension{{Uri: extRequired, Required: true}, {Uri: extOptional}}
	}}
	extendedDeclared = config{tokens: tokens, mutate: func(c *a2a.AgentCard, _ *server.Options) {
		c.Capabilities.ExtendedAgentCard = proto.Bool(true)
	}}
	extendedConfigured = config{tokens: tokens, mutate: func(c *a2a.AgentCard, o *server.Options) {
		c.Capabilities.ExtendedAgentCard = proto.Bool(true)
		x := proto.Clone(c).(*a2a.AgentCard)
		x.Name = "Extended"
		o.ExtendedCard = x
	}}
	failing = config{failID: "store-failure"}
	small   = config{maxBody: 64 << 10}
)

const (
	extRequired = "https://example.com/ext/required/v1"
	extOptional = "https://example.com/ext/optional/v1"
)

var (
	alice         = callOpts{token: "tok-alice"}
	bob           = callOpts{token: "tok-bob"}
	allExtensions = callOpts{extensions: extRequired + ", " + extOptional + ", https://unknown.example/x"}
)

func version(v string) callOpts { return callOpts{version: &v} }

// Request builders.

func userMessage(text string) *a2a.Message {
	return &a2a.Message{MessageId: a2a.NewID(), Role: a2a.Role_ROLE_USER, Parts: []*a2a.Part{{Content: &a2a.Part_Text{Text: text}}}}
}

func send(text string) *a2a.SendMessageRequest {
	return &a2a.SendMessageRequest{Message: userMessage(text)}
}

func sendTo(taskID, text string) *a2a.SendMessageRequest {
	r := send(text)
	r.Message.TaskId = taskID
	return r
}

func withConfig(r *a2a.SendMessageRequest, cfg *a2a.SendMessageConfiguration) *a2a.SendMessageRequest {
	r.Configuration = cfg
	return r
}

func immediately(text string) *a2a.SendMessageRequest {
	return withConfig(send(text), &a2a.SendMessageConfiguration{ReturnImmediately: true})
}

func getTask(id string) *a2a.GetTaskRequest { return &a2a.GetTaskRequest{Id: id} }

func cancelTask(id string) *a2a.CancelTaskRequest { return &a2a.CancelTaskRequest{Id: id} }

func subscribe(id string) *a2a.SubscribeToTaskRequest { return &a2a.SubscribeToTaskRequest{Id: id} }

func pushConfig(taskID, url string) *a2a.TaskPushNotificationConfig {
	return &a2a.TaskPushNotificationConfig{TaskId: taskID, Url: url}
}

// Outcome accessors.

func taskOf(o outcome) *a2a.Task {
	switch v := o.value.(type) {
	case *a2a.SendMessageResponse:
		return v.GetTask()
	case *a2a.Task:
		return v
	}
	return nil
}

func state(o outcome) a2a.TaskState { return taskOf(o).GetStatus().GetState() }

func lastEvent(o outcome) *a2a.StreamResponse {
	if len(o.events) == 0 {
		return nil
	}
	return o.events[len(o.events)-1]
}

func kinds(events []*a2a.StreamResponse) string {
	var k []string
	for _, ev := range events {
		switch {
		case ev.GetTask() != nil:
			k = append(k, "task")
		case ev.GetMessage() != nil:
			k = append(k, "message")
		case ev.GetStatusUpdate() != nil:
			k = append(k, "status:"+strings.TrimPrefix(ev.GetStatusUpdate().GetStatus().GetState().String(), "TASK_STATE_"))
		case ev.GetArtifactUpdate() != nil:
			k = append(k, "artifact")
		}
	}
	return strings.Join(k, " ")
}

func wantState(s a2a.TaskState) func(t *testing.T, o outcome) {
	return func(t *testing.T, o outcome) {
		t.Helper()
		if got := state(o); got != s {
			t.Fatalf("state %v, want %v", got, s)
		}
	}
}

func wantKinds(k string) func(t *testing.T, o outcome) {
	return func(t *testing.T, o outcome) {
		t.Helper()
		if got := kinds(o.events); got != k {
			t.Fatalf("events %q, want %q", got, k)
		}
	}
}

// openUntil opens a stream and reads it until an event satisfies stop.
func openUntil(c *caller, method string, req proto.Message, stop func(*a2a.StreamResponse) bool, o ...callOpts) *stream {
	c.t.Helper()
	s := c.open(method, req, o...)
	for {
		ev := s.next()
		if ev == nil {
			c.t.Fatalf("%s over %s ended (%v) before the awaited event; events %q", method, c.b, s.out.err, kinds(s.out.events))
		}
		if stop(ev) {
			return s
		}
	}
}

func isState(st a2a.TaskState) func(*a2a.StreamResponse) bool {
	return func(ev *a2a.StreamResponse) bool {
		return ev.GetStatusUpdate().GetStatus().GetState() == st || ev.GetTask().GetStatus().GetState() == st
	}
}

// stillOpen checks that a stream delivers nothing more and stays open for
// a while (docs/decisions.md#b2: AUTH_REQUIRED keeps a stream open).
func stillOpen(c *caller, s *stream) {
	c.t.Helper()
	got := s.readAhead()
	select {
	case r := <-got:
		c.t.Fatalf("the stream went on (%v, end error %v); it must stay open and quiet", r.ev, r.err)
	case <-time.After(300 * time.Millisecond):
	}
}

func wantChallenge(t *testing.T, o outcome) {
	t.Helper()
	if !strings.HasPrefix(o.challenge, "Bearer") {
		t.Fatalf("WWW-Authenticate %q, want a Bearer challenge", o.challenge)
	}
}

func noEvents(t *testing.T, o outcome) {
	t.Helper()
	if len(o.events) > 0 {
		t.Fatalf("%d events before the error", len(o.events))
	}
}

func historyLen(n int) func(t *testing.T, o outcome) {
	return func(t *testing.T, o outcome) {
		t.Helper()
		if h := taskOf(o).GetHistory(); len(h) != n {
			t.Fatalf("history has %d messages, want %d", len(h), n)
		}
	}
}

// threeMessages returns a task whose history holds three messages: the
// user's, the agent's INPUT_REQUIRED status message, and a follow-up.
func threeMessages(c *caller) string {
	id := c.task(send("input-required")).GetId()
	c.task(sendTo(id, "follow-up"))
	return id
}

// withPushConfig returns a task with one push configuration.
func withPushConfig(c *caller) (taskID, configID string) {
	id := c.task(send("input-required")).GetId()
	out := c.ok("CreateTaskPushNotificationConfig", pushConfig(id, "https://hooks.example.com/a"))
	return id, out.value.(*a2a.TaskPushNotificationConfig).GetId()
}
