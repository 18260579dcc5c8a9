package check

import (
	"context"
	"time"

	"parley.dev/parley/a2a"
)

// unknownTaskSteps grade the errors for a task that does not exist, on
// every operation that names one.
var unknownTaskSteps = []step[*bindingRun]{
	{Result{ID: "errors.unknown-task.get", Operation: a2a.MethodGetTask, Title: "GetTask of an unknown task is TaskNotFoundError",
		Level: "MUST", Section: "§3.1.3, §5.4, §9.5, §10.6, §11.6",
		Requires: "TaskNotFoundError (-32001 / HTTP 404 / NOT_FOUND), with a google.rpc.ErrorInfo (reason TASK_NOT_FOUND, domain a2a-protocol.org) on HTTP+JSON and gRPC"},
		(*bindingRun).unknownTaskGet},
	{Result{ID: "errors.unknown-task.cancel", Operation: a2a.MethodCancelTask, Title: "CancelTask of an unknown task is TaskNotFoundError",
		Level: "MUST", Section: "§3.1.5, §5.4",
		Requires: "CancelTask: TaskNotFoundError when the task does not exist"},
		(*bindingRun).unknownTaskCancel},
	{Result{ID: "errors.unknown-task.send", Operation: a2a.MethodSendMessage, Title: "a message naming an unknown taskId is TaskNotFoundError",
		Level: "MUST", Section: "§3.4.2",
		Requires: "A taskId the client sends MUST reference an existing task; the agent MUST return a TaskNotFoundError if it does not"},
		(*bindingRun).unknownTaskSend},
	{Result{ID: "errors.unknown-task.subscribe", Operation: a2a.MethodSubscribeToTask, Title: "SubscribeToTask of an unknown task is refused",
		Level: "MUST", Section: "§3.1.6, §3.3.4",
		Requires: "TaskNotFoundError for an unknown task; UnsupportedOperationError when capabilities.streaming is false or absent"},
		(*bindingRun).unknownTaskSubscribe},
	{Result{ID: "errors.unknown-task.push-configs", Operation: a2a.MethodListTaskPushNotificationConfigs, Title: "push configurations of an unknown task are refused",
		Level: "MUST", Section: "§3.1.9, §3.3.4",
		Requires: "TaskNotFoundError for an unknown task; PushNotificationNotSupportedError for every push configuration operation when capabilities.pushNotifications is false or absent"},
		(*bindingRun).unknownTaskPushConfigs},
	{Result{ID: "errors.unknown-config.get", Operation: a2a.MethodGetTaskPushNotificationConfig, Title: "GetTaskPushNotificationConfig of an unknown configuration is refused",
		Level: "MUST", Section: "§3.1.8, §3.3.4",
		Requires: "The operation MUST fail if the configuration does not exist (TaskNotFoundError); PushNotificationNotSupportedError when push is not declared"},
		(*bindingRun).unknownConfigGet},
	{Result{ID: "errors.jsonrpc-http-status", Operation: a2a.MethodGetTask, Title: "HTTP status of a JSON-RPC error response",
		Level: "SPEC SILENT", Section: "§9.5",
		Requires: "the spec does not say which HTTP status carries a JSON-RPC error (every SDK uses 200)"},
		(*bindingRun).jsonrpcErrorStatus},
}

func (b *bindingRun) unknownTaskGet(ctx context.Context, r *rec) {
	res := b.t.call(ctx, a2a.MethodGetTask, &a2a.GetTaskRequest{Id: unknownID("task")}, callOpts{})
	r.expect(b.t.binding, res, a2a.CodeTaskNotFound)
	b.probes["GetTask of an unknown task"] = outcomeKey(res)
	b.unknownErr = res
}

func (b *bindingRun) unknownTaskCancel(ctx context.Context, r *rec) {
	res := b.t.call(ctx, a2a.MethodCancelTask, &a2a.CancelTaskRequest{Id: unknownID("task")}, callOpts{})
	r.expect(b.t.binding, res, a2a.CodeTaskNotFound)
	b.probes["CancelTask of an unknown task"] = outcomeKey(res)
}

func (b *bindingRun) unknownTaskSend(ctx context.Context, r *rec) {
	m := a2a.UserMessage("hello")
	m.TaskId = unknownID("task")
	res := b.t.call(ctx, a2a.MethodSendMessage, &a2a.SendMessageRequest{Message: m}, callOpts{})
	r.expect(b.t.binding, res, a2a.CodeTaskNotFound)
	b.probes["SendMessage with an unknown taskId"] = outcomeKey(res)
}

// unknownTaskSubscribe wants TaskNotFoundError, or UnsupportedOperationError
// when the card does not declare streaming (either is accepted then).
func (b *bindingRun) unknownTaskSubscribe(ctx context.Context, r *rec) {
	res := b.t.stream(ctx, a2a.MethodSubscribeToTask, &a2a.SubscribeToTaskRequest{Id: unknownID("task")}, callOpts{}, streamCtl{max: 5 * time.Second})
	defer func() { b.probes["SubscribeToTask of an unknown task"] = outcomeKey(res) }()
	want := a2a.CodeTaskNotFound
	if !b.s.card.GetCapabilities().GetStreaming() {
		if res.err.is(a2a.CodeTaskNotFound) {
			r.saw(res).na("TaskNotFoundError, while the card does not declare streaming: the spec lists both errors and no order")
			return
		}
		want = a2a.CodeUnsupportedOperation
	}
	if res.ok() {
		res.firstEventError() // an error sent as the first (and only) event of a stream
	}
	r.expect(b.t.binding, res, want)
}

// unknownTaskPushConfigs wants TaskNotFoundError, or
// PushNotificationNotSupportedError when the card does not declare push
// (either is accepted then).
func (b *bindingRun) unknownTaskPushConfigs(ctx context.Context, r *rec) {
	res := b.t.call(ctx, a2a.MethodListTaskPushNotificationConfigs, &a2a.ListTaskPushNotificationConfigsRequest{TaskId: unknownID("task")}, callOpts{})
	b.expectUnknownPush(r, res)
	b.probes["ListTaskPushNotificationConfigs of an unknown task"] = outcomeKey(res)
}

func (b *bindingRun) unknownConfigGet(ctx context.Context, r *rec) {
	res := b.t.call(ctx, a2a.MethodGetTaskPushNotificationConfig, &a2a.GetTaskPushNotificationConfigRequest{TaskId: unknownID("task"), Id: unknownID("config")}, callOpts{})
	b.expectUnknownPush(r, res)
}

// expectUnknownPush grades a push configuration operation on an unknown
// task or configuration.
func (b *bindingRun) expectUnknownPush(r *rec, res *result) {
	switch {
	case b.s.card.GetCapabilities().GetPushNotifications():
		r.expect(b.t.binding, res, a2a.CodeTaskNotFound)
	case res.err.is(a2a.CodeTaskNotFound):
		r.saw(res).na("TaskNotFoundError while the card does not declare pushNotifications: the spec lists both errors and no order")
	default:
		r.expect(b.t.binding, res, a2a.CodePushNotificationNotSupported)
	}
}

// jsonrpcErrorStatus reports, on JSON-RPC only, the HTTP status that
// carried the error of errors.unknown-task.get.
func (b *bindingRun) jsonrpcErrorStatus(_ context.Context, r *rec) {
	if b.t.binding != a2a.BindingJSONRPC {
		return // not reported on the other bindings
	}
	r.saw(b.unknownErr)
	if b.unknownErr.failed() {
		r.skip("no response")
		return
	}
	r.na("HTTP %d", b.unknownErr.ex.Status)
}
