package check

import (
	"context"
	"encoding/json"
	"strings"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
)

// historyFamily is what the historyLength checks share: a task with a
// history of several messages, and that history in full.
type historyFamily struct {
	*agentRun
	id   string    // the task read, "" when there is none
	full *a2a.Task // the task read without historyLength
	n    int       // the length of its full history
}

// historySteps grade historyLength (B4).
var historySteps = []step[*historyFamily]{
	agentStep("B4.history-zero", (*historyFamily).zero),
	agentStep("B4.history-one", (*historyFamily).one),
	agentStep("B4.history-unset", (*historyFamily).unset),
	agentStep("B4.history-negative", (*historyFamily).negative),
	agentStep("B4.send-history-zero", (*historyFamily).sendZero),
}

// setUp makes a task with a longer history (input-required, then a
// follow-up), else falls back on the completed task; a failure to make
// one ends r as skipped.
func (f *historyFamily) setUp(ctx context.Context, r *rec) {
	if parked := f.sendTask(ctx, r, "input-required", nil); parked != nil {
		m := f.msg("more")
		m.TaskId = parked.GetId()
		f.send(ctx, m, nil, callOpts{})
		f.id = parked.GetId()
	} else if f.completed != nil {
		f.id = f.completed.GetId()
	}
	if f.id == "" {
		return
	}
	_, f.full = f.getTask(ctx, f.id, nil)
	f.n = len(f.full.GetHistory())
}

// ready ends r as skipped when there is no task to read.
func (f *historyFamily) ready(r *rec) bool {
	return r.needs(f.id != "", "no task to read")
}

// read reads the task with historyLength hl for a check of its history:
// without a task, or when GetTask fails, the check ends (ok false).
func (f *historyFamily) read(ctx context.Context, r *rec, hl int32) (res *result, t *a2a.Task, ok bool) {
	if !f.ready(r) {
		return nil, nil, false
	}
	res, t = f.getTask(ctx, f.id, &hl)
	return res, t, r.succeeded(res, "GetTask")
}

func (f *historyFamily) zero(ctx context.Context, r *rec) {
	f.setUp(ctx, r)
	res, t, ok := f.read(ctx, r, 0)
	switch {
	case !ok:
	case len(t.GetHistory()) > 0:
		r.fail("%d history messages for historyLength 0", len(t.GetHistory()))
	case strings.Contains(string(res.raw), `"history"`) && historyMember(res.raw):
		r.differs("Parley omits the member").warn("an empty history member (the field SHOULD be omitted)")
	default:
		r.same().pass("no history")
	}
}

func (f *historyFamily) one(ctx context.Context, r *rec) {
	_, t, ok := f.read(ctx, r, 1)
	switch {
	case !ok:
	case len(t.GetHistory()) > 1:
		r.fail("%d history messages for historyLength 1", len(t.GetHistory()))
	case f.n < 2:
		r.na("the task's full history has %d message(s): too short to tell", f.n)
	case len(t.GetHistory()) == 1 && !proto.Equal(t.GetHistory()[0], f.full.GetHistory()[f.n-1]):
		r.differs("Parley returns the most recent").warn("one message, but not the most recent one")
	default:
		r.same().pass("%d of %d messages", len(t.GetHistory()), f.n)
	}
}

func (f *historyFamily) unset(ctx context.Context, r *rec) {
	if !f.ready(r) {
		return
	}
	res, _ := f.getTask(ctx, f.id, nil)
	switch {
	case !r.gradable(res):
	case res.ok():
		r.na("%d messages returned", f.n)
	default:
		r.na("GetTask failed: %s", res.outcome())
	}
}

func (f *historyFamily) negative(ctx context.Context, r *rec) {
	if !f.ready(r) {
		return
	}
	res, t := f.getTask(ctx, f.id, new(int32(-1)))
	f.probes["GetTask with historyLength -1"] = outcomeKey(res)
	switch {
	case !r.gradable(res):
	case res.err.is(a2a.CodeInvalidParams):
		r.same().na("refused: %s", describeError(res.err))
	case res.ok():
		r.differs("Parley refuses with InvalidParamsError").na("accepted: the task came back with %d history messages", len(t.GetHistory()))
	default:
		r.differs("Parley refuses with InvalidParamsError").na("%s", describeError(res.err))
	}
}

func (f *historyFamily) sendZero(ctx context.Context, r *rec) {
	if !f.ready(r) {
		return
	}
	res, resp := f.send(ctx, f.msg("hello"), &a2a.SendMessageConfiguration{HistoryLength: new(int32(0))}, callOpts{})
	switch {
	case !r.gradable(res):
	case resp.GetTask() == nil:
		r.fail("no task: %s", res.outcome())
	case len(resp.GetTask().GetHistory()) > 0:
		r.differs("Parley honours it").fail("%d history messages for historyLength 0", len(resp.GetTask().GetHistory()))
	default:
		r.same().pass("no history")
	}
}

// historyMember reports whether a Task's JSON has a history member.
func historyMember(raw json.RawMessage) bool {
	var o map[string]json.RawMessage
	if json.Unmarshal(raw, &o) != nil {
		return false
	}
	_, ok := o["history"]
	return ok
}
