package check

import (
	"context"
	"encoding/json"
	"slices"

	"parley.dev/parley/a2a"
)

// walkFamily is what the pagination checks share: a context of three
// tasks, its first page, and the whole context listed at once.
type walkFamily struct {
	*agentRun
	contextID string
	ids       []string // the tasks made in the context before the walk; nil when none could be made
	first     *result  // ListTasks of the context, pageSize 2
	page1     *a2a.ListTasksResponse
	whole     *result // ListTasks of the context without parameters
	all       *a2a.ListTasksResponse
}

// walkSteps grade pagination over a context of three tasks (B5).
var walkSteps = []step[*walkFamily]{
	agentStep("B5.walk", (*walkFamily).walk),
	agentStep("B5.stable", (*walkFamily).stable),
	agentStep("B5.context-sorted", (*walkFamily).contextSorted),
	agentStep("B5.include-artifacts", (*walkFamily).includeArtifacts),
	agentStep("B5.status-filter", (*walkFamily).statusFilter),
}

// sendInContext completes one more task in the context and returns its id.
func (f *walkFamily) sendInContext(ctx context.Context) string {
	m := f.msg("hello")
	m.ContextId = f.contextID
	_, resp := f.send(ctx, m, nil, callOpts{})
	return resp.GetTask().GetId()
}

// list lists the tasks of the context.
func (f *walkFamily) list(ctx context.Context, req *a2a.ListTasksRequest) (*result, *a2a.ListTasksResponse) {
	req.ContextId = f.contextID
	res := f.t.call(ctx, a2a.MethodListTasks, req, callOpts{})
	out := &a2a.ListTasksResponse{}
	if res.ok() {
		if err := res.decode(out); err != nil {
			res.broken = err.Error()
		}
	}
	return res, out
}

// ready ends r as skipped when no context could be made.
func (f *walkFamily) ready(r *rec) bool {
	return r.needs(f.ids != nil, "no task to list")
}

// walk makes three tasks in one context and reads its first page of two.
func (f *walkFamily) walk(ctx context.Context, r *rec) {
	first := f.sendTask(ctx, r, "hello", nil)
	if first == nil {
		return
	}
	f.contextID = first.GetContextId()
	f.ids = []string{first.GetId()}
	for range 2 {
		if id := f.sendInContext(ctx); id != "" {
			f.ids = append(f.ids, id)
		}
	}
	f.first, f.page1 = f.list(ctx, &a2a.ListTasksRequest{PageSize: new(int32(2))})
	res, p1 := f.first, f.page1
	r.saw(res)
	switch {
	case len(f.ids) != 3:
		r.skip("setting up: could not create three tasks in context %s (tasks: %v)", f.contextID, f.ids)
	case r.incomplete(res):
	case !res.ok():
		r.fail("ListTasks(contextId, pageSize 2) failed: %s", res.outcome())
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

// stable creates a fourth task, then reads the second page: no task of
// the first three may repeat or go missing.
func (f *walkFamily) stable(ctx context.Context, r *rec) {
	if !f.ready(r) {
		return
	}
	if !r.needs(f.first.ok() && f.page1.GetNextPageToken() != "", "no first page with a token") {
		return
	}
	f.sendInContext(ctx)
	res, p2 := f.list(ctx, &a2a.ListTasksRequest{PageSize: new(int32(2)), PageToken: f.page1.GetNextPageToken()})
	if !r.gradable(res) {
		return
	}
	seen := map[string]int{}
	for _, t := range append(slices.Clone(f.page1.GetTasks()), p2.GetTasks()...) {
		seen[t.GetId()]++
	}
	var dup, missing []string
	for id, n := range seen {
		if n > 1 {
			dup = append(dup, id)
		}
	}
	for _, id := range f.ids {
		if seen[id] == 0 {
			missing = append(missing, id)
		}
	}
	switch {
	case !res.ok():
		r.fail("the second page failed: %s", res.outcome())
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

func (f *walkFamily) contextSorted(ctx context.Context, r *rec) {
	if !f.ready(r) {
		return
	}
	f.whole, f.all = f.list(ctx, &a2a.ListTasksRequest{})
	res := f.whole
	switch {
	case !r.succeeded(res, "ListTasks"):
	default:
		sortedCheck(r, f.all.GetTasks())
	}
}

// includeArtifacts compares the context listed without and with
// includeArtifacts.
func (f *walkFamily) includeArtifacts(ctx context.Context, r *rec) {
	if !f.ready(r) {
		return
	}
	res := f.whole
	resA, withA := f.list(ctx, &a2a.ListTasksRequest{IncludeArtifacts: new(true)})
	r.sawBoth(res, resA)
	completedWithout := func(t *a2a.Task) bool {
		return t.GetStatus().GetState() == a2a.TaskState_TASK_STATE_COMPLETED && len(t.GetArtifacts()) == 0
	}
	switch {
	case res.failed() || resA.failed():
		r.skip("could not complete the requests")
	case !res.ok() || !resA.ok():
		r.fail("ListTasks failed: %s / %s", res.outcome(), resA.outcome())
	case slices.ContainsFunc(f.all.GetTasks(), func(t *a2a.Task) bool { return len(t.GetArtifacts()) > 0 }) || artifactsMember(res.raw):
		r.fail("artifacts listed without includeArtifacts")
	case len(withA.GetTasks()) == 0 || slices.ContainsFunc(withA.GetTasks(), completedWithout):
		r.fail("includeArtifacts true, but completed tasks come without their artifacts")
	default:
		r.same().pass("omitted by default, present with includeArtifacts")
	}
}

func (f *walkFamily) statusFilter(ctx context.Context, r *rec) {
	if !f.ready(r) {
		return
	}
	res, filtered := f.list(ctx, &a2a.ListTasksRequest{Status: a2a.TaskState_TASK_STATE_COMPLETED, HistoryLength: new(int32(0))})
	if !r.gradable(res) {
		return
	}
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
	case slices.ContainsFunc(filtered.GetTasks(), func(t *a2a.Task) bool { return len(t.GetHistory()) > 0 }):
		r.fail("historyLength 0, but tasks carry history")
	default:
		r.pass("%d COMPLETED tasks, no history", len(filtered.GetTasks()))
	}
}

// artifactsMember reports whether any task of a ListTasksResponse's JSON
// has an artifacts member.
func artifactsMember(raw json.RawMessage) bool {
	var o struct {
		Tasks []map[string]json.RawMessage `json:"tasks"`
	}
	if json.Unmarshal(raw, &o) != nil {
		return false
	}
	return slices.ContainsFunc(o.Tasks, func(t map[string]json.RawMessage) bool {
		_, ok := t["artifacts"]
		return ok
	})
}
