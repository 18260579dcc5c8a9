package equivalence_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"parley.dev/parley/a2a"
)

// getTaskScenarios: reading a task, its history, and who may.
func getTaskScenarios() []scenario {
	return []scenario{
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
			return c.call("GetTask", getTask(unknownTask))
		}, want: want{code: a2a.CodeTaskNotFound, meta: map[string]string{"taskId": unknownTask}}},
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
			return c.call("GetTask", getTask(unknownTask))
		}, want: want{code: a2a.CodeUnauthenticated, check: wantChallenge}},
		{op: "GetTask", name: "extension-required", cfg: extensions, run: func(c *caller) outcome {
			return c.call("GetTask", getTask(unknownTask))
		}, want: want{code: a2a.CodeExtensionSupportRequired, meta: map[string]string{"extensions": extRequired}}},
	}
}

// listTasksScenarios: paging, filters and scope of ListTasks.
func listTasksScenarios() []scenario {
	return []scenario{
		{op: "ListTasks", name: "B5-pages", run: listInPages, want: want{check: func(t *testing.T, o outcome) {
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
	}
}

// cancelTaskScenarios: canceling tasks in each state.
func cancelTaskScenarios() []scenario {
	return []scenario{
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
			return c.call("CancelTask", cancelTask(unknownTask))
		}, want: want{code: a2a.CodeTaskNotFound}},
		{op: "CancelTask", name: "B12-other-principal", cfg: authed, run: func(c *caller) outcome {
			return c.call("CancelTask", cancelTask(c.task(send("input-required"), alice).GetId()), bob)
		}, want: want{code: a2a.CodeTaskNotFound}},
		{op: "CancelTask", name: "unauthenticated", cfg: authed, run: func(c *caller) outcome {
			return c.call("CancelTask", cancelTask(unknownTask))
		}, want: want{code: a2a.CodeUnauthenticated, check: wantChallenge}},
	}
}

// subscribeToTaskScenarios: subscriptions to running and finished tasks.
func subscribeToTaskScenarios() []scenario {
	return []scenario{
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
			return c.call("SubscribeToTask", subscribe(unknownTask))
		}, want: want{code: a2a.CodeTaskNotFound, check: noEvents}},
		{op: "SubscribeToTask", name: "not-declared", cfg: noStreaming, run: func(c *caller) outcome {
			return c.call("SubscribeToTask", subscribe(c.task(send("input-required")).GetId()))
		}, want: want{code: a2a.CodeUnsupportedOperation, check: noEvents}},
		{op: "SubscribeToTask", name: "B12-other-principal", cfg: authed, run: func(c *caller) outcome {
			return c.call("SubscribeToTask", subscribe(c.task(send("input-required"), alice).GetId()), bob)
		}, want: want{code: a2a.CodeTaskNotFound, check: noEvents}},
		{op: "SubscribeToTask", name: "unauthenticated", cfg: authed, run: func(c *caller) outcome {
			return c.call("SubscribeToTask", subscribe(unknownTask))
		}, want: want{code: a2a.CodeUnauthenticated, check: wantChallenge}},
	}
}

// listInPages makes five tasks in one context (and one elsewhere), lists
// the context two tasks a page, checks every page and the order (newest
// first), and returns the last page.
func listInPages(c *caller) outcome {
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
}
