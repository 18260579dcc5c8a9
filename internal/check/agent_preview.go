package check

import (
	"context"
	"fmt"
	"strings"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/version"
)

// The A2A 1.1 preview (the specification's dev-1.1 branch): a task's
// generation (§3.2.7), long-poll GetTask, the conditional send and the
// task timeline (PR #2129, agent_timeline.go). They
// are graded on a binding whose card lists a 1.1 interface beside the 1.0
// one, with requests that say A2A-Version: 1.1, and N/A elsewhere.

// previewVersion is the Major.Minor of the preview.
const previewVersion = version.V11

// previewFamily is what the preview's checks share: an INPUT_REQUIRED
// task read in 1.1 and its generation.
type previewFamily struct {
	*agentRun
	v11    callOpts
	parked *a2a.Task
	gen    int64 // parked's generation as first read
	// follow is the conditional follow-up longPollWakes sent (nil when it
	// could not), graded by ifGenerationMatch.
	follow *result
}

// previewSteps grade the 1.1 preview.
var previewSteps = []step[*previewFamily]{
	agentStep("1.1.generation-task", (*previewFamily).generationTask),
	agentStep("1.1.generation-hidden", (*previewFamily).generationHidden),
	agentStep("1.1.long-poll-past", (*previewFamily).longPollPast),
	agentStep("1.1.if-generation-mismatch", (*previewFamily).ifGenerationMismatch),
	agentStep("1.1.long-poll-wakes", (*previewFamily).longPollWakes),
	agentStep("1.1.if-generation-match", (*previewFamily).ifGenerationMatch),
	agentStep("1.1.timeline-order", (*previewFamily).timelineOrder),
	agentStep("1.1.timeline-length", (*previewFamily).timelineLength),
	agentStep("1.1.generation-stream", (*previewFamily).generationStream),
}

// previewChecks runs previewSteps when the card lists a 1.1 interface of
// this binding at this URL.
func (a *agentRun) previewChecks(ctx context.Context) {
	if !a.offersPreview() {
		endAll(a.bindingRun, previewSteps, NA, "the card lists no A2A "+previewVersion+" interface for this binding and URL")
		return
	}
	runSteps(ctx, a.bindingRun, &previewFamily{agentRun: a, v11: callOpts{version: new(previewVersion)}}, previewSteps)
}

// offersPreview reports whether the card lists a 1.1 interface at the
// target's binding, URL and tenant.
func (b *bindingRun) offersPreview() bool {
	return version.HasTwin(b.s.card.GetSupportedInterfaces(), b.t.iface, previewVersion)
}

// get11 reads a task in 1.1, with currentGeneration when cur is not nil.
func (f *previewFamily) get11(ctx context.Context, id string, cur *int64) (*result, *a2a.Task) {
	res := f.t.call(ctx, a2a.MethodGetTask, &a2a.GetTaskRequest{Id: id, CurrentGeneration: cur}, f.v11)
	t := &a2a.Task{}
	if res.ok() {
		if err := res.decode(t); err != nil {
			res.broken = "the result is not a Task: " + err.Error()
		}
	}
	return res, t
}

// followUp continues the parked task in 1.1 with ifGenerationMatch want.
func (f *previewFamily) followUp(ctx context.Context, want int64) (*result, *a2a.SendMessageResponse) {
	m := f.msg("follow-up")
	m.TaskId = f.parked.GetId()
	return f.send(ctx, m, &a2a.SendMessageConfiguration{IfGenerationMatch: &want}, f.v11)
}

// generationTask parks a task in 1.1: the answer and GetTask carry the
// same generation, at least 1.
func (f *previewFamily) generationTask(ctx context.Context, r *rec) {
	res, resp := f.send(ctx, f.msg("input-required"), nil, f.v11)
	if !r.succeeded(res, "SendMessage in 1.1") {
		return
	}
	if resp.GetTask() == nil {
		r.skip("setting up: SendMessage(\"input-required\") did not return a task (%s)", res.outcome())
		return
	}
	f.parked, f.gen = resp.GetTask(), resp.GetTask().GetGeneration()
	got, t := f.get11(ctx, f.parked.GetId(), nil)
	switch {
	case f.gen < 1:
		r.fail("the task SendMessage returned has generation %d: a task's generation starts at 1", f.gen)
	case !got.ok():
		r.saw(got).fail("GetTask in 1.1 failed: %s", got.outcome())
	case t.GetGeneration() != f.gen:
		r.saw(got).fail("GetTask says generation %d, SendMessage %d, with no change between", t.GetGeneration(), f.gen)
	default:
		r.saw(got).same().pass("generation %d in both", f.gen)
	}
}

// generationHidden reads the same task in 1.0: no generation, no
// timeline.
func (f *previewFamily) generationHidden(ctx context.Context, r *rec) {
	if !r.needs(f.parked != nil, "no task parked in 1.1") {
		return
	}
	res, t := f.getTask(ctx, f.parked.GetId(), nil)
	if !r.succeeded(res, "GetTask in 1.0") {
		return
	}
	switch {
	case t.GetGeneration() != 0 || strings.Contains(string(res.ex.Body), `"generation"`):
		r.fail("a 1.0 request got the task's generation (%d), a member 1.0 does not have", t.GetGeneration())
	case len(t.GetTimeline()) > 0 || strings.Contains(string(res.ex.Body), `"timeline"`):
		r.fail("a 1.0 request got the task's timeline, a member 1.0 does not have")
	default:
		r.same().pass("no generation in the 1.0 answer")
	}
}

// longPollPast asks for a change after a generation the task is already
// past: answered at once.
func (f *previewFamily) longPollPast(ctx context.Context, r *rec) {
	if !r.needs(f.parked != nil, "no task parked in 1.1") {
		return
	}
	cur := f.gen - 1
	start := time.Now()
	res, t := f.get11(ctx, f.parked.GetId(), &cur)
	took := time.Since(start)
	if !r.succeeded(res, "GetTask with currentGeneration") {
		return
	}
	switch {
	case t.GetGeneration() != f.gen:
		r.fail("generation %d, want %d", t.GetGeneration(), f.gen)
	case took > 5*time.Second:
		r.fail("held %s although the task is past currentGeneration %d", took.Round(time.Millisecond), cur)
	default:
		r.same().pass("answered at once (%s) with generation %d", took.Round(time.Millisecond), f.gen)
	}
}

// ifGenerationMismatch continues the parked task expecting a generation it
// does not have: refused, and the task unchanged.
func (f *previewFamily) ifGenerationMismatch(ctx context.Context, r *rec) {
	if !r.needs(f.parked != nil, "no task parked in 1.1") {
		return
	}
	res, _ := f.followUp(ctx, f.gen+7)
	f.probes["a 1.1 follow-up with a stale ifGenerationMatch"] = outcomeKey(res)
	_, after := f.get11(ctx, f.parked.GetId(), nil)
	r.expectThen(f.t.binding, res, a2a.CodeTaskGenerationMismatch, func(v *Verdict, finding *string) {
		if after.GetGeneration() != f.gen || after.GetStatus().GetState() != a2a.TaskState_TASK_STATE_INPUT_REQUIRED {
			*v = Fail
			*finding += fmt.Sprintf("; and the task moved to %s, generation %d", stateName(after.GetStatus().GetState()), after.GetGeneration())
		} else if *v == Pass {
			r.same()
		}
	})
}

// longPollWakes holds a GetTask on the parked task's generation, then
// continues the task (expecting that generation): the held GetTask must
// answer after the follow-up, with a later generation.
func (f *previewFamily) longPollWakes(ctx context.Context, r *rec) {
	if !r.needs(f.parked != nil, "no task parked in 1.1") {
		return
	}
	type got struct {
		res *result
		t   *a2a.Task
		at  time.Time
	}
	done := make(chan got, 1)
	cur := f.gen
	go func() {
		res, t := f.get11(ctx, f.parked.GetId(), &cur)
		done <- got{res, t, time.Now()}
	}()
	// The hold has no signal of its own: give the request time to
	// arrive before the change it waits for.
	select {
	case g := <-done:
		r.saw(g.res)
		if !r.incomplete(g.res) {
			r.fail("answered before any change (%s), not held", g.res.outcome())
		}
		return
	case <-time.After(500 * time.Millisecond):
	}
	sent := time.Now()
	f.follow, _ = f.followUp(ctx, f.gen)
	var g got
	select {
	case g = <-done:
	case <-time.After(15 * time.Second):
		r.fail("still held 15 s after the task changed")
		return
	}
	r.saw(g.res)
	switch {
	case r.incomplete(g.res):
	case !g.res.ok():
		r.fail("the held GetTask failed: %s", g.res.outcome())
	case !f.follow.ok():
		r.na("the follow-up that should wake the hold was refused (%s); the hold answered %s", f.follow.outcome(), g.res.outcome())
	case g.t.GetGeneration() <= cur:
		r.fail("answered generation %d, not after %d", g.t.GetGeneration(), cur)
	case g.at.Before(sent):
		r.fail("answered before the change was sent")
	default:
		r.same().pass("held, then answered generation %d (%s after the follow-up was sent)", g.t.GetGeneration(), g.at.Sub(sent).Round(time.Millisecond))
	}
}

// ifGenerationMatch grades longPollWakes's follow-up, which expected the
// task's current generation: accepted.
func (f *previewFamily) ifGenerationMatch(_ context.Context, r *rec) {
	if !r.needs(f.follow != nil, "no conditional follow-up was sent") {
		return
	}
	if !r.succeeded(f.follow, "the follow-up with the current generation") {
		return
	}
	r.same().pass("accepted")
}

// generationStream streams in 1.1: every event of the task carries a
// generation, one more than the one before.
func (f *previewFamily) generationStream(ctx context.Context, r *rec) {
	if !f.s.card.GetCapabilities().GetStreaming() {
		r.na("the card does not declare streaming")
		return
	}
	res := f.t.stream(ctx, a2a.MethodSendStreamingMessage, &a2a.SendMessageRequest{Message: f.msg("stream 3")}, f.v11,
		streamCtl{settle: settledTerminal, after: 2 * time.Second})
	if !r.succeeded(res, "SendStreamingMessage in 1.1") {
		return
	}
	var gens []int64
	for _, ev := range res.ex.Events {
		if ev.Resp == nil || ev.Resp.GetMessage() != nil {
			continue
		}
		gens = append(gens, a2a.StreamEvent{Response: ev.Resp}.Generation())
	}
	switch {
	case len(gens) == 0:
		r.skip("no task events in the stream (%s)", res.outcome())
	case gens[0] < 1:
		r.fail("generations %v: the first event carries none", gens)
	default:
		for i := 1; i < len(gens); i++ {
			if gens[i] != gens[i-1]+1 {
				r.fail("generations %v: event %d carries %d after %d (each emitted change is one more)", gens, i, gens[i], gens[i-1])
				return
			}
		}
		r.same().pass("generations %v", gens)
	}
}
