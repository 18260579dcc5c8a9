package check

import (
	"context"

	"parley.dev/parley/a2a"
)

// pushFamily is what the push configuration checks share: the task the
// configuration is made for, the configuration sent, and the id the
// server gave it.
type pushFamily struct {
	*agentRun
	parked *a2a.Task
	cfg    *a2a.TaskPushNotificationConfig
	id     string
}

// pushSteps grade push configuration CRUD.
var pushSteps = []step[*pushFamily]{
	agentStep("push.create", (*pushFamily).createConfig),
	agentStep("push.get", (*pushFamily).getConfig),
	agentStep("push.list", (*pushFamily).listConfigs),
	agentStep("push.delete", (*pushFamily).deleteConfig),
	agentStep("push.get-deleted", (*pushFamily).getDeleted),
}

// pushChecks grades push configuration CRUD and delivery (B3) when the
// card declares push notifications.
func (a *agentRun) pushChecks(ctx context.Context) {
	if !a.s.card.GetCapabilities().GetPushNotifications() {
		endAll(a.bindingRun, pushSteps, NA, "the card does not declare pushNotifications")
		endAll(a.bindingRun, deliverySteps, NA, "the card does not declare pushNotifications")
		return
	}
	f := &pushFamily{agentRun: a}
	runSteps(ctx, a.bindingRun, f, pushSteps)
	a.deliveryChecks(ctx)
	if f.parked != nil {
		a.cancel(ctx, f.parked.GetId())
	}
}

// ready ends r as skipped when push.create made no configuration.
func (f *pushFamily) ready(r *rec) bool {
	switch {
	case f.parked == nil:
		r.skip("no parked task")
	case f.id == "":
		r.skip("no configuration was created")
	default:
		return true
	}
	return false
}

// createConfig configures a webhook (never called) for an INPUT_REQUIRED task.
func (f *pushFamily) createConfig(ctx context.Context, r *rec) {
	f.parked = f.sendTask(ctx, r, "input-required", nil)
	if f.parked == nil {
		return
	}
	f.cfg = &a2a.TaskPushNotificationConfig{TaskId: f.parked.GetId(), Url: "https://parley-check.invalid/webhook", Token: "parley-check-token",
		Authentication: &a2a.AuthenticationInfo{Scheme: "Bearer", Credentials: "parley-check-secret"}}
	res := f.t.call(ctx, a2a.MethodCreateTaskPushNotificationConfig, f.cfg, callOpts{})
	if !r.gradable(res) {
		return
	}
	got := &a2a.TaskPushNotificationConfig{}
	switch {
	case !res.ok():
		r.fail("refused: %s", describeError(res.err))
	case res.decode(got) != nil:
		r.fail("the result is not a TaskPushNotificationConfig")
	case got.GetId() == "":
		r.fail("no id assigned")
	case got.GetUrl() != f.cfg.GetUrl():
		r.fail("url %q, want %q", got.GetUrl(), f.cfg.GetUrl())
	default:
		f.id = got.GetId()
		r.pass("id %s", f.id)
	}
}

func (f *pushFamily) getConfig(ctx context.Context, r *rec) {
	if !f.ready(r) {
		return
	}
	res := f.t.call(ctx, a2a.MethodGetTaskPushNotificationConfig, &a2a.GetTaskPushNotificationConfigRequest{TaskId: f.parked.GetId(), Id: f.id}, callOpts{})
	if !r.gradable(res) {
		return
	}
	got := &a2a.TaskPushNotificationConfig{}
	switch {
	case !res.ok():
		r.fail("%s", describeError(res.err))
	case res.decode(got) != nil || got.GetUrl() != f.cfg.GetUrl():
		r.fail("the configuration came back as %s", abridge(string(res.raw), 120))
	default:
		r.pass("url %s", got.GetUrl())
	}
}

func (f *pushFamily) listConfigs(ctx context.Context, r *rec) {
	if !f.ready(r) {
		return
	}
	res := f.t.call(ctx, a2a.MethodListTaskPushNotificationConfigs, &a2a.ListTaskPushNotificationConfigsRequest{TaskId: f.parked.GetId()}, callOpts{})
	if !r.gradable(res) {
		return
	}
	l := &a2a.ListTaskPushNotificationConfigsResponse{}
	found := false
	if res.ok() && res.decode(l) == nil {
		for _, c := range l.GetConfigs() {
			found = found || c.GetId() == f.id
		}
	}
	if found {
		r.pass("%d configuration(s), ours included", len(l.GetConfigs()))
	} else {
		r.fail("the configuration is not listed (%s)", res.outcome())
	}
}

// deleteConfig deletes the configuration twice: the second delete must have the
// same effect.
func (f *pushFamily) deleteConfig(ctx context.Context, r *rec) {
	if !f.ready(r) {
		return
	}
	del := &a2a.DeleteTaskPushNotificationConfigRequest{TaskId: f.parked.GetId(), Id: f.id}
	d1 := f.t.call(ctx, a2a.MethodDeleteTaskPushNotificationConfig, del, callOpts{})
	d2 := f.t.call(ctx, a2a.MethodDeleteTaskPushNotificationConfig, del, callOpts{})
	r.Sent = "the same delete twice: " + describeRequest(d1.ex)
	r.Received = describeResponse(d1) + " | " + describeResponse(d2)
	switch {
	case d1.failed() || d2.failed():
		r.skip("could not complete the requests")
	case !d1.ok():
		r.fail("the delete failed: %s", d1.why())
	case d2.ok():
		r.same().pass("both deletes succeeded")
	case d2.err.is(a2a.CodeTaskNotFound):
		r.differs("Parley answers the second delete with success").pass("the second delete answered %s: the effect (no configuration) is the same", describeError(d2.err))
	default:
		r.fail("the second delete answered %s", d2.why())
	}
}

func (f *pushFamily) getDeleted(ctx context.Context, r *rec) {
	if !f.ready(r) {
		return
	}
	res := f.t.call(ctx, a2a.MethodGetTaskPushNotificationConfig, &a2a.GetTaskPushNotificationConfigRequest{TaskId: f.parked.GetId(), Id: f.id}, callOpts{})
	r.expect(f.t.binding, res, a2a.CodeTaskNotFound)
}
