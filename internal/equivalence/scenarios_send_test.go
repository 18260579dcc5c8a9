package equivalence_test

import (
	"fmt"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
)

// sendMessageOutcomeScenarios: what a SendMessage makes of each of the
// conformance agent's behaviours, and of follow-ups on a task.
func sendMessageOutcomeScenarios() []scenario {
	return []scenario{
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
	}
}

// sendMessageRefusalScenarios: the SendMessage requests the core refuses
// for what they hold or the task they name.
func sendMessageRefusalScenarios() []scenario {
	return []scenario{
		{op: "SendMessage", name: "B4-negative-history-length", run: func(c *caller) outcome {
			return c.call("SendMessage", withConfig(send("hello"), &a2a.SendMessageConfiguration{HistoryLength: proto.Int32(-1)}))
		}, want: want{code: a2a.CodeInvalidParams, fields: []string{"configuration.historyLength"}}},
		{op: "SendMessage", name: "unknown-task", run: func(c *caller) outcome {
			return c.call("SendMessage", sendTo(unknownTask, "x"))
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
	}
}

// sendMessageRequestScenarios: SendMessage and how it is sent: resends,
// credentials, protocol versions, extensions and size.
func sendMessageRequestScenarios() []scenario {
	return []scenario{
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
		}, want: want{code: a2a.CodeVersionNotSupported, meta: map[string]string{"supportedVersions": "1.0,0.3"}}},
		{op: "SendMessage", name: "B7-version-0.3", run: func(c *caller) outcome {
			return c.call("SendMessage", send("hi"), version("0.3"))
		}, want: want{code: a2a.CodeVersionNotSupported, meta: map[string]string{"supportedVersions": "1.0,0.3"}}},
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
	}
}

// sendStreamingMessageScenarios: streamed sends, how they end and what
// refuses them before the first event.
func sendStreamingMessageScenarios() []scenario {
	return []scenario{
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
			return c.call("SendStreamingMessage", sendTo(unknownTask, "x"))
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
		}, want: want{code: a2a.CodeVersionNotSupported, meta: map[string]string{"supportedVersions": "1.0,0.3"}}},
		{op: "SendStreamingMessage", name: "extensions-echoed", cfg: extensions, run: func(c *caller) outcome {
			return c.call("SendStreamingMessage", send("hi"), allExtensions)
		}, want: want{check: func(t *testing.T, o outcome) {
			if o.extensions != extRequired+", "+extOptional {
				t.Fatalf("A2A-Extensions echo %q", o.extensions)
			}
		}}},
	}
}
