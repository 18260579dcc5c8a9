package check

import (
	"context"
	"net/http"
	"slices"
	"time"

	"parley.dev/parley/a2a"
)

// scopeFamily is what the scoping checks share: a task of the first
// principal, and the options that call as the second.
type scopeFamily struct {
	*agentRun
	other  callOpts
	parked *a2a.Task
}

// scopeSteps grade task scoping between two principals (B12): the second
// must not see or touch the first one's task.
var scopeSteps = []step[*scopeFamily]{
	agentStep("B12.get", (*scopeFamily).readOther),
	agentStep("B12.cancel", (*scopeFamily).cancelOther),
	agentStep("B12.subscribe", (*scopeFamily).subscribeOther),
	agentStep("B12.send", (*scopeFamily).sendOther),
	agentStep("B12.push", (*scopeFamily).pushOther),
	agentStep("B12.list", (*scopeFamily).listOther),
}

// scopeChecks runs scopeSteps when the card declares authentication and
// --token2 names a second principal.
func (a *agentRun) scopeChecks(ctx context.Context) {
	switch {
	case !requiresAuth(a.s.card):
		endAll(a.bindingRun, scopeSteps, Skip, "the card declares no authentication: every caller is the same principal")
		return
	case a.s.opts.Token2 == "":
		endAll(a.bindingRun, scopeSteps, Skip, "no --token2 (a second principal) given")
		return
	}
	f := &scopeFamily{agentRun: a, other: callOpts{token: new(a.s.opts.Token2)}}
	runSteps(ctx, a.bindingRun, f, scopeSteps)
	if f.parked != nil {
		a.cancel(ctx, f.parked.GetId())
	}
}

// ready ends r as skipped when there is no task to hide.
func (f *scopeFamily) ready(r *rec) bool {
	return r.needs(f.parked != nil, "no task")
}

// notFound grades an answer to the second principal: TaskNotFoundError.
// check, when set, may still fail a passing answer (by what the task
// looks like afterwards).
func (f *scopeFamily) notFound(r *rec, res *result, check func() string) {
	r.expectThen(f.t.binding, res, a2a.CodeTaskNotFound, func(v *Verdict, finding *string) {
		switch {
		case *v == Pass && check != nil:
			if why := check(); why != "" {
				*v, *finding = Fail, why
				return
			}
			r.same()
		case *v == Pass || *v == Warn:
			r.same()
		case res.ex.Status == http.StatusForbidden:
			*finding += " (403 reveals that the task exists)"
		}
	})
}

// readOther makes the first principal's task (INPUT_REQUIRED, so it stays) and
// reads it as the second.
func (f *scopeFamily) readOther(ctx context.Context, r *rec) {
	f.parked = f.sendTask(ctx, r, "input-required", nil)
	if f.parked == nil {
		return
	}
	f.notFound(r, f.t.call(ctx, a2a.MethodGetTask, &a2a.GetTaskRequest{Id: f.parked.GetId()}, f.other), nil)
}

func (f *scopeFamily) cancelOther(ctx context.Context, r *rec) {
	if !f.ready(r) {
		return
	}
	res := f.t.call(ctx, a2a.MethodCancelTask, &a2a.CancelTaskRequest{Id: f.parked.GetId()}, f.other)
	f.notFound(r, res, func() string {
		if _, t := f.getTask(ctx, f.parked.GetId(), nil); t.GetStatus().GetState() != a2a.TaskState_TASK_STATE_INPUT_REQUIRED {
			return "refused, but the task is now " + stateName(t.GetStatus().GetState())
		}
		return ""
	})
}

func (f *scopeFamily) subscribeOther(ctx context.Context, r *rec) {
	if !f.ready(r) {
		return
	}
	res := f.t.stream(ctx, a2a.MethodSubscribeToTask, &a2a.SubscribeToTaskRequest{Id: f.parked.GetId()}, f.other,
		streamCtl{max: 3 * time.Second, stop: func([]*event) bool { return true }})
	res.firstEventError()
	if res.err == nil && len(res.ex.Events) > 0 {
		r.saw(res).fail("the other principal got a stream (first event %s)", res.ex.Events[0].kind())
	} else {
		f.notFound(r, res, nil)
	}
}

func (f *scopeFamily) sendOther(ctx context.Context, r *rec) {
	if !f.ready(r) {
		return
	}
	m := f.msg("follow-up")
	m.TaskId = f.parked.GetId()
	res, _ := f.send(ctx, m, nil, f.other)
	f.notFound(r, res, nil)
}

func (f *scopeFamily) pushOther(ctx context.Context, r *rec) {
	if !f.ready(r) {
		return
	}
	if !f.s.card.GetCapabilities().GetPushNotifications() {
		r.na("the card does not declare pushNotifications")
		return
	}
	f.notFound(r, f.t.call(ctx, a2a.MethodListTaskPushNotificationConfigs, &a2a.ListTaskPushNotificationConfigsRequest{TaskId: f.parked.GetId()}, f.other), nil)
}

func (f *scopeFamily) listOther(ctx context.Context, r *rec) {
	if !f.ready(r) {
		return
	}
	res := f.t.call(ctx, a2a.MethodListTasks, &a2a.ListTasksRequest{PageSize: new(int32(100))}, f.other)
	if !r.gradable(res) {
		return
	}
	l := &a2a.ListTasksResponse{}
	switch {
	case !res.ok() || res.decode(l) != nil:
		r.fail("ListTasks failed: %s", res.outcome())
	case slices.ContainsFunc(l.GetTasks(), func(t *a2a.Task) bool { return t.GetId() == f.parked.GetId() }):
		r.fail("the other principal's ListTasks shows the task")
	default:
		r.same().pass("not listed (%d tasks of its own)", len(l.GetTasks()))
	}
}
