package a2ahttp_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/server"
)

// Every test here runs against both HTTP bindings with the same expected
// outcome, so a divergence between them fails by name.

func TestSendMessage(t *testing.T) {
	for _, b := range bindings {
		t.Run(b, func(t *testing.T) {
			t.Parallel()
			e := start(t, config{})
			r := mustOK(t, e.call(b, "SendMessage", msg("hello")))
			task := get(r.value, "task")
			if str(task, "status", "state") != "TASK_STATE_COMPLETED" {
				t.Fatalf("state = %v, want COMPLETED", get(task, "status"))
			}
			if str(task, "artifacts", 0, "artifactId") != "echo" || str(task, "artifacts", 0, "parts", 0, "text") != "hello" {
				t.Fatalf("artifacts = %v", get(task, "artifacts"))
			}
			if str(task, "id") == "" || str(task, "contextId") == "" {
				t.Fatalf("task ids missing: %v", task)
			}
			ts := str(task, "status", "timestamp")
			if _, err := time.Parse("2006-01-02T15:04:05.000Z", ts); err != nil {
				t.Fatalf("timestamp %q is not UTC with milliseconds", ts)
			}
			// The stored user message carries both ids (B9 stamping,
			// docs/decisions.md#b9).
			if str(task, "history", 0, "taskId") != str(task, "id") || str(task, "history", 0, "role") != "ROLE_USER" {
				t.Fatalf("history = %v", get(task, "history"))
			}

			r = mustOK(t, e.call(b, "SendMessage", msg("message")))
			if str(r.value, "message", "parts", 0, "text") != "pong" || str(r.value, "message", "role") != "ROLE_AGENT" {
				t.Fatalf("direct reply = %v", r.value)
			}
			if str(r.value, "message", "contextId") == "" {
				t.Fatal("a server message must carry a contextId (a2a.proto, Message.context_id)")
			}
			if get(r.value, "task") != nil {
				t.Fatal("reply has both task and message")
			}

			for text, want := range map[string]string{
				"input-required": "TASK_STATE_INPUT_REQUIRED", "auth-required": "TASK_STATE_AUTH_REQUIRED",
				"reject": "TASK_STATE_REJECTED", "fail": "TASK_STATE_FAILED",
			} {
				r := mustOK(t, e.call(b, "SendMessage", msg(text)))
				if got := str(r.value, "task", "status", "state"); got != want {
					t.Errorf("%s: state %s, want %s", text, got, want)
				}
				if str(r.value, "task", "status", "message", "parts", 0, "text") == "" {
					t.Errorf("%s: no status message", text)
				}
			}
		})
	}
}

func TestSendMessageReturnImmediately(t *testing.T) {
	for _, b := range bindings {
		t.Run(b, func(t *testing.T) {
			t.Parallel()
			e := start(t, config{})
			r := mustOK(t, e.call(b, "SendMessage", strings.TrimSuffix(msg("slow 5000"), "}")+`,"configuration":{"returnImmediately":true}}`))
			st := str(r.value, "task", "status", "state")
			if st != "TASK_STATE_SUBMITTED" && st != "TASK_STATE_WORKING" {
				t.Fatalf("state %s, want an active state", st)
			}
			id := str(r.value, "task", "id")
			r = mustOK(t, e.call(b, "CancelTask", fmt.Sprintf(`{"id":%q}`, id)))
			if str(r.value, "status", "state") != "TASK_STATE_CANCELED" {
				t.Fatalf("after cancel: %v", r.value)
			}
		})
	}
}

func TestSendMessageErrors(t *testing.T) {
	for _, b := range bindings {
		t.Run(b, func(t *testing.T) {
			t.Parallel()
			e := start(t, config{})
			done := mustOK(t, e.call(b, "SendMessage", msg("hello")))
			doneID, doneCtx := str(done.value, "task", "id"), str(done.value, "task", "contextId")

			// TaskNotFound: a taskId must reference an existing task (spec §3.4.2).
			mustErr(t, e.call(b, "SendMessage", msg("x", `"taskId":"no-such-task"`)), a2a.CodeTaskNotFound)
			// docs/decisions.md#b6: a terminal task takes no more messages.
			mustErr(t, e.call(b, "SendMessage", msg("x", fmt.Sprintf(`"taskId":%q`, doneID))), a2a.CodeUnsupportedOperation)
			// docs/decisions.md#b10: a mismatched contextId is InvalidParams,
			// checked before B6.
			w := mustErr(t, e.call(b, "SendMessage", msg("x", fmt.Sprintf(`"taskId":%q,"contextId":"other"`, doneID))), a2a.CodeInvalidParams)
			if len(w.fields) == 0 || w.fields[0] != "message.contextId" {
				t.Errorf("field violations %v, want message.contextId", w.fields)
			}
			_ = doneCtx
			// ContentTypeNotSupported: the agent takes text/plain only.
			mustErr(t, e.call(b, "SendMessage", `{"message":{"messageId":"m-img","role":"ROLE_USER","parts":[{"raw":"AAEC","mediaType":"image/png"}]}}`),
				a2a.CodeContentTypeNotSupported)
			// Validation: REQUIRED members, oneof, enums, history length.
			for name, params := range map[string]string{
				"no message":      `{}`,
				"no messageId":    `{"message":{"role":"ROLE_USER","parts":[{"text":"x"}]}}`,
				"no parts":        `{"message":{"messageId":"a","role":"ROLE_USER","parts":[]}}`,
				"empty part":      `{"message":{"messageId":"a","role":"ROLE_USER","parts":[{}]}}`,
				"two contents":    `{"message":{"messageId":"a","role":"ROLE_USER","parts":[{"text":"x","url":"http://x"}]}}`,
				"v0.3 role":       `{"message":{"messageId":"a","role":"user","parts":[{"text":"x"}]}}`,
				"agent role":      `{"message":{"messageId":"a","role":"ROLE_AGENT","parts":[{"text":"x"}]}}`,
				"no role":         `{"message":{"messageId":"a","parts":[{"text":"x"}]}}`,
				"negative hist":   strings.TrimSuffix(msg("x"), "}") + `,"configuration":{"historyLength":-1}}`,
				"bad push url":    strings.TrimSuffix(msg("x"), "}") + `,"configuration":{"taskPushNotificationConfig":{"url":"ftp://x"}}}`,
				"wrong type":      `{"message":{"messageId":7,"role":"ROLE_USER","parts":[{"text":"x"}]}}`,
				"v0.3 kind parts": `{"message":{"messageId":"a","role":"ROLE_USER","parts":[{"kind":"text"}]}}`,
			} {
				if r := e.call(b, "SendMessage", params); r.err == nil || r.err.code != a2a.CodeInvalidParams {
					t.Errorf("%s: got %+v, want InvalidParams", name, r.err)
				}
			}
		})
	}
}

func TestSendMessageHistoryLength(t *testing.T) {
	for _, b := range bindings {
		t.Run(b, func(t *testing.T) {
			t.Parallel()
			e := start(t, config{})
			first := mustOK(t, e.call(b, "SendMessage", msg("input-required")))
			id := str(first.value, "task", "id")
			if n := len(get(first.value, "task", "history").([]any)); n != 2 {
				t.Fatalf("history has %d messages, want 2 (user, agent status)", n)
			}
			// docs/decisions.md#b9: only taskId; the context is inferred.
			r := mustOK(t, e.call(b, "SendMessage", strings.TrimSuffix(msg("follow-up", fmt.Sprintf(`"taskId":%q`, id)), "}")+`,"configuration":{"historyLength":1}}`))
			task := get(r.value, "task")
			if str(task, "status", "state") != "TASK_STATE_COMPLETED" || str(task, "artifacts", 0, "parts", 0, "text") != "follow-up" {
				t.Fatalf("follow-up result %v", task)
			}
			h := get(task, "history").([]any)
			if len(h) != 1 || str(h[0], "parts", 0, "text") != "follow-up" || str(h[0], "contextId") != str(task, "contextId") {
				t.Fatalf("historyLength 1 gave %v", h)
			}
			// docs/decisions.md#b4 on GetTask: unset all, 0 none, N most
			// recent, negative invalid.
			all := mustOK(t, e.call(b, "GetTask", fmt.Sprintf(`{"id":%q}`, id)))
			if n := len(get(all.value, "history").([]any)); n != 3 {
				t.Fatalf("full history %d, want 3", n)
			}
			none := mustOK(t, e.call(b, "GetTask", fmt.Sprintf(`{"id":%q,"historyLength":0}`, id)))
			if _, ok := none.value["history"]; ok {
				t.Fatalf("historyLength 0 still has history: %s", none.body)
			}
			two := mustOK(t, e.call(b, "GetTask", fmt.Sprintf(`{"id":%q,"historyLength":2}`, id)))
			if h := get(two.value, "history").([]any); len(h) != 2 || str(h[1], "parts", 0, "text") != "follow-up" {
				t.Fatalf("historyLength 2 gave %v", h)
			}
			mustErr(t, e.call(b, "GetTask", fmt.Sprintf(`{"id":%q,"historyLength":-1}`, id)), a2a.CodeInvalidParams)
		})
	}
}

func TestStreaming(t *testing.T) {
	for _, b := range bindings {
		t.Run(b, func(t *testing.T) {
			t.Parallel()
			e := start(t, config{})
			r := mustOK(t, e.call(b, "SendStreamingMessage", msg("stream 3")))
			if ct := r.header.Get("Content-Type"); ct != "text/event-stream" {
				t.Fatalf("Content-Type %q", ct)
			}
			kinds := []string{}
			for i, ev := range r.events {
				for k := range ev.data {
					kinds = append(kinds, k)
				}
				if ev.id != fmt.Sprint(i+1) {
					t.Errorf("event %d has id %q, want the sequence number %d", i, ev.id, i+1)
				}
			}
			want := "task statusUpdate artifactUpdate artifactUpdate artifactUpdate statusUpdate"
			if strings.Join(kinds, " ") != want {
				t.Fatalf("events %v, want %s", kinds, want)
			}
			for i := 0; i < 3; i++ {
				a := get(r.events[2+i].data, "artifactUpdate")
				if str(a, "artifact", "parts", 0, "text") != fmt.Sprintf("chunk %d", i) || str(a, "artifact", "artifactId") != "stream" {
					t.Fatalf("chunk %d = %v", i, a)
				}
				if (get(a, "append") == true) != (i > 0) || (get(a, "lastChunk") == true) != (i == 2) {
					t.Fatalf("chunk %d append/lastChunk = %v/%v", i, get(a, "append"), get(a, "lastChunk"))
				}
				if str(a, "taskId") == "" || str(a, "contextId") == "" {
					t.Fatalf("artifact event without ids: %v", a)
				}
			}
			if str(r.events[5].data, "statusUpdate", "status", "state") != "TASK_STATE_COMPLETED" {
				t.Fatalf("last event %v", r.events[5].data)
			}
			// The stored task has the whole artifact.
			id := str(r.events[0].data, "task", "id")
			task := mustOK(t, e.call(b, "GetTask", fmt.Sprintf(`{"id":%q}`, id)))
			if parts := get(task.value, "artifacts", 0, "parts").([]any); len(parts) != 3 {
				t.Fatalf("stored artifact has %d parts", len(parts))
			}

			// A direct reply streams exactly one message (docs/decisions.md#b2).
			r = mustOK(t, e.call(b, "SendStreamingMessage", msg("message")))
			if len(r.events) != 1 || str(r.events[0].data, "message", "parts", 0, "text") != "pong" {
				t.Fatalf("message stream %v", r.events)
			}
			// INPUT_REQUIRED closes the stream (docs/decisions.md#b2).
			r = mustOK(t, e.call(b, "SendStreamingMessage", msg("input-required")))
			last := r.events[len(r.events)-1]
			if str(last.data, "statusUpdate", "status", "state") != "TASK_STATE_INPUT_REQUIRED" {
				t.Fatalf("input-required stream ended with %v", last.data)
			}
			// docs/decisions.md#b11: an append to an unknown artifact starts it.
			r = mustOK(t, e.call(b, "SendStreamingMessage", msg("append-unknown")))
			id = str(r.events[0].data, "task", "id")
			task = mustOK(t, e.call(b, "GetTask", fmt.Sprintf(`{"id":%q}`, id)))
			if str(task.value, "artifacts", 0, "artifactId") != "never-sent" || str(task.value, "artifacts", 0, "parts", 0, "text") != "appended" {
				t.Fatalf("append-unknown task %s", task.body)
			}
		})
	}
}

func TestStreamingErrorsBeforeFirstEvent(t *testing.T) {
	for _, b := range bindings {
		t.Run(b, func(t *testing.T) {
			t.Parallel()
			e := start(t, config{mutate: func(c *a2a.AgentCard, _ *server.Options) { c.Capabilities.Streaming = nil }})
			r := e.call(b, "SendStreamingMessage", msg("hi"))
			mustErr(t, r, a2a.CodeUnsupportedOperation)
			if ct := r.header.Get("Content-Type"); strings.HasPrefix(ct, "text/event-stream") {
				t.Fatalf("an error before any event must be a plain response, got %s", ct)
			}
			mustErr(t, e.call(b, "SubscribeToTask", `{"id":"x"}`), a2a.CodeUnsupportedOperation)
		})
	}
}

func TestSubscribeToTask(t *testing.T) {
	for _, b := range bindings {
		for _, verb := range []string{"GET", "POST"} {
			if b == jsonRPC && verb == "GET" {
				continue
			}
			t.Run(b+"/"+verb, func(t *testing.T) {
				t.Parallel()
				e := start(t, config{})
				r := mustOK(t, e.call(b, "SendMessage", strings.TrimSuffix(msg("slow 400"), "}")+`,"configuration":{"returnImmediately":true}}`))
				id := str(r.value, "task", "id")
				// docs/decisions.md#b1: both verbs on :subscribe.
				s := mustOK(t, e.call(b, "SubscribeToTask", fmt.Sprintf(`{"id":%q}`, id), callOpts{restVerb: verb}))
				if len(s.events) < 2 {
					t.Fatalf("events %v", s.events)
				}
				if str(s.events[0].data, "task", "id") != id {
					t.Fatalf("first event must be the Task snapshot: %v", s.events[0].data)
				}
				last := s.events[len(s.events)-1].data
				if str(last, "statusUpdate", "status", "state") != "TASK_STATE_COMPLETED" {
					t.Fatalf("stream ended with %v", last)
				}
				// A terminal task cannot be subscribed to (docs/decisions.md#b2).
				mustErr(t, e.call(b, "SubscribeToTask", fmt.Sprintf(`{"id":%q}`, id), callOpts{restVerb: verb}), a2a.CodeUnsupportedOperation)
				mustErr(t, e.call(b, "SubscribeToTask", `{"id":"nope"}`, callOpts{restVerb: verb}), a2a.CodeTaskNotFound)
			})
		}
	}
}

func TestGetTaskErrors(t *testing.T) {
	for _, b := range bindings {
		t.Run(b, func(t *testing.T) {
			t.Parallel()
			e := start(t, config{})
			w := mustErr(t, e.call(b, "GetTask", `{"id":"no-such-task"}`), a2a.CodeTaskNotFound)
			if w.meta["taskId"] != "no-such-task" {
				t.Errorf("ErrorInfo metadata %v", w.meta)
			}
		})
	}
}

func TestListTasks(t *testing.T) {
	for _, b := range bindings {
		t.Run(b, func(t *testing.T) {
			t.Parallel()
			e := start(t, config{})
			ctxID := "ctx-list"
			var ids []string
			for i := 0; i < 5; i++ {
				r := mustOK(t, e.call(b, "SendMessage", msg(fmt.Sprint("t", i), fmt.Sprintf(`"contextId":%q`, ctxID))))
				ids = append(ids, str(r.value, "task", "id"))
				time.Sleep(2 * time.Millisecond) // distinct status timestamps
			}
			mustOK(t, e.call(b, "SendMessage", msg("fail")))
			// Pages of 2, newest first, every task exactly once.
			var seen []string
			token := ""
			for pages := 0; ; pages++ {
				params := fmt.Sprintf(`{"contextId":%q,"pageSize":2`, ctxID)
				if token != "" {
					params += fmt.Sprintf(`,"pageToken":%q`, token)
				}
				r := mustOK(t, e.call(b, "ListTasks", params+"}"))
				if _, ok := r.value["nextPageToken"]; !ok {
					t.Fatalf("nextPageToken missing: %s", r.body)
				}
				if get(r.value, "totalSize") != float64(5) || get(r.value, "pageSize") != float64(2) {
					t.Fatalf("totalSize/pageSize = %v/%v", get(r.value, "totalSize"), get(r.value, "pageSize"))
				}
				for _, task := range get(r.value, "tasks").([]any) {
					seen = append(seen, str(task, "id"))
					if _, ok := task.(map[string]any)["artifacts"]; ok {
						t.Fatal("artifacts must be omitted unless includeArtifacts (spec §3.1.4)")
					}
				}
				token = str(r.value, "nextPageToken")
				if token == "" {
					break
				}
				if pages > 5 {
					t.Fatal("too many pages")
				}
			}
			for i := range ids {
				if seen[i] != ids[len(ids)-1-i] {
					t.Fatalf("order %v, want newest first %v", seen, ids)
				}
			}
			// Filters and options.
			r := mustOK(t, e.call(b, "ListTasks", `{"status":"TASK_STATE_FAILED","includeArtifacts":true}`))
			if get(r.value, "totalSize") != float64(1) || str(r.value, "tasks", 0, "status", "state") != "TASK_STATE_FAILED" {
				t.Fatalf("status filter: %s", r.body)
			}
			r = mustOK(t, e.call(b, "ListTasks", fmt.Sprintf(`{"contextId":%q,"includeArtifacts":true,"pageSize":1,"historyLength":0}`, ctxID)))
			if get(r.value, "tasks", 0, "artifacts") == nil || get(r.value, "tasks", 0, "history") != nil {
				t.Fatalf("includeArtifacts/historyLength: %s", r.body)
			}
			r = mustOK(t, e.call(b, "ListTasks", `{"statusTimestampAfter":"2999-01-01T00:00:00Z"}`))
			if get(r.value, "totalSize") != float64(0) || len(get(r.value, "tasks").([]any)) != 0 || str(r.value, "nextPageToken") != "" {
				t.Fatalf("empty list: %s", r.body)
			}
			// Errors (docs/decisions.md#b5).
			mustErr(t, e.call(b, "ListTasks", `{"pageSize":0}`), a2a.CodeInvalidParams)
			mustErr(t, e.call(b, "ListTasks", `{"pageSize":101}`), a2a.CodeInvalidParams)
			mustErr(t, e.call(b, "ListTasks", `{"pageToken":"forged"}`), a2a.CodeInvalidParams)
			first := mustOK(t, e.call(b, "ListTasks", `{"pageSize":1}`))
			mustErr(t, e.call(b, "ListTasks", fmt.Sprintf(`{"pageSize":1,"contextId":"other","pageToken":%q}`, str(first.value, "nextPageToken"))), a2a.CodeInvalidParams)
			mustErr(t, e.call(b, "ListTasks", `{"historyLength":-2}`), a2a.CodeInvalidParams)
		})
	}
}

func TestCancelTask(t *testing.T) {
	for _, b := range bindings {
		t.Run(b, func(t *testing.T) {
			t.Parallel()
			e := start(t, config{})
			r := mustOK(t, e.call(b, "SendMessage", msg("input-required")))
			id := str(r.value, "task", "id")
			c := mustOK(t, e.call(b, "CancelTask", fmt.Sprintf(`{"id":%q}`, id)))
			if str(c.value, "status", "state") != "TASK_STATE_CANCELED" {
				t.Fatalf("cancel gave %s", c.body)
			}
			// Idempotent on a canceled task.
			c = mustOK(t, e.call(b, "CancelTask", fmt.Sprintf(`{"id":%q}`, id)))
			if str(c.value, "status", "state") != "TASK_STATE_CANCELED" {
				t.Fatalf("second cancel gave %s", c.body)
			}
			done := mustOK(t, e.call(b, "SendMessage", msg("done")))
			mustErr(t, e.call(b, "CancelTask", fmt.Sprintf(`{"id":%q}`, str(done.value, "task", "id"))), a2a.CodeTaskNotCancelable)
			mustErr(t, e.call(b, "CancelTask", `{"id":"nope"}`), a2a.CodeTaskNotFound)
		})
	}
}

func TestPushNotificationConfigs(t *testing.T) {
	for _, b := range bindings {
		t.Run(b, func(t *testing.T) {
			t.Parallel()
			e := start(t, config{})
			r := mustOK(t, e.call(b, "SendMessage", strings.TrimSuffix(msg("input-required"), "}")+
				`,"configuration":{"taskPushNotificationConfig":{"url":"https://hooks.example.com/inline","token":"tok-1"}}}`))
			id := str(r.value, "task", "id")
			created := mustOK(t, e.call(b, "CreateTaskPushNotificationConfig",
				fmt.Sprintf(`{"taskId":%q,"url":"https://hooks.example.com/a","authentication":{"scheme":"Bearer","credentials":"s3cret"}}`, id)))
			cfgID := str(created.value, "id")
			if cfgID == "" || str(created.value, "taskId") != id || str(created.value, "authentication", "scheme") != "Bearer" {
				t.Fatalf("created %s", created.body)
			}
			got := mustOK(t, e.call(b, "GetTaskPushNotificationConfig", fmt.Sprintf(`{"taskId":%q,"id":%q}`, id, cfgID)))
			if str(got.value, "url") != "https://hooks.example.com/a" {
				t.Fatalf("get %s", got.body)
			}
			list := mustOK(t, e.call(b, "ListTaskPushNotificationConfigs", fmt.Sprintf(`{"taskId":%q}`, id)))
			if n := len(get(list.value, "configs").([]any)); n != 2 {
				t.Fatalf("list has %d configs (inline + created), want 2: %s", n, list.body)
			}
			mustOK(t, e.call(b, "DeleteTaskPushNotificationConfig", fmt.Sprintf(`{"taskId":%q,"id":%q}`, id, cfgID)))
			mustOK(t, e.call(b, "DeleteTaskPushNotificationConfig", fmt.Sprintf(`{"taskId":%q,"id":%q}`, id, cfgID))) // idempotent
			mustErr(t, e.call(b, "GetTaskPushNotificationConfig", fmt.Sprintf(`{"taskId":%q,"id":%q}`, id, cfgID)), a2a.CodeTaskNotFound)
			mustErr(t, e.call(b, "CreateTaskPushNotificationConfig", `{"taskId":"nope","url":"https://x.example"}`), a2a.CodeTaskNotFound)
			mustErr(t, e.call(b, "ListTaskPushNotificationConfigs", `{"taskId":"nope"}`), a2a.CodeTaskNotFound)
			mustErr(t, e.call(b, "DeleteTaskPushNotificationConfig", `{"taskId":"nope","id":"x"}`), a2a.CodeTaskNotFound)
			mustErr(t, e.call(b, "CreateTaskPushNotificationConfig", fmt.Sprintf(`{"taskId":%q,"url":"not a url"}`, id)), a2a.CodeInvalidParams)
			mustErr(t, e.call(b, "CreateTaskPushNotificationConfig", fmt.Sprintf(`{"taskId":%q}`, id)), a2a.CodeInvalidParams)
		})
	}
}

func TestPushNotSupported(t *testing.T) {
	for _, b := range bindings {
		t.Run(b, func(t *testing.T) {
			t.Parallel()
			e := start(t, config{mutate: func(c *a2a.AgentCard, _ *server.Options) { c.Capabilities.PushNotifications = nil }})
			r := mustOK(t, e.call(b, "SendMessage", msg("input-required")))
			id := str(r.value, "task", "id")
			for _, call := range []struct{ method, params string }{
				{"CreateTaskPushNotificationConfig", fmt.Sprintf(`{"taskId":%q,"url":"https://x.example"}`, id)},
				{"GetTaskPushNotificationConfig", fmt.Sprintf(`{"taskId":%q,"id":"c"}`, id)},
				{"ListTaskPushNotificationConfigs", fmt.Sprintf(`{"taskId":%q}`, id)},
				{"DeleteTaskPushNotificationConfig", fmt.Sprintf(`{"taskId":%q,"id":"c"}`, id)},
				{"SendMessage", strings.TrimSuffix(msg("x"), "}") + `,"configuration":{"taskPushNotificationConfig":{"url":"https://x.example"}}}`},
			} {
				mustErr(t, e.call(b, call.method, call.params), a2a.CodePushNotificationNotSupported)
			}
		})
	}
}

func TestVersionAndExtensions(t *testing.T) {
	const ext = "https://example.com/ext/required/v1"
	const opt = "https://example.com/ext/optional/v1"
	for _, b := range bindings {
		t.Run(b, func(t *testing.T) {
			t.Parallel()
			e := start(t, config{mutate: func(c *a2a.AgentCard, _ *server.Options) {
				c.Capabilities.Extensions = []*a2a.AgentExtension{{Uri: ext, Required: true}, {Uri: opt}}
			}})
			exts := map[string]string{"A2A-Extensions": ext + ", " + opt + ", https://unknown.example/x"}
			// docs/decisions.md#b7: missing means 0.3, refused with the supported list.
			w := mustErr(t, e.call(b, "GetTask", `{"id":"x"}`, callOpts{version: ptr(""), headers: exts}), a2a.CodeVersionNotSupported)
			if w.meta["supportedVersions"] != "1.0,0.3" || !strings.Contains(w.message, "1.0") {
				t.Fatalf("version error %+v", w)
			}
			mustErr(t, e.call(b, "GetTask", `{"id":"x"}`, callOpts{version: ptr("0.3"), headers: exts}), a2a.CodeVersionNotSupported)
			mustErr(t, e.call(b, "GetTask", `{"id":"x"}`, callOpts{version: ptr("2.0"), headers: exts}), a2a.CodeVersionNotSupported)
			// Patch versions are ignored.
			mustErr(t, e.call(b, "GetTask", `{"id":"x"}`, callOpts{version: ptr("1.0.7"), headers: exts}), a2a.CodeTaskNotFound)
			// Required extension not activated.
			w = mustErr(t, e.call(b, "GetTask", `{"id":"x"}`), a2a.CodeExtensionSupportRequired)
			if w.meta["extensions"] != ext {
				t.Fatalf("extension error metadata %v", w.meta)
			}
			// Activated extensions are echoed; unknown ones are not.
			r := mustOK(t, e.call(b, "SendMessage", msg("hi"), callOpts{headers: exts}))
			if got := r.header.Get("A2A-Extensions"); got != ext+", "+opt {
				t.Fatalf("A2A-Extensions echo %q", got)
			}
		})
	}
}

func TestVersionQueryParameter(t *testing.T) {
	e := start(t, config{})
	req, _ := http.NewRequest("GET", e.url+"/tasks/none?A2A-Version=1.0", nil)
	mustErr(t, e.do(restB, req), a2a.CodeTaskNotFound)
}

func TestAuthentication(t *testing.T) {
	tokens := map[string]string{"tok-alice": "alice", "tok-bob": "bob"}
	for _, b := range bindings {
		t.Run(b, func(t *testing.T) {
			t.Parallel()
			e := start(t, config{tokens: tokens, mutate: func(c *a2a.AgentCard, o *server.Options) {
				c.SecuritySchemes = map[string]*a2a.SecurityScheme{"bearer": {Scheme: &a2a.SecurityScheme_HttpAuthSecurityScheme{HttpAuthSecurityScheme: &a2a.HTTPAuthSecurityScheme{Scheme: "Bearer"}}}}
			}})
			for _, tok := range []string{"", "wrong"} {
				r := e.call(b, "SendMessage", msg("hi"), callOpts{token: tok})
				mustErr(t, r, a2a.CodeUnauthenticated)
				if r.status != 401 || !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer") {
					t.Fatalf("status %d, WWW-Authenticate %q", r.status, r.header.Get("WWW-Authenticate"))
				}
			}
			alice := callOpts{token: "tok-alice"}
			bob := callOpts{token: "tok-bob"}
			r := mustOK(t, e.call(b, "SendMessage", msg("input-required"), alice))
			id := str(r.value, "task", "id")
			// docs/decisions.md#b12: another principal sees TaskNotFound everywhere.
			mustErr(t, e.call(b, "GetTask", fmt.Sprintf(`{"id":%q}`, id), bob), a2a.CodeTaskNotFound)
			mustErr(t, e.call(b, "CancelTask", fmt.Sprintf(`{"id":%q}`, id), bob), a2a.CodeTaskNotFound)
			mustErr(t, e.call(b, "SubscribeToTask", fmt.Sprintf(`{"id":%q}`, id), bob), a2a.CodeTaskNotFound)
			mustErr(t, e.call(b, "SendMessage", msg("x", fmt.Sprintf(`"taskId":%q`, id)), bob), a2a.CodeTaskNotFound)
			mustErr(t, e.call(b, "ListTaskPushNotificationConfigs", fmt.Sprintf(`{"taskId":%q}`, id), bob), a2a.CodeTaskNotFound)
			mustErr(t, e.call(b, "CreateTaskPushNotificationConfig", fmt.Sprintf(`{"taskId":%q,"url":"https://x.example"}`, id), bob), a2a.CodeTaskNotFound)
			l := mustOK(t, e.call(b, "ListTasks", `{}`, bob))
			if get(l.value, "totalSize") != float64(0) {
				t.Fatalf("bob lists alice's tasks: %s", l.body)
			}
			l = mustOK(t, e.call(b, "ListTasks", `{}`, alice))
			if get(l.value, "totalSize") != float64(1) {
				t.Fatalf("alice's list: %s", l.body)
			}
			mustOK(t, e.call(b, "GetTask", fmt.Sprintf(`{"id":%q}`, id), alice))
			// Tenants are separate scopes too (REST path form / JSON-RPC field).
			if b == restB {
				mustErr(t, e.call(b, "GetTask", fmt.Sprintf(`{"id":%q}`, id), callOpts{token: "tok-alice", tenant: "t2"}), a2a.CodeTaskNotFound)
			} else {
				mustErr(t, e.call(b, "GetTask", fmt.Sprintf(`{"id":%q,"tenant":"t2"}`, id), alice), a2a.CodeTaskNotFound)
			}
		})
	}
	// The public card stays public and declares the scheme.
	e := start(t, config{tokens: tokens})
	resp, err := http.Get(e.url + "/.well-known/agent-card.json")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("card: %v %v", err, resp)
	}
	resp.Body.Close()
}

func TestExtendedCard(t *testing.T) {
	tokens := map[string]string{"tok": "alice"}
	for _, b := range bindings {
		t.Run(b, func(t *testing.T) {
			t.Parallel()
			// Not declared.
			e := start(t, config{tokens: tokens})
			mustErr(t, e.call(b, "GetExtendedAgentCard", "", callOpts{token: "tok"}), a2a.CodeUnsupportedOperation)
			// Declared, not configured.
			e = start(t, config{tokens: tokens, mutate: func(c *a2a.AgentCard, _ *server.Options) { c.Capabilities.ExtendedAgentCard = ptr(true) }})
			mustErr(t, e.call(b, "GetExtendedAgentCard", "", callOpts{token: "tok"}), a2a.CodeExtendedAgentCardNotConfigured)
			r := e.call(b, "GetExtendedAgentCard", "")
			mustErr(t, r, a2a.CodeUnauthenticated)
			// Configured.
			e = start(t, config{tokens: tokens, mutate: func(c *a2a.AgentCard, o *server.Options) {
				c.Capabilities.ExtendedAgentCard = ptr(true)
				x := proto.Clone(c).(*a2a.AgentCard)
				x.Name = "Extended"
				o.ExtendedCard = x
			}})
			r = mustOK(t, e.call(b, "GetExtendedAgentCard", "", callOpts{token: "tok"}))
			if str(r.value, "name") != "Extended" {
				t.Fatalf("extended card %s", r.body)
			}
		})
	}
}

func TestIdempotentResend(t *testing.T) {
	var runs atomic.Int32
	agent := server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		runs.Add(1)
		return em.Artifact(a2a.TextArtifact("a", "x"))
	})
	for _, b := range bindings {
		t.Run(b, func(t *testing.T) {
			e := start(t, config{agent: server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
				if err := agent(ctx, req, em); err != nil {
					return err
				}
				return em.Status(a2a.TaskState_TASK_STATE_COMPLETED, nil)
			})})
			runs.Store(0)
			body := `{"message":{"messageId":"dup-1","role":"ROLE_USER","parts":[{"text":"once"}]}}`
			first := mustOK(t, e.call(b, "SendMessage", body))
			second := mustOK(t, e.call(b, "SendMessage", body))
			if str(first.value, "task", "id") != str(second.value, "task", "id") || runs.Load() != 1 {
				t.Fatalf("resend ran the agent %d times; ids %s %s", runs.Load(), str(first.value, "task", "id"), str(second.value, "task", "id"))
			}
			if n := len(get(second.value, "task", "history").([]any)); n != 1 {
				t.Fatalf("history has %d messages after a resend", n)
			}
			mustErr(t, e.call(b, "SendMessage", `{"message":{"messageId":"dup-1","role":"ROLE_USER","parts":[{"text":"changed"}]}}`), a2a.CodeInvalidParams)
		})
	}
}
