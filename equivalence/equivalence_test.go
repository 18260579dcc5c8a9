package equivalence_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"parley.dev/parley/a2a"
	"parley.dev/parley/server"
)

// scenario is one row of the equivalence table: a server configuration,
// the calls that set the scene and the call under test (run, which returns
// the outcome of the latter), and the outcome every binding must produce.
type scenario struct {
	op   string // the operation under test
	name string
	cfg  config
	run  func(c *caller) outcome
	want want
	// skip names bindings the scenario cannot be expressed on, and why.
	skip map[string]string
}

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

func getTask(id string) *a2a.GetTaskRequest           { return &a2a.GetTaskRequest{Id: id} }
func cancelTask(id string) *a2a.CancelTaskRequest     { return &a2a.CancelTaskRequest{Id: id} }
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
// a while (DESIGN B2: AUTH_REQUIRED keeps a stream open).
func stillOpen(c *caller, s *stream) {
	c.t.Helper()
	got := s.readAhead()
	select {
	case r := <-got:
		c.t.Fatalf("the stream went on (%v, end error %v); it must stay open and quiet", r.ev, r.err)
	case <-time.After(300 * time.Millisecond):
	}
}

// scenarios is the equivalence table.
func scenarios() []scenario {
	const unknown = "no-such-task"
	return []scenario{
		// ----- SendMessage
		{op: "SendMessage", name: "completed-task", run: func(c *caller) outcome {
			return c.call("SendMessage", send("hello"))
		}, want: want{check: func(t *testing.T, o outcome) {
			task := taskOf(o)
			if task.GetStatus().GetState() != a2a.TaskState_TASK_STATE_COMPLETED || a2a.JoinText(task.GetArtifacts()[0].GetParts()) != "hello" {
				t.Fatalf("task %v", task)
			}
			if h := task.GetHistory(); len(h) != 1 || h[0].GetTaskId() != task.GetId() || h[0].GetContextId() != task.GetContextId() {
				t.Fatalf("stored message %v", h)
			}
			if task.GetStatus().GetTimestamp() == nil {
				t.Fatal("no status timestamp")
			}
		}}},
		{op: "SendMessage", name: "direct-message", run: func(c *caller) outcome {
			return c.call("SendMessage", send("message"))
		}, want: want{check: func(t *testing.T, o outcome) {
			m := o.value.(*a2a.SendMessageResponse).GetMessage()
			if m.GetRole() != a2a.Role_ROLE_AGENT || a2a.FirstText(m) != "pong" || m.GetContextId() == "" {
				t.Fatalf("reply %v", o.value)
			}
		}}},
		{op: "SendMessage", name: "input-required", run: func(c *caller) outcome {
			return c.call("SendMessage", send("input-required"))
		}, want: want{check: wantState(a2a.TaskState_TASK_STATE_INPUT_REQUIRED)}},
		{op: "SendMessage", name: "auth-required", run: func(c *caller) outcome {
			return c.call("SendMessage", send("auth-required"))
		}, want: want{check: wantState(a2a.TaskState_TASK_STATE_AUTH_REQUIRED)}},
		{op: "SendMessage", name: "rejected", run: func(c *caller) outcome {
			return c.call("SendMessage", send("reject"))
		}, want: want{check: wantState(a2a.TaskState_TASK_STATE_REJECTED)}},
		{op: "SendMessage", name: "failed", run: func(c *caller) outcome {
			return c.call("SendMessage", send("fail"))
		}, want: want{check: wantState(a2a.TaskState_TASK_STATE_FAILED)}},
		{op: "SendMessage", name: "return-immediately", run: func(c *caller) outcome {
			out := c.ok("SendMessage", immediately("slow 5000"))
			if st := state(out); st != a2a.TaskState_TASK_STATE_SUBMITTED && st != a2a.TaskState_TASK_STATE_WORKING {
				c.t.Fatalf("state %v, want an active state", st)
			}
			return c.call("CancelTask", cancelTask(taskOf(out).GetId()))
		}, want: want{check: wantState(a2a.TaskState_TASK_STATE_CANCELED)}},
		{op: "SendMessage", name: "B9-follow-up-infers-context", run: func(c *caller) outcome {
			first := c.task(send("input-required"))
			return c.call("SendMessage", sendTo(first.GetId(), "follow-up"))
		}, want: want{check: func(t *testing.T, o outcome) {
			task := taskOf(o)
			h := task.GetHistory()
			if task.GetStatus().GetState() != a2a.TaskState_TASK_STATE_COMPLETED || len(h) != 3 || h[2].GetContextId() != task.GetContextId() {
				t.Fatalf("follow-up %v", task)
			}
		}}},
		{op: "SendMessage", name: "B4-history-length-1", run: func(c *caller) outcome {
			first := c.task(send("input-required"))
			return c.call("SendMessage", withConfig(sendTo(first.GetId(), "follow-up"), &a2a.SendMessageConfiguration{HistoryLength: proto.Int32(1)}))
		}, want: want{check: func(t *testing.T, o outcome) {
			if h := taskOf(o).GetHistory(); len(h) != 1 || a2a.FirstText(h[0]) != "follow-up" {
				t.Fatalf("history %v", h)
			}
		}}},
		{op: "SendMessage", name: "B4-history-length-0", run: func(c *caller) outcome {
			return c.call("SendMessage", withConfig(send("hello"), &a2a.SendMessageConfiguration{HistoryLength: proto.Int32(0)}))
		}, want: want{check: func(t *testing.T, o outcome) {
			if h := taskOf(o).GetHistory(); len(h) != 0 {
				t.Fatalf("history %v", h)
			}
		}}},
		{op: "SendMessage", name: "B4-negative-history-length", run: func(c *caller) outcome {
			return c.call("SendMessage", withConfig(send("hello"), &a2a.SendMessageConfiguration{HistoryLength: proto.Int32(-1)}))
		}, want: want{code: a2a.CodeInvalidParams, fields: []string{"configuration.historyLength"}}},
		{op: "SendMessage", name: "unknown-task", run: func(c *caller) outcome {
			return c.call("SendMessage", sendTo(unknown, "x"))
		}, want: want{code: a2a.CodeTaskNotFound}},
		{op: "SendMessage", name: "B6-terminal-task", run: func(c *caller) outcome {
			done := c.task(send("hello"))
			return c.call("SendMessage", sendTo(done.GetId(), "more"))
		}, want: want{code: a2a.CodeUnsupportedOperation}},
		{op: "SendMessage", name: "B10-context-mismatch", run: func(c *caller) outcome {
			done := c.task(send("hello"))
			r := sendTo(done.GetId(), "more")
			r.Message.ContextId = "another-context"
			return c.call("SendMessage", r)
		}, want: want{code: a2a.CodeInvalidParams, fields: []string{"message.contextId"}}},
		{op: "SendMessage", name: "content-type-not-supported", run: func(c *caller) outcome {
			r := send("x")
			r.Message.Parts = []*a2a.Part{{Content: &a2a.Part_Raw{Raw: []byte{0, 1, 2}}, MediaType: "image/png"}}
			return c.call("SendMessage", r)
		}, want: want{code: a2a.CodeContentTypeNotSupported}},
		{op: "SendMessage", name: "no-message", run: func(c *caller) outcome {
			return c.call("SendMessage", &a2a.SendMessageRequest{})
		}, want: want{code: a2a.CodeInvalidParams, fields: []string{"message"}}},
		{op: "SendMessage", name: "no-parts", run: func(c *caller) outcome {
			r := send("x")
			r.Message.Parts = nil
			return c.call("SendMessage", r)
		}, want: want{code: a2a.CodeInvalidParams, fields: []string{"message.parts"}}},
		{op: "SendMessage", name: "empty-part", run: func(c *caller) outcome {
			r := send("x")
			r.Message.Parts = []*a2a.Part{{}}
			return c.call("SendMessage", r)
		}, want: want{code: a2a.CodeInvalidParams, fields: []string{"message.parts[0]"}}},
		{op: "SendMessage", name: "agent-role", run: func(c *caller) outcome {
			r := send("x")
			r.Message.Role = a2a.Role_ROLE_AGENT
			return c.call("SendMessage", r)
		}, want: want{code: a2a.CodeInvalidParams, fields: []string{"message.role"}}},
		{op: "SendMessage", name: "bad-push-url", run: func(c *caller) outcome {
			return c.call("SendMessage", withConfig(send("x"), &a2a.SendMessageConfiguration{TaskPushNotificationConfig: &a2a.TaskPushNotificationConfig{Url: "ftp://x"}}))
		}, want: want{code: a2a.CodeInvalidParams}},
		{op: "SendMessage", name: "push-not-supported", cfg: noPush, run: func(c *caller) outcome {
			return c.call("SendMessage", withConfig(send("x"), &a2a.SendMessageConfiguration{TaskPushNotificationConfig: pushConfig("", "https://x.example")}))
		}, want: want{code: a2a.CodePushNotificationNotSupported}},
		{op: "SendMessage", name: "B14-resend", run: func(c *caller) outcome {
			r := send("hello")
			first := c.task(r)
			out := c.call("SendMessage", r)
			if taskOf(out).GetId() != first.GetId() {
				c.t.Fatalf("a resend created task %s, the original is %s", taskOf(out).GetId(), first.GetId())
			}
			return out
		}, want: want{check: func(t *testing.T, o outcome) {
			if n := len(taskOf(o).GetHistory()); n != 1 {
				t.Fatalf("history has %d messages after a resend", n)
			}
		}}},
		{op: "SendMessage", name: "B14-resend-changed", run: func(c *caller) outcome {
			r := send("hello")
			c.task(r)
			r.Message.Parts[0].Content = &a2a.Part_Text{Text: "changed"}
			return c.call("SendMessage", r)
		}, want: want{code: a2a.CodeInvalidParams}},
		{op: "SendMessage", name: "unauthenticated", cfg: authed, run: func(c *caller) outcome {
			return c.call("SendMessage", send("hi"))
		}, want: want{code: a2a.CodeUnauthenticated, check: wantChallenge}},
		{op: "SendMessage", name: "wrong-token", cfg: authed, run: func(c *caller) outcome {
			return c.call("SendMessage", send("hi"), callOpts{token: "wrong"})
		}, want: want{code: a2a.CodeUnauthenticated, check: wantChallenge}},
		{op: "SendMessage", name: "B12-other-principal", cfg: authed, run: func(c *caller) outcome {
			task := c.task(send("input-required"), alice)
			return c.call("SendMessage", sendTo(task.GetId(), "x"), bob)
		}, want: want{code: a2a.CodeTaskNotFound}},
		{op: "SendMessage", name: "B7-version-missing", run: func(c *caller) outcome {
			return c.call("SendMessage", send("hi"), version(""))
		}, want: want{code: a2a.CodeVersionNotSupported, meta: map[string]string{"supportedVersions": "1.0"}}},
		{op: "SendMessage", name: "B7-version-0.3", run: func(c *caller) outcome {
			return c.call("SendMessage", send("hi"), version("0.3"))
		}, want: want{code: a2a.CodeVersionNotSupported, meta: map[string]string{"supportedVersions": "1.0"}}},
		{op: "SendMessage", name: "B7-version-2.0", run: func(c *caller) outcome {
			return c.call("SendMessage", send("hi"), version("2.0"))
		}, want: want{code: a2a.CodeVersionNotSupported}},
		{op: "SendMessage", name: "B7-patch-ignored", run: func(c *caller) outcome {
			return c.call("SendMessage", send("hi"), version("1.0.7"))
		}, want: want{check: wantState(a2a.TaskState_TASK_STATE_COMPLETED)}},
		{op: "SendMessage", name: "extension-required", cfg: extensions, run: func(c *caller) outcome {
			return c.call("SendMessage", send("hi"))
		}, want: want{code: a2a.CodeExtensionSupportRequired, meta: map[string]string{"extensions": extRequired}}},
		{op: "SendMessage", name: "extensions-echoed", cfg: extensions, run: func(c *caller) outcome {
			return c.call("SendMessage", send("hi"), allExtensions)
		}, want: want{check: func(t *testing.T, o outcome) {
			if o.extensions != extRequired+", "+extOptional {
				t.Fatalf("A2A-Extensions echo %q", o.extensions)
			}
		}}},
		{op: "SendMessage", name: "too-large", cfg: small, run: func(c *caller) outcome {
			out := c.call("SendMessage", send(strings.Repeat("x", 100<<10)))
			c.ok("SendMessage", send("still serving"))
			return out
		}, want: want{code: a2a.CodeRequestTooLarge, anyMessage: true}},

		// ----- SendStreamingMessage
		{op: "SendStreamingMessage", name: "chunks", run: func(c *caller) outcome {
			return c.call("SendStreamingMessage", send("stream 3"))
		}, want: want{check: func(t *testing.T, o outcome) {
			wantKinds("task status:WORKING artifact artifact artifact status:COMPLETED")(t, o)
			for i := range 3 {
				a := o.events[2+i].GetArtifactUpdate()
				if a2a.JoinText(a.GetArtifact().GetParts()) != fmt.Sprintf("chunk %d", i) || a.GetAppend() != (i > 0) || a.GetLastChunk() != (i == 2) {
					t.Fatalf("chunk %d: %v", i, a)
				}
			}
		}}},
		{op: "SendStreamingMessage", name: "direct-message", run: func(c *caller) outcome {
			return c.call("SendStreamingMessage", send("message"))
		}, want: want{check: wantKinds("message")}},
		{op: "SendStreamingMessage", name: "B2-input-required-closes", run: func(c *caller) outcome {
			return c.call("SendStreamingMessage", send("input-required"))
		}, want: want{check: wantKinds("task status:INPUT_REQUIRED")}},
		{op: "SendStreamingMessage", name: "B2-auth-required-stays-open", run: func(c *caller) outcome {
			s := openUntil(c, "SendStreamingMessage", send("auth-required"), isState(a2a.TaskState_TASK_STATE_AUTH_REQUIRED))
			stillOpen(c, s)
			c.ok("CancelTask", cancelTask(s.out.events[0].GetTask().GetId()))
			return s.drain()
		}, want: want{check: wantKinds("task status:AUTH_REQUIRED status:CANCELED")}},
		{op: "SendStreamingMessage", name: "B11-append-to-unknown-artifact", run: func(c *caller) outcome {
			out := c.ok("SendStreamingMessage", send("append-unknown"))
			return c.call("GetTask", getTask(out.events[0].GetTask().GetId()))
		}, want: want{check: func(t *testing.T, o outcome) {
			a := taskOf(o).GetArtifacts()
			if len(a) != 1 || a[0].GetArtifactId() != "never-sent" || a2a.JoinText(a[0].GetParts()) != "appended" {
				t.Fatalf("artifacts %v", a)
			}
		}}},
		{op: "SendStreamingMessage", name: "B4-snapshot-history-length", run: func(c *caller) outcome {
			first := c.task(send("input-required"))
			return c.call("SendStreamingMessage", withConfig(sendTo(first.GetId(), "follow-up"), &a2a.SendMessageConfiguration{HistoryLength: proto.Int32(1)}))
		}, want: want{check: func(t *testing.T, o outcome) {
			if h := o.events[0].GetTask().GetHistory(); len(h) != 1 {
				t.Fatalf("snapshot history %v", h)
			}
			if lastEvent(o).GetStatusUpdate().GetStatus().GetState() != a2a.TaskState_TASK_STATE_COMPLETED {
				t.Fatalf("events %q", kinds(o.events))
			}
		}}},
		{op: "SendStreamingMessage", name: "not-declared", cfg: noStreaming, run: func(c *caller) outcome {
			return c.call("SendStreamingMessage", send("hi"))
		}, want: want{code: a2a.CodeUnsupportedOperation, check: noEvents}},
		{op: "SendStreamingMessage", name: "unknown-task", run: func(c *caller) outcome {
			return c.call("SendStreamingMessage", sendTo(unknown, "x"))
		}, want: want{code: a2a.CodeTaskNotFound, check: noEvents}},
		{op: "SendStreamingMessage", name: "B6-terminal-task", run: func(c *caller) outcome {
			done := c.task(send("hello"))
			return c.call("SendStreamingMessage", sendTo(done.GetId(), "more"))
		}, want: want{code: a2a.CodeUnsupportedOperation, check: noEvents}},
		{op: "SendStreamingMessage", name: "content-type-not-supported", run: func(c *caller) outcome {
			r := send("x")
			r.Message.Parts = []*a2a.Part{{Content: &a2a.Part_Url{Url: "https://x.example/a.png"}, MediaType: "image/png"}}
			return c.call("SendStreamingMessage", r)
		}, want: want{code: a2a.CodeContentTypeNotSupported, check: noEvents}},
		{op: "SendStreamingMessage", name: "invalid", run: func(c *caller) outcome {
			r := send("x")
			r.Message.MessageId = ""
			return c.call("SendStreamingMessage", r)
		}, want: want{code: a2a.CodeInvalidParams, fields: []string{"message.messageId"}, check: noEvents}},
		{op: "SendStreamingMessage", name: "unauthenticated", cfg: authed, run: func(c *caller) outcome {
			return c.call("SendStreamingMessage", send("hi"))
		}, want: want{code: a2a.CodeUnauthenticated, check: wantChallenge}},
		{op: "SendStreamingMessage", name: "B7-version-missing", run: func(c *caller) outcome {
			return c.call("SendStreamingMessage", send("hi"), version(""))
		}, want: want{code: a2a.CodeVersionNotSupported, meta: map[string]string{"supportedVersions": "1.0"}}},
		{op: "SendStreamingMessage", name: "extensions-echoed", cfg: extensions, run: func(c *caller) outcome {
			return c.call("SendStreamingMessage", send("hi"), allExtensions)
		}, want: want{check: func(t *testing.T, o outcome) {
			if o.extensions != extRequired+", "+extOptional {
				t.Fatalf("A2A-Extensions echo %q", o.extensions)
			}
		}}},

		// ----- GetTask
		{op: "GetTask", name: "completed-task", run: func(c *caller) outcome {
			task := c.task(send("hello"))
			out := c.call("GetTask", getTask(task.GetId()))
			if !proto.Equal(taskOf(out), task) {
				c.t.Fatalf("GetTask differs from SendMessage's result:\n%v\n%v", taskOf(out), task)
			}
			return out
		}, want: want{check: wantState(a2a.TaskState_TASK_STATE_COMPLETED)}},
		{op: "GetTask", name: "B4-history-unset", run: func(c *caller) outcome {
			return c.call("GetTask", getTask(threeMessages(c)))
		}, want: want{check: historyLen(3)}},
		{op: "GetTask", name: "B4-history-0", run: func(c *caller) outcome {
			return c.call("GetTask", &a2a.GetTaskRequest{Id: threeMessages(c), HistoryLength: proto.Int32(0)})
		}, want: want{check: historyLen(0)}},
		{op: "GetTask", name: "B4-history-2", run: func(c *caller) outcome {
			return c.call("GetTask", &a2a.GetTaskRequest{Id: threeMessages(c), HistoryLength: proto.Int32(2)})
		}, want: want{check: func(t *testing.T, o outcome) {
			historyLen(2)(t, o)
			if a2a.FirstText(taskOf(o).GetHistory()[1]) != "follow-up" {
				t.Fatalf("not the most recent: %v", taskOf(o).GetHistory())
			}
		}}},
		{op: "GetTask", name: "B4-negative-history", run: func(c *caller) outcome {
			return c.call("GetTask", &a2a.GetTaskRequest{Id: threeMessages(c), HistoryLength: proto.Int32(-1)})
		}, want: want{code: a2a.CodeInvalidParams, fields: []string{"historyLength"}}},
		{op: "GetTask", name: "unknown-task", run: func(c *caller) outcome {
			return c.call("GetTask", getTask(unknown))
		}, want: want{code: a2a.CodeTaskNotFound, meta: map[string]string{"taskId": unknown}}},
		{op: "GetTask", name: "no-id", run: func(c *caller) outcome {
			return c.call("GetTask", getTask(""))
		}, want: want{code: a2a.CodeInvalidParams, fields: []string{"id"}},
			skip: map[string]string{restB: "an empty id cannot be written in the /tasks/{id} path"}},
		{op: "GetTask", name: "B12-other-principal", cfg: authed, run: func(c *caller) outcome {
			task := c.task(send("input-required"), alice)
			c.ok("GetTask", getTask(task.GetId()), alice)
			return c.call("GetTask", getTask(task.GetId()), bob)
		}, want: want{code: a2a.CodeTaskNotFound}},
		{op: "GetTask", name: "other-tenant", run: func(c *caller) outcome {
			task := c.task(send("input-required"))
			return c.call("GetTask", &a2a.GetTaskRequest{Id: task.GetId(), Tenant: "t2"})
		}, want: want{code: a2a.CodeTaskNotFound}},
		{op: "GetTask", name: "tenant", run: func(c *caller) outcome {
			r := send("input-required")
			r.Tenant = "acme"
			task := c.task(r)
			return c.call("GetTask", &a2a.GetTaskRequest{Id: task.GetId(), Tenant: "acme"})
		}, want: want{check: wantState(a2a.TaskState_TASK_STATE_INPUT_REQUIRED)}},
		{op: "GetTask", name: "internal-error", cfg: failing, run: func(c *caller) outcome {
			return c.call("GetTask", getTask("store-failure"))
		}, want: want{code: a2a.CodeInternal, check: func(t *testing.T, o outcome) {
			if strings.Contains(o.err.message, "fire") {
				t.Fatalf("the internal cause leaked to the client: %q", o.err.message)
			}
		}}},
		{op: "GetTask", name: "unauthenticated", cfg: authed, run: func(c *caller) outcome {
			return c.call("GetTask", getTask(unknown))
		}, want: want{code: a2a.CodeUnauthenticated, check: wantChallenge}},
		{op: "GetTask", name: "extension-required", cfg: extensions, run: func(c *caller) outcome {
			return c.call("GetTask", getTask(unknown))
		}, want: want{code: a2a.CodeExtensionSupportRequired, meta: map[string]string{"extensions": extRequired}}},

		// ----- ListTasks
		{op: "ListTasks", name: "B5-pages", run: func(c *caller) outcome {
			var ids []string
			for i := range 5 {
				r := send(fmt.Sprint("t", i))
				r.Message.ContextId = "ctx-list"
				ids = append(ids, c.task(r).GetId())
				time.Sleep(2 * time.Millisecond) // distinct status timestamps
			}
			c.task(send("fail"))
			var seen []string
			var last outcome
			token := ""
			for page := 0; ; page++ {
				last = c.ok("ListTasks", &a2a.ListTasksRequest{ContextId: "ctx-list", PageSize: proto.Int32(2), PageToken: token})
				res := last.value.(*a2a.ListTasksResponse)
				if res.GetTotalSize() != 5 || res.GetPageSize() != 2 {
					c.t.Fatalf("totalSize %d pageSize %d", res.GetTotalSize(), res.GetPageSize())
				}
				for _, task := range res.GetTasks() {
					seen = append(seen, task.GetId())
					if len(task.GetArtifacts()) > 0 {
						c.t.Fatal("artifacts must be omitted unless includeArtifacts")
					}
				}
				if token = res.GetNextPageToken(); token == "" || page > 5 {
					break
				}
			}
			for i := range ids {
				if seen[i] != ids[len(ids)-1-i] {
					c.t.Fatalf("order %v, want newest first %v", seen, ids)
				}
			}
			return last
		}, want: want{check: func(t *testing.T, o outcome) {
			if res := o.value.(*a2a.ListTasksResponse); len(res.GetTasks()) != 1 || res.GetNextPageToken() != "" {
				t.Fatalf("last page %v", res)
			}
		}}},
		{op: "ListTasks", name: "status-filter-and-artifacts", run: func(c *caller) outcome {
			c.task(send("hello"))
			c.task(send("fail"))
			return c.call("ListTasks", &a2a.ListTasksRequest{Status: a2a.TaskState_TASK_STATE_COMPLETED, IncludeArtifacts: proto.Bool(true)})
		}, want: want{check: func(t *testing.T, o outcome) {
			res := o.value.(*a2a.ListTasksResponse)
			if res.GetTotalSize() != 1 || len(res.GetTasks()[0].GetArtifacts()) != 1 {
				t.Fatalf("list %v", res)
			}
		}}},
		{op: "ListTasks", name: "B4-history-0", run: func(c *caller) outcome {
			c.task(send("hello"))
			return c.call("ListTasks", &a2a.ListTasksRequest{HistoryLength: proto.Int32(0)})
		}, want: want{check: func(t *testing.T, o outcome) {
			if h := o.value.(*a2a.ListTasksResponse).GetTasks()[0].GetHistory(); len(h) != 0 {
				t.Fatalf("history %v", h)
			}
		}}},
		{op: "ListTasks", name: "empty", run: func(c *caller) outcome {
			c.task(send("hello"))
			return c.call("ListTasks", &a2a.ListTasksRequest{StatusTimestampAfter: timestamppb.New(time.Date(2999, 1, 1, 0, 0, 0, 0, time.UTC))})
		}, want: want{check: func(t *testing.T, o outcome) {
			if res := o.value.(*a2a.ListTasksResponse); res.GetTotalSize() != 0 || len(res.GetTasks()) != 0 || res.GetNextPageToken() != "" {
				t.Fatalf("list %v", res)
			}
		}}},
		{op: "ListTasks", name: "B5-page-size-0", run: func(c *caller) outcome {
			return c.call("ListTasks", &a2a.ListTasksRequest{PageSize: proto.Int32(0)})
		}, want: want{code: a2a.CodeInvalidParams, fields: []string{"pageSize"}}},
		{op: "ListTasks", name: "B5-page-size-101", run: func(c *caller) outcome {
			return c.call("ListTasks", &a2a.ListTasksRequest{PageSize: proto.Int32(101)})
		}, want: want{code: a2a.CodeInvalidParams, fields: []string{"pageSize"}}},
		{op: "ListTasks", name: "B5-forged-token", run: func(c *caller) outcome {
			return c.call("ListTasks", &a2a.ListTasksRequest{PageToken: "forged"})
		}, want: want{code: a2a.CodeInvalidParams, fields: []string{"pageToken"}}},
		{op: "ListTasks", name: "B5-token-other-filters", run: func(c *caller) outcome {
			c.task(send("a"))
			c.task(send("b"))
			first := c.ok("ListTasks", &a2a.ListTasksRequest{PageSize: proto.Int32(1)})
			return c.call("ListTasks", &a2a.ListTasksRequest{PageSize: proto.Int32(1), ContextId: "other",
				PageToken: first.value.(*a2a.ListTasksResponse).GetNextPageToken()})
		}, want: want{code: a2a.CodeInvalidParams, fields: []string{"pageToken"}}},
		{op: "ListTasks", name: "B4-negative-history", run: func(c *caller) outcome {
			return c.call("ListTasks", &a2a.ListTasksRequest{HistoryLength: proto.Int32(-2)})
		}, want: want{code: a2a.CodeInvalidParams, fields: []string{"historyLength"}}},
		{op: "ListTasks", name: "unknown-state", run: func(c *caller) outcome {
			return c.call("ListTasks", &a2a.ListTasksRequest{Status: a2a.TaskState(99)})
		}, want: want{code: a2a.CodeInvalidParams, fields: []string{"status"}, anyMessage: true}},
		{op: "ListTasks", name: "B12-scoped", cfg: authed, run: func(c *caller) outcome {
			c.task(send("hello"), alice)
			if n := c.ok("ListTasks", &a2a.ListTasksRequest{}, alice).value.(*a2a.ListTasksResponse).GetTotalSize(); n != 1 {
				c.t.Fatalf("alice lists %d tasks", n)
			}
			return c.call("ListTasks", &a2a.ListTasksRequest{}, bob)
		}, want: want{check: func(t *testing.T, o outcome) {
			if n := o.value.(*a2a.ListTasksResponse).GetTotalSize(); n != 0 {
				t.Fatalf("bob lists %d of alice's tasks", n)
			}
		}}},
		{op: "ListTasks", name: "unauthenticated", cfg: authed, run: func(c *caller) outcome {
			return c.call("ListTasks", &a2a.ListTasksRequest{})
		}, want: want{code: a2a.CodeUnauthenticated, check: wantChallenge}},
		{op: "ListTasks", name: "B7-version-missing", run: func(c *caller) outcome {
			return c.call("ListTasks", &a2a.ListTasksRequest{}, version(""))
		}, want: want{code: a2a.CodeVersionNotSupported}},

		// ----- CancelTask
		{op: "CancelTask", name: "input-required", run: func(c *caller) outcome {
			return c.call("CancelTask", cancelTask(c.task(send("input-required")).GetId()))
		}, want: want{check: wantState(a2a.TaskState_TASK_STATE_CANCELED)}},
		{op: "CancelTask", name: "working", run: func(c *caller) outcome {
			return c.call("CancelTask", cancelTask(c.task(immediately("slow 5000")).GetId()))
		}, want: want{check: wantState(a2a.TaskState_TASK_STATE_CANCELED)}},
		{op: "CancelTask", name: "idempotent", run: func(c *caller) outcome {
			id := c.task(send("auth-required")).GetId()
			first := c.ok("CancelTask", cancelTask(id))
			out := c.call("CancelTask", cancelTask(id))
			if !proto.Equal(first.value, out.value) {
				c.t.Fatalf("second cancel changed the task:\n%v\n%v", first.value, out.value)
			}
			return out
		}, want: want{check: wantState(a2a.TaskState_TASK_STATE_CANCELED)}},
		{op: "CancelTask", name: "completed", run: func(c *caller) outcome {
			return c.call("CancelTask", cancelTask(c.task(send("hello")).GetId()))
		}, want: want{code: a2a.CodeTaskNotCancelable}},
		{op: "CancelTask", name: "rejected", run: func(c *caller) outcome {
			return c.call("CancelTask", cancelTask(c.task(send("reject")).GetId()))
		}, want: want{code: a2a.CodeTaskNotCancelable}},
		{op: "CancelTask", name: "unknown-task", run: func(c *caller) outcome {
			return c.call("CancelTask", cancelTask(unknown))
		}, want: want{code: a2a.CodeTaskNotFound}},
		{op: "CancelTask", name: "B12-other-principal", cfg: authed, run: func(c *caller) outcome {
			return c.call("CancelTask", cancelTask(c.task(send("input-required"), alice).GetId()), bob)
		}, want: want{code: a2a.CodeTaskNotFound}},
		{op: "CancelTask", name: "unauthenticated", cfg: authed, run: func(c *caller) outcome {
			return c.call("CancelTask", cancelTask(unknown))
		}, want: want{code: a2a.CodeUnauthenticated, check: wantChallenge}},

		// ----- SubscribeToTask
		{op: "SubscribeToTask", name: "running-task", run: func(c *caller) outcome {
			s := openUntil(c, "SubscribeToTask", subscribe(c.task(send("auth-required")).GetId()), func(*a2a.StreamResponse) bool { return true })
			if s.out.events[0].GetTask() == nil {
				c.t.Fatalf("the first event must be the Task snapshot: %v", s.out.events[0])
			}
			c.ok("SendMessage", sendTo(s.out.events[0].GetTask().GetId(), "authorized"))
			return s.drain()
		}, want: want{check: wantKinds("task status:WORKING artifact status:COMPLETED")}},
		{op: "SubscribeToTask", name: "B2-auth-required-stays-open", run: func(c *caller) outcome {
			id := c.task(send("auth-required")).GetId()
			s := openUntil(c, "SubscribeToTask", subscribe(id), func(*a2a.StreamResponse) bool { return true })
			stillOpen(c, s)
			c.ok("CancelTask", cancelTask(id))
			return s.drain()
		}, want: want{check: wantKinds("task status:CANCELED")}},
		{op: "SubscribeToTask", name: "B2-terminal-task", run: func(c *caller) outcome {
			return c.call("SubscribeToTask", subscribe(c.task(send("hello")).GetId()))
		}, want: want{code: a2a.CodeUnsupportedOperation, check: noEvents}},
		{op: "SubscribeToTask", name: "unknown-task", run: func(c *caller) outcome {
			return c.call("SubscribeToTask", subscribe(unknown))
		}, want: want{code: a2a.CodeTaskNotFound, check: noEvents}},
		{op: "SubscribeToTask", name: "not-declared", cfg: noStreaming, run: func(c *caller) outcome {
			return c.call("SubscribeToTask", subscribe(c.task(send("input-required")).GetId()))
		}, want: want{code: a2a.CodeUnsupportedOperation, check: noEvents}},
		{op: "SubscribeToTask", name: "B12-other-principal", cfg: authed, run: func(c *caller) outcome {
			return c.call("SubscribeToTask", subscribe(c.task(send("input-required"), alice).GetId()), bob)
		}, want: want{code: a2a.CodeTaskNotFound, check: noEvents}},
		{op: "SubscribeToTask", name: "unauthenticated", cfg: authed, run: func(c *caller) outcome {
			return c.call("SubscribeToTask", subscribe(unknown))
		}, want: want{code: a2a.CodeUnauthenticated, check: wantChallenge}},

		// ----- Push notification configurations
		{op: "CreateTaskPushNotificationConfig", name: "created", run: func(c *caller) outcome {
			id := c.task(send("input-required")).GetId()
			cfg := pushConfig(id, "https://hooks.example.com/a")
			cfg.Authentication = &a2a.AuthenticationInfo{Scheme: "Bearer", Credentials: "s3cret"}
			return c.call("CreateTaskPushNotificationConfig", cfg)
		}, want: want{check: func(t *testing.T, o outcome) {
			cfg := o.value.(*a2a.TaskPushNotificationConfig)
			if cfg.GetId() == "" || cfg.GetTaskId() == "" || cfg.GetAuthentication().GetScheme() != "Bearer" {
				t.Fatalf("created %v", cfg)
			}
		}}},
		{op: "CreateTaskPushNotificationConfig", name: "bad-url", run: func(c *caller) outcome {
			return c.call("CreateTaskPushNotificationConfig", pushConfig(c.task(send("input-required")).GetId(), "not a url"))
		}, want: want{code: a2a.CodeInvalidParams, fields: []string{"url"}}},
		{op: "CreateTaskPushNotificationConfig", name: "no-url", run: func(c *caller) outcome {
			return c.call("CreateTaskPushNotificationConfig", pushConfig(c.task(send("input-required")).GetId(), ""))
		}, want: want{code: a2a.CodeInvalidParams, fields: []string{"url"}}},
		{op: "CreateTaskPushNotificationConfig", name: "unknown-task", run: func(c *caller) outcome {
			return c.call("CreateTaskPushNotificationConfig", pushConfig(unknown, "https://x.example"))
		}, want: want{code: a2a.CodeTaskNotFound}},
		{op: "CreateTaskPushNotificationConfig", name: "not-supported", cfg: noPush, run: func(c *caller) outcome {
			return c.call("CreateTaskPushNotificationConfig", pushConfig(c.task(send("input-required")).GetId(), "https://x.example"))
		}, want: want{code: a2a.CodePushNotificationNotSupported}},
		{op: "CreateTaskPushNotificationConfig", name: "B12-other-principal", cfg: authed, run: func(c *caller) outcome {
			return c.call("CreateTaskPushNotificationConfig", pushConfig(c.task(send("input-required"), alice).GetId(), "https://x.example"), bob)
		}, want: want{code: a2a.CodeTaskNotFound}},
		{op: "GetTaskPushNotificationConfig", name: "found", run: func(c *caller) outcome {
			id, cfgID := withPushConfig(c)
			return c.call("GetTaskPushNotificationConfig", &a2a.GetTaskPushNotificationConfigRequest{TaskId: id, Id: cfgID})
		}, want: want{check: func(t *testing.T, o outcome) {
			if u := o.value.(*a2a.TaskPushNotificationConfig).GetUrl(); u != "https://hooks.example.com/a" {
				t.Fatalf("url %q", u)
			}
		}}},
		{op: "GetTaskPushNotificationConfig", name: "unknown-config", run: func(c *caller) outcome {
			id, _ := withPushConfig(c)
			return c.call("GetTaskPushNotificationConfig", &a2a.GetTaskPushNotificationConfigRequest{TaskId: id, Id: "nope"})
		}, want: want{code: a2a.CodeTaskNotFound}},
		{op: "GetTaskPushNotificationConfig", name: "not-supported", cfg: noPush, run: func(c *caller) outcome {
			return c.call("GetTaskPushNotificationConfig", &a2a.GetTaskPushNotificationConfigRequest{TaskId: c.task(send("input-required")).GetId(), Id: "c"})
		}, want: want{code: a2a.CodePushNotificationNotSupported}},
		{op: "ListTaskPushNotificationConfigs", name: "listed", run: func(c *caller) outcome {
			r := withConfig(send("input-required"), &a2a.SendMessageConfiguration{TaskPushNotificationConfig: &a2a.TaskPushNotificationConfig{Url: "https://hooks.example.com/inline", Token: "tok-1"}})
			id := c.task(r).GetId()
			c.ok("CreateTaskPushNotificationConfig", pushConfig(id, "https://hooks.example.com/a"))
			out := c.call("ListTaskPushNotificationConfigs", &a2a.ListTaskPushNotificationConfigsRequest{TaskId: id})
			if res, ok := out.value.(*a2a.ListTaskPushNotificationConfigsResponse); ok {
				// The order of configurations is unspecified (Parley's
				// follows their random ids): compare them sorted.
				slices.SortFunc(res.Configs, func(a, b *a2a.TaskPushNotificationConfig) int { return strings.Compare(a.GetUrl(), b.GetUrl()) })
			}
			return out
		}, want: want{check: func(t *testing.T, o outcome) {
			if n := len(o.value.(*a2a.ListTaskPushNotificationConfigsResponse).GetConfigs()); n != 2 {
				t.Fatalf("%d configs (inline + created), want 2", n)
			}
		}}},
		{op: "ListTaskPushNotificationConfigs", name: "unknown-task", run: func(c *caller) outcome {
			return c.call("ListTaskPushNotificationConfigs", &a2a.ListTaskPushNotificationConfigsRequest{TaskId: unknown})
		}, want: want{code: a2a.CodeTaskNotFound}},
		{op: "ListTaskPushNotificationConfigs", name: "not-supported", cfg: noPush, run: func(c *caller) outcome {
			return c.call("ListTaskPushNotificationConfigs", &a2a.ListTaskPushNotificationConfigsRequest{TaskId: c.task(send("input-required")).GetId()})
		}, want: want{code: a2a.CodePushNotificationNotSupported}},
		{op: "ListTaskPushNotificationConfigs", name: "B12-other-principal", cfg: authed, run: func(c *caller) outcome {
			return c.call("ListTaskPushNotificationConfigs", &a2a.ListTaskPushNotificationConfigsRequest{TaskId: c.task(send("input-required"), alice).GetId()}, bob)
		}, want: want{code: a2a.CodeTaskNotFound}},
		{op: "DeleteTaskPushNotificationConfig", name: "deleted-idempotently", run: func(c *caller) outcome {
			id, cfgID := withPushConfig(c)
			del := &a2a.DeleteTaskPushNotificationConfigRequest{TaskId: id, Id: cfgID}
			c.ok("DeleteTaskPushNotificationConfig", del)
			out := c.call("DeleteTaskPushNotificationConfig", del)
			if g := c.call("GetTaskPushNotificationConfig", &a2a.GetTaskPushNotificationConfigRequest{TaskId: id, Id: cfgID}); g.err == nil || g.err.code != a2a.CodeTaskNotFound {
				c.t.Fatalf("the deleted config is still there: %v %v", g.value, g.err)
			}
			return out
		}, want: want{}},
		{op: "DeleteTaskPushNotificationConfig", name: "unknown-task", run: func(c *caller) outcome {
			return c.call("DeleteTaskPushNotificationConfig", &a2a.DeleteTaskPushNotificationConfigRequest{TaskId: unknown, Id: "x"})
		}, want: want{code: a2a.CodeTaskNotFound}},
		{op: "DeleteTaskPushNotificationConfig", name: "not-supported", cfg: noPush, run: func(c *caller) outcome {
			return c.call("DeleteTaskPushNotificationConfig", &a2a.DeleteTaskPushNotificationConfigRequest{TaskId: c.task(send("input-required")).GetId(), Id: "c"})
		}, want: want{code: a2a.CodePushNotificationNotSupported}},

		// ----- GetExtendedAgentCard (DESIGN B13)
		{op: "GetExtendedAgentCard", name: "B13-not-declared", cfg: authed, run: func(c *caller) outcome {
			return c.call("GetExtendedAgentCard", nil, alice)
		}, want: want{code: a2a.CodeUnsupportedOperation}},
		{op: "GetExtendedAgentCard", name: "B13-not-configured", cfg: extendedDeclared, run: func(c *caller) outcome {
			return c.call("GetExtendedAgentCard", nil, alice)
		}, want: want{code: a2a.CodeExtendedAgentCardNotConfigured}},
		{op: "GetExtendedAgentCard", name: "B13-anonymous", cfg: extendedConfigured, run: func(c *caller) outcome {
			return c.call("GetExtendedAgentCard", nil)
		}, want: want{code: a2a.CodeUnauthenticated, check: wantChallenge}},
		{op: "GetExtendedAgentCard", name: "B13-configured", cfg: extendedConfigured, run: func(c *caller) outcome {
			return c.call("GetExtendedAgentCard", nil, alice)
		}, want: want{check: func(t *testing.T, o outcome) {
			if n := o.value.(*a2a.AgentCard).GetName(); n != "Extended" {
				t.Fatalf("card %q", n)
			}
		}}},

		// ----- An operation that does not exist
		{op: "NoSuchOperation", name: "method-not-found", run: func(c *caller) outcome {
			return c.call("NoSuchOperation", nil)
		}, want: want{code: a2a.CodeMethodNotFound, anyMessage: true}},
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

// TestEquivalence runs every scenario over each binding, checks the
// expected outcome, and checks that every binding's outcome equals the
// first binding's once identifiers and timestamps are neutralized.
func TestEquivalence(t *testing.T) {
	for _, sc := range scenarios() {
		t.Run(sc.op+"/"+sc.name, func(t *testing.T) {
			t.Parallel()
			var ref, refBinding string
			for _, b := range bindings {
				t.Run(b, func(t *testing.T) {
					if why, ok := sc.skip[b]; ok {
						t.Skip(why)
					}
					e := start(t, sc.cfg)
					c := &caller{t: t, e: e, b: b, z: newNormalizer()}
					c.z.host = strings.TrimPrefix(e.base, "http://")
					o := sc.run(c)
					sc.want.verify(t, o)
					got := c.z.normalize(o, sc.want.anyMessage)
					if ref == "" {
						ref, refBinding = got, b
						return
					}
					if got != ref {
						t.Errorf("the outcome differs from %s's:\n--- %s\n%s--- %s\n%s", refBinding, refBinding, ref, b, got)
					}
				})
			}
		})
	}
}

// TestEquivalenceCoversEveryOperation: the table has scenarios for every
// operation, and for every error the spec lists for it (brief §7.5).
func TestEquivalenceCoversEveryOperation(t *testing.T) {
	covered := map[string]map[a2a.Code]bool{}
	for _, sc := range scenarios() {
		if covered[sc.op] == nil {
			covered[sc.op] = map[a2a.Code]bool{}
		}
		covered[sc.op][sc.want.code] = true
	}
	specErrors := map[string][]a2a.Code{
		"SendMessage":                      {0, a2a.CodeContentTypeNotSupported, a2a.CodeUnsupportedOperation, a2a.CodeTaskNotFound, a2a.CodePushNotificationNotSupported},
		"SendStreamingMessage":             {0, a2a.CodeUnsupportedOperation, a2a.CodeContentTypeNotSupported, a2a.CodeTaskNotFound},
		"GetTask":                          {0, a2a.CodeTaskNotFound},
		"ListTasks":                        {0},
		"CancelTask":                       {0, a2a.CodeTaskNotCancelable, a2a.CodeTaskNotFound},
		"SubscribeToTask":                  {0, a2a.CodeUnsupportedOperation, a2a.CodeTaskNotFound},
		"CreateTaskPushNotificationConfig": {0, a2a.CodePushNotificationNotSupported, a2a.CodeTaskNotFound},
		"GetTaskPushNotificationConfig":    {0, a2a.CodePushNotificationNotSupported, a2a.CodeTaskNotFound},
		"ListTaskPushNotificationConfigs":  {0, a2a.CodePushNotificationNotSupported, a2a.CodeTaskNotFound},
		"DeleteTaskPushNotificationConfig": {0, a2a.CodePushNotificationNotSupported, a2a.CodeTaskNotFound},
		"GetExtendedAgentCard":             {0, a2a.CodeUnsupportedOperation, a2a.CodeExtendedAgentCardNotConfigured},
	}
	for _, m := range a2a.Methods {
		for _, code := range specErrors[m.Name] {
			if !covered[m.Name][code] {
				name := "success"
				if code != 0 {
					name = code.Name()
				}
				t.Errorf("no scenario for %s with outcome %s", m.Name, name)
			}
		}
	}
	// Errors that any operation can return appear somewhere.
	for _, code := range []a2a.Code{a2a.CodeVersionNotSupported, a2a.CodeExtensionSupportRequired, a2a.CodeUnauthenticated,
		a2a.CodeInvalidParams, a2a.CodeInternal, a2a.CodeMethodNotFound, a2a.CodeRequestTooLarge} {
		found := false
		for _, codes := range covered {
			found = found || codes[code]
		}
		if !found {
			t.Errorf("no scenario produces %s", code.Name())
		}
	}
}
