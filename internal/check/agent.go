package check

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"parley.dev/parley/a2a"
)

// The checks that need Parley's conformance agent, by id. Their
// descriptions live here so that they can be reported as skipped when the
// target is another agent.
var agentTable = []Result{
	{ID: "op.send-blocking", Operation: a2a.MethodSendMessage, Title: "a blocking SendMessage returns the finished task with its artifacts",
		Level: "MUST", Section: "§3.2.2, §5.7",
		Requires: "With returnImmediately false the operation MUST wait until the task is terminal or interrupted; the response MUST include the latest task state with all artifacts; REQUIRED members present"},
	{ID: "op.send-message-reply", Operation: a2a.MethodSendMessage, Title: "a direct Message reply is a well-formed agent message",
		Level: "MUST", Section: "§3.1.1, §2.2, §4.4",
		Requires: "SendMessageResponse is exactly one of task or message; the message has messageId, role ROLE_AGENT, parts; for server messages contextId must be provided"},
	{ID: "op.send-input-required", Operation: a2a.MethodSendMessage, Title: "a blocking SendMessage returns at INPUT_REQUIRED",
		Level: "MUST", Section: "§3.2.2",
		Requires: "a blocking call returns when the task reaches an interrupted state (INPUT_REQUIRED, AUTH_REQUIRED)"},
	{ID: "op.send-auth-required", Operation: a2a.MethodSendMessage, Title: "AUTH_REQUIRED comes with a status message",
		Level: "MUST", Section: "§7.6.1, §3.2.2",
		Requires: "to request in-task authorization the agent MUST transition to TASK_STATE_AUTH_REQUIRED and MUST include a TaskStatus message explaining it"},
	{ID: "op.send-rejected", Operation: a2a.MethodSendMessage, Title: "a blocking SendMessage returns at REJECTED and FAILED",
		Level: "MUST", Section: "§3.2.2, §4.1",
		Requires: "REJECTED and FAILED are terminal: a blocking call returns there"},
	{ID: "op.return-immediately", Operation: a2a.MethodSendMessage, Title: "returnImmediately returns before the work is done",
		Level: "MUST", Section: "§3.2.2",
		Requires: "If true, the operation MUST return immediately after creating the task, even if processing is still in progress"},
	{ID: "op.cancel", Operation: a2a.MethodCancelTask, Title: "CancelTask of a working task cancels it",
		Level: "MUST", Section: "§3.1.5",
		Requires: "The operation attempts to cancel the specified task and returns its updated state"},
	{ID: "op.cancel-canceled", Operation: a2a.MethodCancelTask, Title: "CancelTask of a task already canceled",
		Level: "SPEC SILENT", Section: "§3.3.1, §3.1.5",
		Requires: "Cancel is idempotent (§3.3.1), yet TaskNotCancelableError lists canceled tasks (§3.1.5): the spec does not say which a repeat gets"},
	{ID: "op.cancel-completed", Operation: a2a.MethodCancelTask, Title: "CancelTask of a completed task is TaskNotCancelableError",
		Level: "MUST", Section: "§3.1.5, §5.4",
		Requires: "TaskNotCancelableError (-32002 / 400) when the task is not in a cancelable state (e.g. already completed)"},
	{ID: "op.get-task", Operation: a2a.MethodGetTask, Title: "GetTask returns the task with its artifacts",
		Level: "MUST", Section: "§3.1.3, §5.7",
		Requires: "GetTask returns the current state of the task, including status and artifacts; REQUIRED members present"},
	{ID: "B4.history-zero", Row: "B4", Operation: a2a.MethodGetTask, Title: "historyLength 0 returns no history",
		Level: "MUST", Section: "§3.2.4, §2.7",
		Requires: "The server MUST NOT return more messages than the provided value; for 0 the history field SHOULD be omitted"},
	{ID: "B4.history-one", Row: "B4", Operation: a2a.MethodGetTask, Title: "historyLength 1 returns at most one message",
		Level: "MUST", Section: "§3.2.4, §2.7",
		Requires: "The server MUST NOT return more messages than the provided value (the most recent ones)"},
	{ID: "B4.history-unset", Row: "B4", Operation: a2a.MethodGetTask, Title: "historyLength unset",
		Level: "SPEC SILENT", Section: "§3.2.4",
		Requires: "unset: no limit imposed; the server returns its default amount of history (implementation-defined, may be all)"},
	{ID: "B4.history-negative", Row: "B4", Operation: a2a.MethodGetTask, Title: "a negative historyLength",
		Level: "SPEC SILENT", Section: "§3.2.4, §6.5",
		Requires: "the spec defines unset, 0 and N > 0; its validation sample refuses -5 (\"Must be non-negative integer\"); every binding must behave the same (§5.1)"},
	{ID: "B4.send-history-zero", Row: "B4", Operation: a2a.MethodSendMessage, Title: "SendMessage with configuration.historyLength 0 returns no history",
		Level: "MUST", Section: "§2.7, §3.2.4",
		Requires: "SendMessageConfiguration.historyLength: the server MUST NOT return more messages than the provided value"},
	{ID: "B5.walk", Row: "B5", Operation: a2a.MethodListTasks, Title: "pages of a context: pageSize honoured, nextPageToken until the last page, exact totalSize",
		Level: "MUST", Section: "§3.1.4",
		Requires: "cursor-based pagination; nextPageToken MUST be \"\" on the last page and a token before; totalSize is the number of tasks before pagination"},
	{ID: "B5.stable", Row: "B5", Operation: a2a.MethodListTasks, Title: "a task created during a walk neither repeats nor hides a task",
		Level: "MUST", Section: "§3.1.4",
		Requires: "The operation MUST use cursor-based pagination for performance and consistency (offsets shift when tasks are created)"},
	{ID: "B5.context-sorted", Row: "B5", Operation: a2a.MethodListTasks, Title: "the tasks of a context are newest first",
		Level: "MUST", Section: "§3.1.4",
		Requires: "Tasks MUST be sorted by their status timestamp in descending order"},
	{ID: "B5.include-artifacts", Row: "B5", Operation: a2a.MethodListTasks, Title: "includeArtifacts decides whether artifacts are listed",
		Level: "MUST", Section: "§3.1.4",
		Requires: "artifacts are omitted entirely unless includeArtifacts is true"},
	{ID: "B5.status-filter", Row: "B5", Operation: a2a.MethodListTasks, Title: "the status filter returns only tasks in that state",
		Level: "MUST", Section: "§3.1.4, §2.7",
		Requires: "status: filter tasks by their current status state; historyLength 0 lists no history"},
	{ID: "B6.terminal-message", Row: "B6", Operation: a2a.MethodSendMessage, Title: "a message to a completed task is UnsupportedOperationError",
		Level: "MUST", Section: "§3.1.1, §4.3, §5.4",
		Requires: "Messages sent to Tasks in a terminal state cannot accept further messages: UnsupportedOperationError (-32004 / 400 / FAILED_PRECONDITION)"},
	{ID: "B9.infer-context", Row: "B9", Operation: a2a.MethodSendMessage, Title: "a follow-up with only taskId continues the task in its context",
		Level: "MUST", Section: "§3.4.3",
		Requires: "Agents MUST infer contextId from the task if only taskId is provided"},
	{ID: "B9.stored-context", Row: "B9", Operation: a2a.MethodGetTask, Title: "the stored follow-up message carries the inferred contextId",
		Level: "SPEC SILENT", Section: "§3.4.3, §3.7",
		Requires: "the spec does not say whether the stored message is stamped; a different contextId would show a wrong inference"},
	{ID: "B10.mismatch", Row: "B10", Operation: a2a.MethodSendMessage, Title: "a follow-up whose contextId differs from the task's is refused",
		Level: "MUST", Section: "§3.4.3",
		Requires: "Agents MUST reject messages containing mismatching contextId and taskId (error type not specified)"},
	{ID: "B10.mismatch-terminal", Row: "B10", Operation: a2a.MethodSendMessage, Title: "a mismatched contextId on a completed task is refused",
		Level: "MUST", Section: "§3.4.3, §3.1.1",
		Requires: "both rules refuse it; which error comes first is not specified"},
	{ID: "B11.append-unknown", Row: "B11", Operation: a2a.MethodSendMessage, Title: "an artifact chunk with append true for an artifact never sent",
		Level: "SPEC SILENT", Section: "§5.6, §2.3",
		Requires: "append: the content should be appended to a previously sent artifact with the same ID; nothing says what happens when there is none"},
	{ID: "B14.resend-same", Row: "B14", Operation: a2a.MethodSendMessage, Title: "the same message (same messageId) sent twice",
		Level: "MAY", Section: "§3.3.1",
		Requires: "Send Message operations MAY be idempotent; agents may use the messageId to detect duplicates"},
	{ID: "B14.resend-different", Row: "B14", Operation: a2a.MethodSendMessage, Title: "a different message reusing a messageId",
		Level: "SPEC SILENT", Section: "§3.3.1, §2.2",
		Requires: "messageId is unique per message; the spec does not say what a reused one with other content gets"},
	{ID: "B8.stream-type", Row: "B8", Operation: a2a.MethodSendStreamingMessage, Title: "a stream is text/event-stream",
		Level: "MUST", Section: "§9.1, §11.7, §5.1",
		Requires: "Streaming: Server-Sent Events (text/event-stream)"},
	{ID: "B2.stream-first-task", Row: "B2", Operation: a2a.MethodSendStreamingMessage, Title: "a task stream begins with the Task",
		Level: "MUST", Section: "§3.1.2",
		Requires: "If the agent returns a Task, the stream MUST begin with the Task object, followed by zero or more status or artifact update events"},
	{ID: "B2.stream-closes-terminal", Row: "B2", Operation: a2a.MethodSendStreamingMessage, Title: "a task stream closes after the terminal state",
		Level: "MUST", Section: "§3.1.2, §5.4",
		Requires: "The stream MUST close when the task reaches a terminal state"},
	{ID: "stream.event-fields", Operation: a2a.MethodSendStreamingMessage, Title: "every stream event is one StreamResponse member with its REQUIRED fields",
		Level: "MUST", Section: "§3.2.3, §2.3, §5.7",
		Requires: "a StreamResponse has exactly one of task, message, statusUpdate, artifactUpdate; update events carry taskId and contextId (REQUIRED)"},
	{ID: "stream.order", Operation: a2a.MethodSendStreamingMessage, Title: "artifact chunks arrive in order and reassemble",
		Level: "MUST", Section: "§3.5.2, §5.6",
		Requires: "All implementations MUST deliver events in the order they were generated; chunks with append true extend the artifact with the same id"},
	{ID: "stream.jsonrpc-ids", Operation: a2a.MethodSendStreamingMessage, Title: "every JSON-RPC stream event is a response with the request's id",
		Level: "MUST", Section: "§9.4.2, §5.1",
		Requires: "each data line is a complete JSON-RPC response with the same id as the request"},
	{ID: "stream.sse-ids", Operation: a2a.MethodSendStreamingMessage, Title: "SSE id: lines",
		Level: "SPEC SILENT", Section: "§5.1",
		Requires: "the spec defines no event:, id: or retry: fields; clients must not depend on them"},
	{ID: "B2.stream-message", Row: "B2", Operation: a2a.MethodSendStreamingMessage, Title: "a direct reply streams exactly one Message, then closes",
		Level: "MUST", Section: "§3.1.2",
		Requires: "If the agent returns a Message, the stream MUST contain exactly one Message object and then close immediately"},
	{ID: "B2.stream-input-required", Row: "B2", Operation: a2a.MethodSendStreamingMessage, Title: "the stream at INPUT_REQUIRED",
		Level: "SPEC SILENT", Section: "§3.1.2, §11.7, D3",
		Requires: "only terminal states MUST close a stream; the REST text and the guide close at interrupted states too (a conflict)"},
	{ID: "B2.stream-auth-open", Row: "B2", Operation: a2a.MethodSendStreamingMessage, Title: "the stream stays open through AUTH_REQUIRED",
		Level: "SHOULD", Section: "§7.6.1",
		Requires: "the agent SHOULD maintain any active response streams with the client after setting the TaskState to TASK_STATE_AUTH_REQUIRED"},
	{ID: "B2.stream-closes-on-cancel", Row: "B2", Operation: a2a.MethodSendStreamingMessage, Title: "the open stream ends with CANCELED when the task is canceled",
		Level: "MUST", Section: "§3.1.2, §3.5.2",
		Requires: "the stream MUST close when the task reaches a terminal state (CANCELED)"},
	{ID: "B2.subscribe-snapshot", Row: "B2", Operation: a2a.MethodSubscribeToTask, Title: "SubscribeToTask starts with a Task snapshot and closes at the terminal state",
		Level: "MUST", Section: "§3.1.6",
		Requires: "The operation MUST return a Task object as the first event; the stream MUST terminate when the task reaches a terminal state"},
	{ID: "B2.subscribe-terminal", Row: "B2", Operation: a2a.MethodSubscribeToTask, Title: "SubscribeToTask of a completed task is UnsupportedOperationError",
		Level: "MUST", Section: "§3.1.6",
		Requires: "UnsupportedOperationError if the task is already in a terminal state"},
	{ID: "B2.fanout", Row: "B2", Operation: a2a.MethodSubscribeToTask, Title: "every subscriber gets the same events; one closing affects no other",
		Level: "MUST", Section: "§3.5.2",
		Requires: "Events MUST be broadcast to all active streams; each stream MUST receive the same events in the same order; closing one stream MUST NOT affect other active streams"},
	{ID: "push.create", Operation: a2a.MethodCreateTaskPushNotificationConfig, Title: "CreateTaskPushNotificationConfig returns the configuration with an id",
		Level: "MUST", Section: "§3.1.7",
		Requires: "the created configuration is returned with assigned ID"},
	{ID: "push.get", Operation: a2a.MethodGetTaskPushNotificationConfig, Title: "GetTaskPushNotificationConfig returns the configuration",
		Level: "MUST", Section: "§3.1.8",
		Requires: "The operation MUST return configuration details including webhook URL and notification settings"},
	{ID: "push.list", Operation: a2a.MethodListTaskPushNotificationConfigs, Title: "ListTaskPushNotificationConfigs lists it",
		Level: "MUST", Section: "§3.1.9",
		Requires: "The operation MUST return all active push notification configurations for the specified task"},
	{ID: "push.delete", Operation: a2a.MethodDeleteTaskPushNotificationConfig, Title: "DeleteTaskPushNotificationConfig removes it, and a second delete has the same effect",
		Level: "MUST", Section: "§3.1.10",
		Requires: "The operation MUST permanently remove the configuration and MUST be idempotent: multiple deletions of the same config have the same effect"},
	{ID: "push.get-deleted", Operation: a2a.MethodGetTaskPushNotificationConfig, Title: "a deleted configuration is gone",
		Level: "MUST", Section: "§3.1.8",
		Requires: "The operation MUST fail if the configuration does not exist (TaskNotFoundError)"},
	{ID: "B3.delivery", Row: "B3", Operation: a2a.MethodSendMessage, Title: "a webhook registered with the message receives the task's updates",
		Level: "MUST", Section: "§4.3.3, §6.2",
		Requires: "When a task update occurs, the agent sends an HTTP POST to the configured webhook; Agents MUST attempt delivery at least once for each configured webhook"},
	{ID: "B3.body", Row: "B3", Title: "a notification body is a StreamResponse for the task",
		Level: "MUST", Section: "§4.3.3, §3.5.1",
		Requires: "The payload uses the StreamResponse format: an object with exactly one of task, message, statusUpdate, artifactUpdate, in the HTTP+JSON form whatever the agent's binding"},
	{ID: "B3.authorization", Row: "B3", Title: "a notification carries the configured credentials",
		Level: "MUST", Section: "§4.3.3, §13.2",
		Requires: "The agent MUST include authentication credentials in the request headers as specified in the authentication field: Authorization: <scheme> <credentials>"},
	{ID: "B3.content-type", Row: "B3", Title: "a notification is application/a2a+json",
		Level: "SHOULD", Section: "§4.3.3",
		Requires: "the specified request format: Content-Type: application/a2a+json"},
	{ID: "B3.token", Row: "B3", Title: "where the configuration's token travels",
		Level: "SPEC SILENT", Section: "§6.3, §2.4",
		Requires: "the token field has no defined transport"},
	{ID: "B12.get", Row: "B12", Operation: a2a.MethodGetTask, Title: "another principal cannot read the task",
		Level: "MUST", Section: "§3.3.2, §13.1",
		Requires: "Servers MUST NOT reveal the existence of resources the client is not authorized to access; a not found error for inaccessible resources (TaskNotFoundError, never 403)"},
	{ID: "B12.cancel", Row: "B12", Operation: a2a.MethodCancelTask, Title: "another principal cannot cancel the task",
		Level: "MUST", Section: "§13.1, §3.3.2",
		Requires: "Task-related operations (Cancel, Subscribe, Push Notification Config) MUST verify the client has appropriate access rights"},
	{ID: "B12.subscribe", Row: "B12", Operation: a2a.MethodSubscribeToTask, Title: "another principal cannot subscribe to the task",
		Level: "MUST", Section: "§13.1, §3.3.2",
		Requires: "Task-related operations MUST verify access; inaccessible tasks are not found"},
	{ID: "B12.send", Row: "B12", Operation: a2a.MethodSendMessage, Title: "another principal cannot continue the task",
		Level: "MUST", Section: "§3.4.2, §13.1",
		Requires: "a taskId that does not correspond to an existing (accessible) task gets TaskNotFoundError"},
	{ID: "B12.push", Row: "B12", Operation: a2a.MethodListTaskPushNotificationConfigs, Title: "another principal cannot read the task's push configurations",
		Level: "MUST", Section: "§13.1",
		Requires: "Push Notification Config operations MUST verify the client has appropriate access rights"},
	{ID: "B12.list", Row: "B12", Operation: a2a.MethodListTasks, Title: "another principal's ListTasks does not show the task",
		Level: "MUST", Section: "§3.1.4, §13.1",
		Requires: "ListTasks MUST only return tasks visible to the authenticated client, even without filters"},
}

// agentDesc returns the description of an agent check.
func agentDesc(id string) Result {
	for _, r := range agentTable {
		if r.ID == id {
			return r
		}
	}
	panic("check: no agent check " + id)
}

// agentCatalogue lists the agent checks (reported as skipped for other
// agents).
func agentCatalogue(*a2a.AgentCard) []Result { return agentTable }

// ac starts an agent check of this binding.
func (b *bindingRun) ac(id string) *rec { return b.check(agentDesc(id)) }

// send sends a message with the text.
func (b *bindingRun) send(ctx context.Context, m *a2a.Message, cfg *a2a.SendMessageConfiguration, o callOpts) (*result, *a2a.SendMessageResponse) {
	res := b.t.call(ctx, a2a.MethodSendMessage, &a2a.SendMessageRequest{Message: m, Configuration: cfg}, o)
	resp := &a2a.SendMessageResponse{}
	if res.ok() {
		if err := res.decode(resp); err != nil {
			res.broken = "the result is not a SendMessageResponse: " + err.Error()
		}
	}
	return res, resp
}

// sendTask sends text and returns the task, or records why not on r.
func (b *bindingRun) sendTask(ctx context.Context, r *rec, text string, cfg *a2a.SendMessageConfiguration) *a2a.Task {
	res, resp := b.send(ctx, a2a.UserMessage(text), cfg, callOpts{})
	if resp.GetTask() == nil {
		r.saw(res)
		if !r.incomplete(res) {
			r.skip("setting up: SendMessage(%q) did not return a task (%s)", text, res.outcome())
		}
		return nil
	}
	return resp.GetTask()
}

func (b *bindingRun) getTask(ctx context.Context, id string, hl *int32) (*result, *a2a.Task) {
	res := b.t.call(ctx, a2a.MethodGetTask, &a2a.GetTaskRequest{Id: id, HistoryLength: hl}, callOpts{})
	t := &a2a.Task{}
	if res.ok() {
		if err := res.decode(t); err != nil {
			res.broken = "the result is not a Task: " + err.Error()
		}
	}
	return res, t
}

func (b *bindingRun) cancel(ctx context.Context, id string) {
	b.t.call(ctx, a2a.MethodCancelTask, &a2a.CancelTaskRequest{Id: id}, callOpts{})
}

// agentChecks runs the checks that need the conformance agent.
func (b *bindingRun) agentChecks(ctx context.Context) {
	completed := b.sendChecks(ctx)
	b.cancelChecks(ctx, completed)
	b.historyChecks(ctx, completed)
	b.contextChecks(ctx, completed)
	b.walkChecks(ctx)
	b.idempotencyChecks(ctx)
	b.streamChecks(ctx, completed)
	b.pushChecks(ctx)
	b.scopeChecks(ctx)
}

// sendChecks grades SendMessage; it returns a completed task (or nil).
func (b *bindingRun) sendChecks(ctx context.Context) *a2a.Task {
	r := b.ac("op.send-blocking")
	res, resp := b.send(ctx, a2a.UserMessage("hello"), nil, callOpts{})
	r.saw(res)
	var completed *a2a.Task
	if !r.incomplete(res) {
		t := resp.GetTask()
		switch {
		case !res.ok():
			r.fail("SendMessage failed: %s", res.outcome())
		case t == nil:
			r.fail("no task in the response (the conformance agent answers \"hello\" with a task)")
		case t.GetStatus().GetState() != a2a.TaskState_TASK_STATE_COMPLETED:
			r.fail("state %s; a blocking call must wait for the end", stateName(t.GetStatus().GetState()))
		case len(t.GetArtifacts()) == 0 || a2a.JoinText(t.GetArtifacts()[0].GetParts()) != "hello":
			r.fail("COMPLETED, but the artifacts %v do not hold the echo \"hello\"", t.GetArtifacts())
		default:
			if v := a2a.CheckRequired(resp); len(v) > 0 {
				r.fail("REQUIRED member missing: %s: %s", v[0].Field, v[0].Description)
			} else {
				r.pass("COMPLETED with artifact %q", t.GetArtifacts()[0].GetArtifactId())
			}
			completed = t
		}
	}

	r = b.ac("op.send-message-reply")
	res, resp = b.send(ctx, a2a.UserMessage("message"), nil, callOpts{})
	r.saw(res)
	if !r.incomplete(res) {
		m := resp.GetMessage()
		switch {
		case !res.ok():
			r.fail("SendMessage failed: %s", res.outcome())
		case m == nil:
			r.fail("no message in the response")
		case m.GetRole() != a2a.Role_ROLE_AGENT:
			r.fail("role %s, want ROLE_AGENT", m.GetRole())
		case len(a2a.CheckRequired(m)) > 0:
			v := a2a.CheckRequired(m)
			r.fail("REQUIRED member missing: %s: %s", v[0].Field, v[0].Description)
		case m.GetContextId() == "":
			r.fail("the agent's message has no contextId (\"for server messages, context_id must be provided\")")
		default:
			r.pass("message %q, contextId %s", a2a.JoinText(m.GetParts()), m.GetContextId())
		}
	}

	r = b.ac("op.send-input-required")
	res, resp = b.send(ctx, a2a.UserMessage("input-required"), nil, callOpts{})
	r.saw(res)
	if !r.incomplete(res) {
		t := resp.GetTask()
		switch {
		case t == nil:
			r.fail("no task: %s", res.outcome())
		case t.GetStatus().GetState() != a2a.TaskState_TASK_STATE_INPUT_REQUIRED:
			r.fail("state %s, want INPUT_REQUIRED", stateName(t.GetStatus().GetState()))
		default:
			r.pass("INPUT_REQUIRED: %q", a2a.JoinText(t.GetStatus().GetMessage().GetParts()))
			b.cancel(ctx, t.GetId())
		}
	}

	r = b.ac("op.send-auth-required")
	res, resp = b.send(ctx, a2a.UserMessage("auth-required"), nil, callOpts{})
	r.saw(res)
	if !r.incomplete(res) {
		t := resp.GetTask()
		switch {
		case t == nil:
			r.fail("no task: %s", res.outcome())
		case t.GetStatus().GetState() != a2a.TaskState_TASK_STATE_AUTH_REQUIRED:
			r.fail("state %s, want AUTH_REQUIRED", stateName(t.GetStatus().GetState()))
		case len(t.GetStatus().GetMessage().GetParts()) == 0:
			r.fail("AUTH_REQUIRED without a status message")
		default:
			r.pass("AUTH_REQUIRED: %q", a2a.JoinText(t.GetStatus().GetMessage().GetParts()))
		}
		if t != nil {
			b.cancel(ctx, t.GetId())
		}
	}

	r = b.ac("op.send-rejected")
	res1, resp1 := b.send(ctx, a2a.UserMessage("reject"), nil, callOpts{})
	res2, resp2 := b.send(ctx, a2a.UserMessage("fail"), nil, callOpts{})
	r.Sent = describeRequest(res1.ex) + " | " + describeRequest(res2.ex)
	r.Received = describeResponse(res1) + " | " + describeResponse(res2)
	switch {
	case res1.failed() || res2.failed():
		r.skip("could not complete the requests")
	case resp1.GetTask().GetStatus().GetState() == a2a.TaskState_TASK_STATE_REJECTED && resp2.GetTask().GetStatus().GetState() == a2a.TaskState_TASK_STATE_FAILED:
		r.pass("REJECTED and FAILED")
	default:
		r.fail("got %s and %s; want REJECTED and FAILED", res1.outcome()+"/"+stateName(resp1.GetTask().GetStatus().GetState()), res2.outcome()+"/"+stateName(resp2.GetTask().GetStatus().GetState()))
	}

	r = b.ac("B6.terminal-message")
	if completed == nil {
		r.skip("no completed task (op.send-blocking failed)")
	} else {
		m := a2a.UserMessage("again")
		m.TaskId, m.ContextId = completed.GetId(), completed.GetContextId()
		res, _ := b.send(ctx, m, nil, callOpts{})
		if r.expect(b.t.binding, res, a2a.CodeUnsupportedOperation) {
			r.same()
		}
		b.probes["SendMessage to a completed task"] = outcomeKey(res)
	}
	return completed
}

// cancelChecks grades returnImmediately and CancelTask.
func (b *bindingRun) cancelChecks(ctx context.Context, completed *a2a.Task) {
	r := b.ac("op.return-immediately")
	start := time.Now()
	res, resp := b.send(ctx, a2a.UserMessage("slow 3000"), &a2a.SendMessageConfiguration{ReturnImmediately: true}, callOpts{})
	took := time.Since(start)
	r.saw(res)
	var running *a2a.Task
	if !r.incomplete(res) {
		t := resp.GetTask()
		switch {
		case t == nil:
			r.fail("no task: %s", res.outcome())
		case a2a.IsTerminal(t.GetStatus().GetState()):
			r.fail("the task came back %s after %v: the call waited", stateName(t.GetStatus().GetState()), took.Round(time.Millisecond))
		case took > 2500*time.Millisecond:
			r.fail("the call took %v for work of 3 s", took.Round(time.Millisecond))
		default:
			r.pass("%s after %v", stateName(t.GetStatus().GetState()), took.Round(time.Millisecond))
			running = t
		}
	}

	r = b.ac("op.cancel")
	if running == nil {
		r.skip("no running task (op.return-immediately failed)")
	} else {
		res := b.t.call(ctx, a2a.MethodCancelTask, &a2a.CancelTaskRequest{Id: running.GetId()}, callOpts{})
		r.saw(res)
		t := &a2a.Task{}
		if !r.incomplete(res) {
			switch {
			case !res.ok():
				r.fail("CancelTask failed: %s", res.outcome())
			case res.decode(t) != nil:
				r.fail("the result is not a Task")
			case t.GetStatus().GetState() == a2a.TaskState_TASK_STATE_CANCELED:
				r.pass("CANCELED")
			default:
				// Cancellation may still be under way; GetTask tells.
				deadline := time.Now().Add(2 * time.Second)
				state := t.GetStatus().GetState()
				for time.Now().Before(deadline) && state != a2a.TaskState_TASK_STATE_CANCELED {
					time.Sleep(100 * time.Millisecond)
					_, g := b.getTask(ctx, running.GetId(), nil)
					state = g.GetStatus().GetState()
				}
				if state == a2a.TaskState_TASK_STATE_CANCELED {
					r.pass("returned %s, CANCELED shortly after", stateName(t.GetStatus().GetState()))
				} else {
					r.fail("returned %s and the task is %s 2 s later", stateName(t.GetStatus().GetState()), stateName(state))
				}
			}
		}
		r = b.ac("op.cancel-canceled")
		res = b.t.call(ctx, a2a.MethodCancelTask, &a2a.CancelTaskRequest{Id: running.GetId()}, callOpts{})
		r.saw(res)
		if !r.incomplete(res) {
			if res.ok() {
				r.same().na("answered with the task (idempotent)")
			} else {
				r.differs("Parley returns the canceled task unchanged").na("%s", describeError(res.err))
			}
		}
	}
	if running == nil {
		b.ac("op.cancel-canceled").skip("no canceled task")
	}

	r = b.ac("op.cancel-completed")
	if completed == nil {
		r.skip("no completed task (op.send-blocking failed)")
	} else {
		res := b.t.call(ctx, a2a.MethodCancelTask, &a2a.CancelTaskRequest{Id: completed.GetId()}, callOpts{})
		r.expect(b.t.binding, res, a2a.CodeTaskNotCancelable)
		b.probes["CancelTask of a completed task"] = outcomeKey(res)
	}

	r = b.ac("op.get-task")
	if completed == nil {
		r.skip("no completed task (op.send-blocking failed)")
		return
	}
	res, t := b.getTask(ctx, completed.GetId(), nil)
	r.saw(res)
	if !r.incomplete(res) {
		switch {
		case !res.ok():
			r.fail("GetTask failed: %s", res.outcome())
		case t.GetId() != completed.GetId() || t.GetStatus().GetState() != a2a.TaskState_TASK_STATE_COMPLETED:
			r.fail("got task %s in state %s", t.GetId(), stateName(t.GetStatus().GetState()))
		case len(t.GetArtifacts()) == 0:
			r.fail("the completed task has no artifacts")
		case len(a2a.CheckRequired(t)) > 0:
			v := a2a.CheckRequired(t)
			r.fail("REQUIRED member missing: %s: %s", v[0].Field, v[0].Description)
		default:
			r.pass("COMPLETED, %d artifact(s)", len(t.GetArtifacts()))
		}
	}
}

// historyChecks grades historyLength (B4).
func (b *bindingRun) historyChecks(ctx context.Context, completed *a2a.Task) {
	// A task with a longer history: input-required, then a follow-up.
	setup := b.ac("B4.history-zero")
	parked := b.sendTask(ctx, setup, "input-required", nil)
	var id string
	if parked != nil {
		m := a2a.UserMessage("more")
		m.TaskId = parked.GetId()
		b.send(ctx, m, nil, callOpts{})
		id = parked.GetId()
	} else if completed != nil {
		id = completed.GetId()
	}
	if id == "" {
		for _, c := range []string{"B4.history-one", "B4.history-unset", "B4.history-negative", "B4.send-history-zero"} {
			b.ac(c).skip("no task to read")
		}
		setup.skip("no task to read")
		return
	}
	_, full := b.getTask(ctx, id, nil)
	n := len(full.GetHistory())

	r := setup
	res, t := b.getTask(ctx, id, ptr[int32](0))
	r.saw(res)
	if !r.incomplete(res) {
		switch {
		case !res.ok():
			r.fail("GetTask failed: %s", res.outcome())
		case len(t.GetHistory()) > 0:
			r.fail("%d history messages for historyLength 0", len(t.GetHistory()))
		case strings.Contains(string(res.raw), `"history"`) && historyMember(res.raw):
			r.differs("Parley omits the member").warn("an empty history member (the field SHOULD be omitted)")
		default:
			r.same().pass("no history")
		}
	}

	r = b.ac("B4.history-one")
	res, t = b.getTask(ctx, id, ptr[int32](1))
	r.saw(res)
	if !r.incomplete(res) {
		switch {
		case !res.ok():
			r.fail("GetTask failed: %s", res.outcome())
		case len(t.GetHistory()) > 1:
			r.fail("%d history messages for historyLength 1", len(t.GetHistory()))
		case n < 2:
			r.na("the task's full history has %d message(s): too short to tell", n)
		case len(t.GetHistory()) == 1 && !msgEqual(t.GetHistory()[0], full.GetHistory()[n-1]):
			r.differs("Parley returns the most recent").warn("one message, but not the most recent one")
		default:
			r.same().pass("%d of %d messages", len(t.GetHistory()), n)
		}
	}

	r = b.ac("B4.history-unset")
	res, _ = b.getTask(ctx, id, nil)
	r.saw(res)
	if !r.incomplete(res) {
		if res.ok() {
			r.na("%d messages returned", n)
		} else {
			r.na("GetTask failed: %s", res.outcome())
		}
	}

	r = b.ac("B4.history-negative")
	res, t = b.getTask(ctx, id, ptr[int32](-1))
	r.saw(res)
	b.probes["GetTask with historyLength -1"] = outcomeKey(res)
	if !r.incomplete(res) {
		switch {
		case res.err.is(a2a.CodeInvalidParams):
			r.same().na("refused: %s", describeError(res.err))
		case res.ok():
			r.differs("Parley refuses with InvalidParamsError").na("accepted: the task came back with %d history messages", len(t.GetHistory()))
		default:
			r.differs("Parley refuses with InvalidParamsError").na("%s", describeError(res.err))
		}
	}

	r = b.ac("B4.send-history-zero")
	res, resp := b.send(ctx, a2a.UserMessage("hello"), &a2a.SendMessageConfiguration{HistoryLength: ptr[int32](0)}, callOpts{})
	r.saw(res)
	if !r.incomplete(res) {
		switch {
		case resp.GetTask() == nil:
			r.fail("no task: %s", res.outcome())
		case len(resp.GetTask().GetHistory()) > 0:
			r.differs("Parley honours it").fail("%d history messages for historyLength 0", len(resp.GetTask().GetHistory()))
		default:
			r.same().pass("no history")
		}
	}
}

// contextChecks grades follow-ups: B9 and B10.
func (b *bindingRun) contextChecks(ctx context.Context, completed *a2a.Task) {
	r := b.ac("B9.infer-context")
	parked := b.sendTask(ctx, r, "input-required", nil)
	if parked == nil {
		b.ac("B9.stored-context").skip("no parked task")
	} else {
		m := a2a.UserMessage("follow-up")
		m.TaskId = parked.GetId()
		res, resp := b.send(ctx, m, nil, callOpts{})
		r.saw(res)
		if !r.incomplete(res) {
			t := resp.GetTask()
			switch {
			case t == nil:
				r.fail("the follow-up did not return the task: %s", res.outcome())
			case t.GetId() != parked.GetId():
				r.fail("the follow-up created task %s instead of continuing %s", t.GetId(), parked.GetId())
			case t.GetContextId() != parked.GetContextId():
				r.fail("the task's contextId changed from %s to %s", parked.GetContextId(), t.GetContextId())
			case t.GetStatus().GetState() != a2a.TaskState_TASK_STATE_COMPLETED:
				r.fail("state %s after the follow-up; want COMPLETED", stateName(t.GetStatus().GetState()))
			default:
				r.pass("continued in context %s and COMPLETED", t.GetContextId())
			}
		}
		r2 := b.ac("B9.stored-context")
		res, t := b.getTask(ctx, parked.GetId(), nil)
		r2.saw(res)
		if !r2.incomplete(res) {
			var stored *a2a.Message
			for _, h := range t.GetHistory() {
				if h.GetMessageId() == m.GetMessageId() {
					stored = h
				}
			}
			switch {
			case stored == nil:
				r2.na("the follow-up is not in the history (the agent decides what history keeps, §3.7)")
			case stored.GetContextId() == parked.GetContextId():
				r2.same().na("stamped with the task's contextId")
			case stored.GetContextId() == "":
				r2.differs("Parley stamps the inferred contextId on the stored message").na("stored without a contextId (read it from the Task)")
			default:
				r2.differs("Parley stamps the task's contextId").fail("stored with contextId %s, not the task's %s: the context was not inferred from the task", stored.GetContextId(), parked.GetContextId())
			}
		}
	}

	r = b.ac("B10.mismatch")
	parked = b.sendTask(ctx, r, "input-required", nil)
	if parked != nil {
		m := a2a.UserMessage("follow-up")
		m.TaskId, m.ContextId = parked.GetId(), "parley-check-other-context"
		res, _ := b.send(ctx, m, nil, callOpts{})
		r.saw(res)
		b.probes["a follow-up with a mismatched contextId"] = outcomeKey(res)
		if !r.incomplete(res) {
			_, after := b.getTask(ctx, parked.GetId(), nil)
			switch {
			case res.ok():
				r.fail("accepted (task now %s)", stateName(after.GetStatus().GetState()))
			case after.GetStatus().GetState() != a2a.TaskState_TASK_STATE_INPUT_REQUIRED:
				r.fail("refused with %s, but the task moved to %s", describeError(res.err), stateName(after.GetStatus().GetState()))
			case res.err.is(a2a.CodeInvalidParams):
				r.same().pass("refused: %s", describeError(res.err))
			default:
				r.differs("Parley answers InvalidParamsError").pass("refused: %s", describeError(res.err))
			}
		}
		b.cancel(ctx, parked.GetId())
	}

	r = b.ac("B10.mismatch-terminal")
	if completed == nil {
		r.skip("no completed task")
		return
	}
	m := a2a.UserMessage("again")
	m.TaskId, m.ContextId = completed.GetId(), "parley-check-other-context"
	res, _ := b.send(ctx, m, nil, callOpts{})
	r.saw(res)
	if !r.incomplete(res) {
		switch {
		case res.ok():
			r.fail("accepted")
		case res.err.is(a2a.CodeInvalidParams):
			r.same().pass("refused: %s (the contextId is checked first)", describeError(res.err))
		default:
			r.differs("Parley checks the contextId first (InvalidParamsError)").pass("refused: %s", describeError(res.err))
		}
	}
}

// walkChecks grades pagination over a context of three tasks (B5).
func (b *bindingRun) walkChecks(ctx context.Context) {
	r := b.ac("B5.walk")
	first := b.sendTask(ctx, r, "hello", nil)
	if first == nil {
		for _, id := range []string{"B5.stable", "B5.context-sorted", "B5.include-artifacts", "B5.status-filter"} {
			b.ac(id).skip("no task to list")
		}
		return
	}
	cid := first.GetContextId()
	ids := []string{first.GetId()}
	sendIn := func() string {
		m := a2a.UserMessage("hello")
		m.ContextId = cid
		_, resp := b.send(ctx, m, nil, callOpts{})
		return resp.GetTask().GetId()
	}
	for range 2 {
		if id := sendIn(); id != "" {
			ids = append(ids, id)
		}
	}
	list := func(req *a2a.ListTasksRequest) (*result, *a2a.ListTasksResponse) {
		req.ContextId = cid
		res := b.t.call(ctx, a2a.MethodListTasks, req, callOpts{})
		out := &a2a.ListTasksResponse{}
		if res.ok() {
			if err := res.decode(out); err != nil {
				res.broken = err.Error()
			}
		}
		return res, out
	}
	res1, p1 := list(&a2a.ListTasksRequest{PageSize: ptr[int32](2)})
	r.saw(res1)
	if len(ids) != 3 {
		r.skip("setting up: could not create three tasks in context %s (tasks: %v)", cid, ids)
	} else if !r.incomplete(res1) {
		switch {
		case !res1.ok():
			r.fail("ListTasks(contextId, pageSize 2) failed: %s", res1.outcome())
		case len(p1.GetTasks()) != 2:
			r.fail("%d tasks on a page of 2 (3 in the context)", len(p1.GetTasks()))
		case p1.GetNextPageToken() == "":
			r.fail("no nextPageToken although a third task remains")
		case p1.GetTotalSize() != 3:
			r.fail("totalSize %d, want 3", p1.GetTotalSize())
		default:
			r.pass("2 tasks, a token, totalSize 3")
		}
	}

	// A fourth task created during the walk.
	r = b.ac("B5.stable")
	if !res1.ok() || p1.GetNextPageToken() == "" {
		r.skip("no first page with a token")
	} else {
		sendIn()
		res2, p2 := list(&a2a.ListTasksRequest{PageSize: ptr[int32](2), PageToken: p1.GetNextPageToken()})
		r.saw(res2)
		if !r.incomplete(res2) {
			seen := map[string]int{}
			for _, t := range append(slices.Clone(p1.GetTasks()), p2.GetTasks()...) {
				seen[t.GetId()]++
			}
			var dup, missing []string
			for id, n := range seen {
				if n > 1 {
					dup = append(dup, id)
				}
			}
			for _, id := range ids {
				if seen[id] == 0 {
					missing = append(missing, id)
				}
			}
			switch {
			case !res2.ok():
				r.fail("the second page failed: %s", res2.outcome())
			case len(dup) > 0:
				r.differs("Parley's cursor is keyed on (status timestamp, id)").fail("the second page repeats %v: the token behaves like an offset", dup)
			case len(missing) > 0:
				r.differs("Parley's cursor is keyed on (status timestamp, id)").fail("%v listed on neither page", missing)
			case p2.GetNextPageToken() != "":
				r.warn("all three tasks seen, but the last page has nextPageToken %q", p2.GetNextPageToken())
			default:
				r.same().pass("the second page holds the remaining task; nextPageToken \"\"")
			}
		}
	}

	r = b.ac("B5.context-sorted")
	res, all := list(&a2a.ListTasksRequest{})
	r.saw(res)
	if !r.incomplete(res) {
		if !res.ok() {
			r.fail("ListTasks failed: %s", res.outcome())
		} else {
			sortedCheck(r, all.GetTasks())
		}
	}

	r = b.ac("B5.include-artifacts")
	resA, withA := list(&a2a.ListTasksRequest{IncludeArtifacts: ptr(true)})
	r.Sent = describeRequest(res.ex) + " | " + describeRequest(resA.ex)
	r.Received = describeResponse(res) + " | " + describeResponse(resA)
	switch {
	case res.failed() || resA.failed():
		r.skip("could not complete the requests")
	case !res.ok() || !resA.ok():
		r.fail("ListTasks failed: %s / %s", res.outcome(), resA.outcome())
	case anyArtifacts(all.GetTasks()) || artifactsMember(res.raw):
		r.fail("artifacts listed without includeArtifacts")
	case !everyArtifacts(withA.GetTasks()):
		r.fail("includeArtifacts true, but completed tasks come without their artifacts")
	default:
		r.same().pass("omitted by default, present with includeArtifacts")
	}

	r = b.ac("B5.status-filter")
	res, filtered := list(&a2a.ListTasksRequest{Status: a2a.TaskState_TASK_STATE_COMPLETED, HistoryLength: ptr[int32](0)})
	r.saw(res)
	if !r.incomplete(res) {
		var wrong []string
		for _, t := range filtered.GetTasks() {
			if t.GetStatus().GetState() != a2a.TaskState_TASK_STATE_COMPLETED {
				wrong = append(wrong, stateName(t.GetStatus().GetState()))
			}
		}
		switch {
		case !res.ok():
			r.fail("ListTasks failed: %s", res.outcome())
		case len(wrong) > 0:
			r.fail("tasks in other states listed: %v", wrong)
		case len(filtered.GetTasks()) < 3:
			r.fail("%d tasks; the context has at least 3 COMPLETED", len(filtered.GetTasks()))
		case anyHistory(filtered.GetTasks()):
			r.fail("historyLength 0, but tasks carry history")
		default:
			r.pass("%d COMPLETED tasks, no history", len(filtered.GetTasks()))
		}
	}
}

// idempotencyChecks grades resent messages (B14) and B11.
func (b *bindingRun) idempotencyChecks(ctx context.Context) {
	r := b.ac("B11.append-unknown")
	res, resp := b.send(ctx, a2a.UserMessage("append-unknown"), nil, callOpts{})
	r.saw(res)
	if !r.incomplete(res) {
		t := resp.GetTask()
		switch {
		case t == nil:
			r.differs("Parley starts a new artifact").na("no task: %s", res.outcome())
		case t.GetStatus().GetState() == a2a.TaskState_TASK_STATE_COMPLETED && hasArtifact(t, "never-sent"):
			r.same().na("COMPLETED; the chunk started a new artifact")
		case t.GetStatus().GetState() == a2a.TaskState_TASK_STATE_COMPLETED:
			r.differs("Parley starts a new artifact").na("COMPLETED; the chunk was dropped")
		default:
			r.differs("Parley starts a new artifact").na("the task ended %s", stateName(t.GetStatus().GetState()))
		}
	}

	r = b.ac("B14.resend-same")
	m := a2a.UserMessage("hello")
	res1, resp1 := b.send(ctx, m, nil, callOpts{})
	res2, resp2 := b.send(ctx, m, nil, callOpts{})
	r.Sent = "the same request twice: " + describeRequest(res1.ex)
	r.Received = describeResponse(res1) + " | " + describeResponse(res2)
	switch {
	case res1.failed() || res2.failed():
		r.skip("could not complete the requests")
	case resp1.GetTask() == nil:
		r.skip("the first send returned no task: %s", res1.outcome())
	case resp2.GetTask().GetId() == resp1.GetTask().GetId():
		r.same().na("the resend returned the original task %s", resp1.GetTask().GetId())
	case resp2.GetTask() != nil:
		r.differs("Parley returns the original result without running the agent again").na("the resend created a second task %s", resp2.GetTask().GetId())
	default:
		r.differs("Parley returns the original result").na("the resend answered %s", res2.outcome())
	}

	r = b.ac("B14.resend-different")
	m2 := a2a.UserMessage("something else")
	m2.MessageId = m.GetMessageId()
	res3, resp3 := b.send(ctx, m2, nil, callOpts{})
	r.saw(res3)
	if !r.incomplete(res3) {
		switch {
		case res3.err.is(a2a.CodeInvalidParams):
			r.same().na("refused: %s", describeError(res3.err))
		case resp3.GetTask() != nil:
			r.differs("Parley refuses with InvalidParamsError").na("accepted as a new message (task %s)", resp3.GetTask().GetId())
		default:
			r.differs("Parley refuses with InvalidParamsError").na("%s", res3.outcome())
		}
	}
}

// settledTerminal reports whether a stream has reached the point where it
// must close: a Message, a terminal state, or an error.
func settledTerminal(evs []*event) bool {
	if len(evs) == 0 {
		return false
	}
	last := evs[len(evs)-1]
	return last.Resp.GetMessage() != nil || a2a.IsTerminal(last.state()) || last.Err != nil
}

// streamChecks grades streaming (B2, B8).
func (b *bindingRun) streamChecks(ctx context.Context, completed *a2a.Task) {
	ids := []string{"B8.stream-type", "B2.stream-first-task", "B2.stream-closes-terminal", "stream.event-fields", "stream.order",
		"stream.jsonrpc-ids", "stream.sse-ids", "B2.stream-message", "B2.stream-input-required", "B2.stream-auth-open",
		"B2.stream-closes-on-cancel", "B2.subscribe-snapshot", "B2.subscribe-terminal", "B2.fanout"}
	if !b.s.card.GetCapabilities().GetStreaming() {
		for _, id := range ids {
			b.ac(id).na("the card does not declare streaming")
		}
		return
	}
	sendStream := func(text string, ctl streamCtl) *result {
		return b.t.stream(ctx, a2a.MethodSendStreamingMessage, &a2a.SendMessageRequest{Message: a2a.UserMessage(text)}, callOpts{}, ctl)
	}
	res := sendStream("stream 3", streamCtl{settle: settledTerminal, after: 2 * time.Second})
	evs := res.ex.Events

	grpc := b.t.binding == a2a.BindingGRPC
	r := b.ac("B8.stream-type").saw(res)
	if grpc {
		r.na("gRPC streams are server-streaming calls (Content-Type %q), not Server-Sent Events", res.ex.Header.Get("Content-Type"))
	} else if !r.incomplete(res) {
		if ct := res.ex.contentType(); ct == "text/event-stream" {
			r.same().pass("%s", ct)
		} else {
			r.fail("%q (%s)", ct, res.outcome())
		}
	}
	ok := !res.failed() && res.ex.contentType() == "text/event-stream" && len(evs) > 0
	if grpc {
		ok = !res.failed() && res.err == nil && res.broken == "" && len(evs) > 0
	}
	r = b.ac("B2.stream-first-task").saw(res)
	switch {
	case !ok:
		r.skip("no stream (%s)", res.outcome())
	case evs[0].Resp.GetTask() == nil:
		r.fail("the first event is %s", evs[0].kind())
	default:
		r.pass("first event %s", evs[0].kind())
	}
	r = b.ac("B2.stream-closes-terminal").saw(res)
	switch {
	case !ok:
		r.skip("no stream")
	case !a2a.IsTerminal(evs[len(evs)-1].state()):
		r.fail("the last event is %s, not a terminal state", evs[len(evs)-1].kind())
	case !res.ex.Closed:
		r.fail("the stream was still open 2 s after %s", evs[len(evs)-1].kind())
	default:
		r.same().pass("closed after %s", evs[len(evs)-1].kind())
	}
	r = b.ac("stream.event-fields").saw(res)
	if !ok {
		r.skip("no stream")
	} else {
		var bad []string
		for i, ev := range evs {
			switch {
			case ev.DecodeErr != nil:
				bad = append(bad, fmt.Sprintf("event %d: %v", i, ev.DecodeErr))
			case ev.Err != nil:
				bad = append(bad, fmt.Sprintf("event %d is an error: %s", i, describeError(ev.Err)))
			case ev.Resp.GetPayload() == nil:
				bad = append(bad, fmt.Sprintf("event %d has no payload member", i))
			default:
				if v := a2a.CheckRequired(ev.Resp); len(v) > 0 {
					bad = append(bad, fmt.Sprintf("event %d (%s): %s: %s", i, ev.kind(), v[0].Field, v[0].Description))
				}
			}
		}
		if len(bad) > 0 {
			r.fail("%s", strings.Join(bad, "; "))
		} else {
			r.pass("%d events", len(evs))
		}
	}
	r = b.ac("stream.order").saw(res)
	if !ok {
		r.skip("no stream")
	} else {
		var text strings.Builder
		var flags []string
		for _, ev := range evs {
			if au := ev.Resp.GetArtifactUpdate(); au != nil && au.GetArtifact().GetArtifactId() == "stream" {
				text.WriteString(a2a.JoinText(au.GetArtifact().GetParts()))
				flags = append(flags, fmt.Sprintf("append=%v lastChunk=%v", au.GetAppend(), au.GetLastChunk()))
			}
		}
		if text.String() == "chunk 0chunk 1chunk 2" {
			r.pass("reassembled %q (%s)", text.String(), strings.Join(flags, "; "))
		} else {
			r.fail("reassembled %q, want \"chunk 0chunk 1chunk 2\"", text.String())
		}
	}
	r = b.ac("stream.jsonrpc-ids").saw(res)
	switch {
	case grpc:
		r.na("gRPC stream messages are bare StreamResponses")
	case b.t.binding != a2a.BindingJSONRPC:
		r.na("HTTP+JSON events are bare StreamResponses")
	case !ok:
		r.skip("no stream")
	case !res.idOK:
		r.fail("an event carries another id than the request's %s", res.rpcID)
	default:
		r.pass("every event has id %s", res.rpcID)
	}
	r = b.ac("stream.sse-ids").saw(res)
	switch {
	case grpc:
		r.na("gRPC stream messages have no id (the proto has no field for one)")
	case !ok:
		r.skip("no stream")
	default:
		n := 0
		for _, ev := range evs {
			if ev.HasID {
				n++
			}
		}
		if n == 0 {
			r.differs("Parley sends the task's event sequence number as id:").na("no id: lines")
		} else {
			r.same().na("%d of %d events carry id: (first %q)", n, len(evs), evs[0].ID)
		}
	}

	r = b.ac("B2.stream-message")
	res = sendStream("message", streamCtl{settle: settledTerminal, after: 2 * time.Second})
	r.saw(res)
	if !r.incomplete(res) {
		evs := res.ex.Events
		switch {
		case len(evs) != 1 || evs[0].Resp.GetMessage() == nil:
			kinds := make([]string, len(evs))
			for i, e := range evs {
				kinds[i] = e.kind()
			}
			r.fail("events %v; want exactly one message", kinds)
		case !res.ex.Closed:
			r.fail("the stream stayed open after the message")
		default:
			r.same().pass("one %s, then closed", evs[0].kind())
		}
	}

	r = b.ac("B2.stream-input-required")
	res = sendStream("input-required", streamCtl{settle: func(evs []*event) bool {
		return len(evs) > 0 && (a2a.IsInterrupted(evs[len(evs)-1].state()) || settledTerminal(evs))
	}, after: 700 * time.Millisecond})
	r.saw(res)
	if !r.incomplete(res) {
		evs := res.ex.Events
		last := a2a.TaskState_TASK_STATE_UNSPECIFIED
		if len(evs) > 0 {
			last = evs[len(evs)-1].state()
		}
		switch {
		case last != a2a.TaskState_TASK_STATE_INPUT_REQUIRED:
			r.skip("the stream did not report INPUT_REQUIRED (last event %s): nothing to observe", lastKind(evs))
		case res.ex.Closed:
			r.same().na("closed at INPUT_REQUIRED")
		default:
			r.differs("Parley closes the stream at INPUT_REQUIRED").na("still open 0.7 s after INPUT_REQUIRED")
		}
		if id := streamTaskID(evs); id != "" {
			b.cancel(ctx, id)
		}
	}

	b.authStreamChecks(ctx)
	b.subscribeChecks(ctx, completed)
}

// authStreamChecks streams "auth-required", checks that the stream stays
// open, cancels the task and checks that the stream then ends.
func (b *bindingRun) authStreamChecks(ctx context.Context) {
	var (
		once   sync.Once
		authAt time.Duration
		taskID string
		done   = make(chan struct{})
	)
	res := b.t.stream(ctx, a2a.MethodSendStreamingMessage, &a2a.SendMessageRequest{Message: a2a.UserMessage("auth-required")}, callOpts{},
		streamCtl{settle: settledTerminal, after: 2 * time.Second, max: 6 * time.Second, stop: func(evs []*event) bool {
			last := evs[len(evs)-1]
			if last.state() == a2a.TaskState_TASK_STATE_AUTH_REQUIRED {
				once.Do(func() {
					authAt, taskID = last.At, streamTaskID(evs)
					go func() {
						defer close(done)
						time.Sleep(800 * time.Millisecond)
						b.cancel(context.WithoutCancel(ctx), taskID)
					}()
				})
			}
			return false
		}})
	r := b.ac("B2.stream-auth-open").saw(res)
	r2 := b.ac("B2.stream-closes-on-cancel").saw(res)
	if taskID != "" {
		<-done
	}
	if res.failed() && taskID == "" {
		r.skip("could not complete the request (%v)", res.ex.Err)
		r2.skip("no stream")
		return
	}
	evs := res.ex.Events
	if taskID == "" {
		r.skip("the stream did not report AUTH_REQUIRED (last event %s): nothing to observe", lastKind(evs))
		r2.skip("no AUTH_REQUIRED task")
		if id := streamTaskID(evs); id != "" {
			b.cancel(ctx, id)
		}
		return
	}
	canceled := false
	for _, ev := range evs {
		if ev.At > authAt && ev.state() == a2a.TaskState_TASK_STATE_CANCELED {
			canceled = true
		}
	}
	closedEarly := res.ex.Closed && !canceled && res.ex.Elapsed < authAt+800*time.Millisecond
	switch {
	case closedEarly:
		r.differs("Parley keeps the stream open through AUTH_REQUIRED").warn("the stream closed at AUTH_REQUIRED")
		r2.skip("the stream had already closed at AUTH_REQUIRED")
		return
	default:
		r.same().pass("still open 0.8 s after AUTH_REQUIRED")
	}
	switch {
	case canceled && res.ex.Closed:
		r2.pass("CANCELED, then closed")
	case canceled:
		r2.fail("CANCELED arrived but the stream stayed open")
	case res.ex.Closed:
		r2.fail("the stream closed without reporting CANCELED (last event %s)", lastKind(evs))
	default:
		r2.fail("no CANCELED event within the wait after CancelTask (last event %s)", lastKind(evs))
	}
}

// subscribeChecks grades SubscribeToTask.
func (b *bindingRun) subscribeChecks(ctx context.Context, completed *a2a.Task) {
	subscribe := func(id string, ctl streamCtl) *result {
		return b.t.stream(ctx, a2a.MethodSubscribeToTask, &a2a.SubscribeToTaskRequest{Id: id}, callOpts{}, ctl)
	}
	r := b.ac("B2.subscribe-snapshot")
	t := b.sendTask(ctx, r, "slow 700", &a2a.SendMessageConfiguration{ReturnImmediately: true})
	if t != nil {
		res := subscribe(t.GetId(), streamCtl{settle: settledTerminal, after: 2 * time.Second})
		r.saw(res)
		if !r.incomplete(res) {
			evs := res.ex.Events
			switch {
			case res.err != nil:
				r.fail("refused: %s", describeError(res.err))
			case len(evs) == 0 || evs[0].Resp.GetTask() == nil:
				r.fail("the first event is %s, not the Task", lastKind(evs[:min(1, len(evs))]))
			case !a2a.IsTerminal(evs[len(evs)-1].state()):
				r.fail("no terminal state (last event %s)", lastKind(evs))
			case !res.ex.Closed:
				r.fail("still open 2 s after %s", lastKind(evs))
			default:
				r.same().pass("%s first, closed after %s", evs[0].kind(), lastKind(evs))
			}
		}
	}

	r = b.ac("B2.subscribe-terminal")
	if completed == nil {
		r.skip("no completed task")
	} else {
		res := subscribe(completed.GetId(), streamCtl{max: 5 * time.Second, settle: settledTerminal, after: time.Second})
		if res.err == nil && len(res.ex.Events) > 0 && res.ex.Events[0].Err != nil {
			res.err = res.ex.Events[0].Err
		}
		if res.err == nil && res.ok() && len(res.ex.Events) > 0 {
			r.saw(res).fail("a stream of %d events for a completed task", len(res.ex.Events))
		} else if r.expect(b.t.binding, res, a2a.CodeUnsupportedOperation) {
			r.same()
		}
		b.probes["SubscribeToTask of a completed task"] = outcomeKey(res)
	}

	r = b.ac("B2.fanout")
	t = b.sendTask(ctx, r, "slow 900", &a2a.SendMessageConfiguration{ReturnImmediately: true})
	if t == nil {
		return
	}
	var wg sync.WaitGroup
	out := make([]*result, 3)
	for i := range out {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			ctl := streamCtl{settle: settledTerminal, after: 2 * time.Second}
			if i == 0 {
				ctl = streamCtl{stop: func([]*event) bool { return true }} // leaves after the snapshot
			}
			out[i] = subscribe(t.GetId(), ctl)
		}(i)
	}
	wg.Wait()
	r.Sent = "three SubscribeToTask streams; the first closes after its first event: " + describeRequest(out[1].ex)
	r.Received = describeResponse(out[1]) + " | " + describeResponse(out[2])
	if out[1].failed() || out[2].failed() {
		r.skip("could not complete the requests")
		return
	}
	a, c := tail(out[1].ex.Events), tail(out[2].ex.Events)
	short, long := a, c
	if len(short) > len(long) {
		short, long = long, short
	}
	switch {
	case len(a) == 0 || len(c) == 0 || !a2a.IsTerminal(out[1].ex.Events[len(out[1].ex.Events)-1].state()) ||
		!a2a.IsTerminal(out[2].ex.Events[len(out[2].ex.Events)-1].state()):
		r.fail("a remaining subscriber did not see the task end: %s | %s", lastKind(out[1].ex.Events), lastKind(out[2].ex.Events))
	case !slices.Equal(short, long[len(long)-len(short):]):
		r.fail("the subscribers saw different events: %v | %v", a, c)
	default:
		r.pass("both remaining subscribers saw %v", long)
	}
}

// pushChecks grades push configuration CRUD and delivery (B3).
func (b *bindingRun) pushChecks(ctx context.Context) {
	crud := []string{"push.create", "push.get", "push.list", "push.delete", "push.get-deleted"}
	deliv := []string{"B3.delivery", "B3.body", "B3.authorization", "B3.content-type", "B3.token"}
	if !b.s.card.GetCapabilities().GetPushNotifications() {
		for _, id := range append(crud, deliv...) {
			b.ac(id).na("the card does not declare pushNotifications")
		}
		return
	}
	r := b.ac("push.create")
	parked := b.sendTask(ctx, r, "input-required", nil)
	if parked != nil {
		defer b.cancel(ctx, parked.GetId())
		cfg := &a2a.TaskPushNotificationConfig{TaskId: parked.GetId(), Url: "https://parley-check.invalid/webhook", Token: "parley-check-token",
			Authentication: &a2a.AuthenticationInfo{Scheme: "Bearer", Credentials: "parley-check-secret"}}
		res := b.t.call(ctx, a2a.MethodCreateTaskPushNotificationConfig, cfg, callOpts{})
		r.saw(res)
		got := &a2a.TaskPushNotificationConfig{}
		var id string
		if !r.incomplete(res) {
			switch {
			case !res.ok():
				r.fail("refused: %s", describeError(res.err))
			case res.decode(got) != nil:
				r.fail("the result is not a TaskPushNotificationConfig")
			case got.GetId() == "":
				r.fail("no id assigned")
			case got.GetUrl() != cfg.GetUrl():
				r.fail("url %q, want %q", got.GetUrl(), cfg.GetUrl())
			default:
				id = got.GetId()
				r.pass("id %s", id)
			}
		}
		if id == "" {
			for _, c := range crud[1:] {
				b.ac(c).skip("no configuration was created")
			}
		} else {
			r = b.ac("push.get")
			res = b.t.call(ctx, a2a.MethodGetTaskPushNotificationConfig, &a2a.GetTaskPushNotificationConfigRequest{TaskId: parked.GetId(), Id: id}, callOpts{})
			r.saw(res)
			got = &a2a.TaskPushNotificationConfig{}
			if !r.incomplete(res) {
				switch {
				case !res.ok():
					r.fail("%s", describeError(res.err))
				case res.decode(got) != nil || got.GetUrl() != cfg.GetUrl():
					r.fail("the configuration came back as %s", abridge(string(res.raw), 120))
				default:
					r.pass("url %s", got.GetUrl())
				}
			}
			r = b.ac("push.list")
			res = b.t.call(ctx, a2a.MethodListTaskPushNotificationConfigs, &a2a.ListTaskPushNotificationConfigsRequest{TaskId: parked.GetId()}, callOpts{})
			r.saw(res)
			l := &a2a.ListTaskPushNotificationConfigsResponse{}
			if !r.incomplete(res) {
				found := false
				if res.ok() && res.decode(l) == nil {
					for _, c := range l.GetConfigs() {
						found = found || c.GetId() == id
					}
				}
				if found {
					r.pass("%d configuration(s), ours included", len(l.GetConfigs()))
				} else {
					r.fail("the configuration is not listed (%s)", res.outcome())
				}
			}
			r = b.ac("push.delete")
			del := &a2a.DeleteTaskPushNotificationConfigRequest{TaskId: parked.GetId(), Id: id}
			d1 := b.t.call(ctx, a2a.MethodDeleteTaskPushNotificationConfig, del, callOpts{})
			d2 := b.t.call(ctx, a2a.MethodDeleteTaskPushNotificationConfig, del, callOpts{})
			r.Sent = "the same delete twice: " + describeRequest(d1.ex)
			r.Received = describeResponse(d1) + " | " + describeResponse(d2)
			switch {
			case d1.failed() || d2.failed():
				r.skip("could not complete the requests")
			case !d1.ok():
				r.fail("the delete failed: %s", describeError(d1.err))
			case d2.ok():
				r.same().pass("both deletes succeeded")
			case d2.err.is(a2a.CodeTaskNotFound):
				r.differs("Parley answers the second delete with success").pass("the second delete answered %s: the effect (no configuration) is the same", describeError(d2.err))
			default:
				r.fail("the second delete answered %s", describeError(d2.err))
			}
			r = b.ac("push.get-deleted")
			res = b.t.call(ctx, a2a.MethodGetTaskPushNotificationConfig, &a2a.GetTaskPushNotificationConfigRequest{TaskId: parked.GetId(), Id: id}, callOpts{})
			r.expect(b.t.binding, res, a2a.CodeTaskNotFound)
		}
	} else {
		for _, c := range crud[1:] {
			b.ac(c).skip("no parked task")
		}
	}
	b.deliveryChecks(ctx)
}

// scopeChecks grades task scoping between two principals (B12).
func (b *bindingRun) scopeChecks(ctx context.Context) {
	ids := []string{"B12.get", "B12.cancel", "B12.subscribe", "B12.send", "B12.push", "B12.list"}
	reason := ""
	switch {
	case !requiresAuth(b.s.card):
		reason = "the card declares no authentication: every caller is the same principal"
	case b.s.opts.Token2 == "":
		reason = "no --token2 (a second principal) given"
	}
	if reason != "" {
		for _, id := range ids {
			b.ac(id).skip("%s", reason)
		}
		return
	}
	other := callOpts{token: strp(b.s.opts.Token2)}
	r := b.ac("B12.get")
	parked := b.sendTask(ctx, r, "input-required", nil)
	if parked == nil {
		for _, id := range ids[1:] {
			b.ac(id).skip("no task")
		}
		return
	}
	defer b.cancel(ctx, parked.GetId())
	notFound := func(r *rec, res *result) {
		if r.expect(b.t.binding, res, a2a.CodeTaskNotFound) {
			r.same()
		} else if res.ex.Status == 403 {
			r.Finding += " (403 reveals that the task exists)"
		}
	}
	notFound(r, b.t.call(ctx, a2a.MethodGetTask, &a2a.GetTaskRequest{Id: parked.GetId()}, other))

	r = b.ac("B12.cancel")
	res := b.t.call(ctx, a2a.MethodCancelTask, &a2a.CancelTaskRequest{Id: parked.GetId()}, other)
	notFound(r, res)
	if _, t := b.getTask(ctx, parked.GetId(), nil); t.GetStatus().GetState() != a2a.TaskState_TASK_STATE_INPUT_REQUIRED && r.Verdict == Pass {
		r.Verdict, r.Finding = Fail, "refused, but the task is now "+stateName(t.GetStatus().GetState())
	}

	r = b.ac("B12.subscribe")
	res = b.t.stream(ctx, a2a.MethodSubscribeToTask, &a2a.SubscribeToTaskRequest{Id: parked.GetId()}, other, streamCtl{max: 3 * time.Second, stop: func([]*event) bool { return true }})
	if res.err == nil && len(res.ex.Events) > 0 && res.ex.Events[0].Err != nil {
		res.err = res.ex.Events[0].Err
	}
	if res.err == nil && len(res.ex.Events) > 0 {
		r.saw(res).fail("the other principal got a stream (first event %s)", res.ex.Events[0].kind())
	} else {
		notFound(r, res)
	}

	r = b.ac("B12.send")
	m := a2a.UserMessage("follow-up")
	m.TaskId = parked.GetId()
	res, _ = b.send(ctx, m, nil, other)
	notFound(r, res)

	r = b.ac("B12.push")
	if !b.s.card.GetCapabilities().GetPushNotifications() {
		r.na("the card does not declare pushNotifications")
	} else {
		notFound(r, b.t.call(ctx, a2a.MethodListTaskPushNotificationConfigs, &a2a.ListTaskPushNotificationConfigsRequest{TaskId: parked.GetId()}, other))
	}

	r = b.ac("B12.list")
	res = b.t.call(ctx, a2a.MethodListTasks, &a2a.ListTasksRequest{PageSize: ptr[int32](100)}, other)
	r.saw(res)
	if !r.incomplete(res) {
		l := &a2a.ListTasksResponse{}
		switch {
		case !res.ok() || res.decode(l) != nil:
			r.fail("ListTasks failed: %s", res.outcome())
		case slices.ContainsFunc(l.GetTasks(), func(t *a2a.Task) bool { return t.GetId() == parked.GetId() }):
			r.fail("the other principal's ListTasks shows the task")
		default:
			r.same().pass("not listed (%d tasks of its own)", len(l.GetTasks()))
		}
	}
}

// ---------------------------------------------------------------------------
// Helpers

func lastKind(evs []*event) string {
	if len(evs) == 0 {
		return "none"
	}
	return evs[len(evs)-1].kind()
}

func streamTaskID(evs []*event) string {
	for _, ev := range evs {
		if t := ev.Resp.GetTask(); t != nil {
			return t.GetId()
		}
		if s := ev.Resp.GetStatusUpdate(); s != nil {
			return s.GetTaskId()
		}
	}
	return ""
}

// tail lists the kinds of a subscription's events after its snapshot.
func tail(evs []*event) []string {
	var out []string
	for i, ev := range evs {
		if i == 0 && ev.Resp.GetTask() != nil {
			continue
		}
		out = append(out, ev.kind())
	}
	return out
}

func hasArtifact(t *a2a.Task, id string) bool {
	for _, a := range t.GetArtifacts() {
		if a.GetArtifactId() == id {
			return true
		}
	}
	return false
}

func anyArtifacts(ts []*a2a.Task) bool {
	for _, t := range ts {
		if len(t.GetArtifacts()) > 0 {
			return true
		}
	}
	return false
}

func everyArtifacts(ts []*a2a.Task) bool {
	for _, t := range ts {
		if t.GetStatus().GetState() == a2a.TaskState_TASK_STATE_COMPLETED && len(t.GetArtifacts()) == 0 {
			return false
		}
	}
	return len(ts) > 0
}

func anyHistory(ts []*a2a.Task) bool {
	for _, t := range ts {
		if len(t.GetHistory()) > 0 {
			return true
		}
	}
	return false
}
