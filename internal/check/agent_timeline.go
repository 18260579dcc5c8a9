package check

import (
	"context"
	"fmt"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
)

// The task timeline of the 1.1 preview (ADR-002, PR #2129 §3.2.4, §3.2.8),
// graded on the task the preview's checks parked and continued: its
// entries in increasing generations, none past the task's, the client's
// follow-up among them, artifacts placed within the task's generations,
// and timelineLength honoured. An entry of a kind the checker does not
// know is skipped, its generation still ordered, as the spec asks of every
// reader (§3.2.8: fail open); it is never the server's fault.

// getTimeline reads the parked task in 1.1 with timelineLength n (nil:
// unset).
func (f *previewFamily) getTimeline(ctx context.Context, n *int32) (*result, *a2a.Task) {
	res := f.t.call(ctx, a2a.MethodGetTask, &a2a.GetTaskRequest{Id: f.parked.GetId(), TimelineLength: n}, f.v11)
	t := &a2a.Task{}
	if res.ok() {
		if err := res.decode(t); err != nil {
			res.broken = "the result is not a Task: " + err.Error()
		}
	}
	return res, t
}

// timelineOrder reads the continued task's timeline: present (the spec's
// SHOULD, a warning without), in strictly increasing generations up to
// the task's, holding the follow-up as a message entry; its artifacts
// start and end within the task's generations.
func (f *previewFamily) timelineOrder(ctx context.Context, r *rec) {
	if !r.needs(f.follow != nil && f.follow.ok(), "no follow-up was accepted (1.1.if-generation-match)") {
		return
	}
	res, t := f.getTimeline(ctx, nil)
	if !r.succeeded(res, "GetTask in 1.1") {
		return
	}
	r.saw(res)
	tl := t.GetTimeline()
	if len(tl) == 0 {
		r.warn("the task has no timeline (servers SHOULD populate it, §3.2.8)")
		return
	}
	unknown, followed := 0, false
	for i, e := range tl {
		switch {
		case e.GetGeneration() < 1 || e.GetGeneration() > t.GetGeneration():
			r.fail("entry %d has generation %d, outside 1..%d (the task's)", i, e.GetGeneration(), t.GetGeneration())
			return
		case i > 0 && e.GetGeneration() <= tl[i-1].GetGeneration():
			r.fail("entry %d has generation %d after %d: entries are ordered by strictly increasing generation", i, e.GetGeneration(), tl[i-1].GetGeneration())
			return
		case e.GetEntry() == nil:
			unknown++ // a kind the checker does not know: skipped (fail open)
		case e.GetMessage() != nil && a2a.FirstText(e.GetMessage()) == "follow-up":
			followed = true
		}
	}
	if msg := f.artifactsOutside(t); msg != "" {
		r.fail("%s", msg)
		return
	}
	if !followed {
		r.fail("the follow-up the client sent is not a message entry of the timeline (a client message is one, §3.2.8)")
		return
	}
	note := ""
	if unknown > 0 {
		note = fmt.Sprintf("; %d entries of a kind the checker does not know, skipped", unknown)
	}
	r.same().pass("%d entries, generations %d..%d, the follow-up among them%s", len(tl), tl[0].GetGeneration(), tl[len(tl)-1].GetGeneration(), note)
}

// artifactsOutside says which artifact of t is placed outside the task's
// generations, or "" when none is (an artifact without generations says
// nothing).
func (f *previewFamily) artifactsOutside(t *a2a.Task) string {
	for _, a := range t.GetArtifacts() {
		s, e := a.GetStartGeneration(), a.GetEndGeneration()
		switch {
		case s == 0 && e == 0:
		case s < 1 || s > t.GetGeneration():
			return fmt.Sprintf("artifact %q starts at generation %d, outside 1..%d", a.GetArtifactId(), s, t.GetGeneration())
		case e != 0 && (e < s || e > t.GetGeneration()):
			return fmt.Sprintf("artifact %q ends at generation %d, outside %d..%d", a.GetArtifactId(), e, s, t.GetGeneration())
		}
	}
	return ""
}

// timelineLength reads the task with timelineLength 0 (no entries) and 1
// (the last entry only).
func (f *previewFamily) timelineLength(ctx context.Context, r *rec) {
	if !r.needs(f.parked != nil, "no task parked in 1.1") {
		return
	}
	all, full := f.getTimeline(ctx, nil)
	if !r.succeeded(all, "GetTask in 1.1") {
		return
	}
	if len(full.GetTimeline()) < 2 {
		r.na("the task's timeline has %d entries: too few to trim", len(full.GetTimeline()))
		return
	}
	none, t0 := f.getTimeline(ctx, proto.Int32(0))
	one, t1 := f.getTimeline(ctx, proto.Int32(1))
	r.saw(none).saw(one)
	last := full.GetTimeline()[len(full.GetTimeline())-1]
	switch {
	case !none.ok() || !one.ok():
		r.fail("GetTask with timelineLength failed: %s, %s", none.outcome(), one.outcome())
	case len(t0.GetTimeline()) != 0:
		r.fail("timelineLength 0 gave %d entries, want none", len(t0.GetTimeline()))
	case len(t1.GetTimeline()) != 1:
		r.fail("timelineLength 1 gave %d entries, want the last one", len(t1.GetTimeline()))
	case t1.GetTimeline()[0].GetGeneration() < last.GetGeneration():
		r.fail("timelineLength 1 gave the entry at generation %d, not the last (%d)", t1.GetTimeline()[0].GetGeneration(), last.GetGeneration())
	default:
		r.same().pass("0: none; 1: the entry at generation %d; unset: all %d", t1.GetTimeline()[0].GetGeneration(), len(full.GetTimeline()))
	}
}
