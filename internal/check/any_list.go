package check

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"parley.dev/parley/a2a"
)

// listFamily is what the ListTasks checks share: one ListTasks without
// parameters, as JSON members and as decoded.
type listFamily struct {
	b   *bindingRun
	res *result
	raw struct {
		Tasks         []json.RawMessage `json:"tasks"`
		NextPageToken *string           `json:"nextPageToken"`
		PageSize      *json.Number      `json:"pageSize"`
		TotalSize     *json.Number      `json:"totalSize"`
	}
	list     *a2a.ListTasksResponse
	haveList bool // list holds the decoded response
}

// listSteps grade the shape of ListTasks (B5) on whatever tasks the server
// has.
var listSteps = []step[*listFamily]{
	{Result{ID: "B5.list-shape", Row: "B5", Operation: a2a.MethodListTasks, Title: "ListTasks returns tasks, nextPageToken, pageSize and totalSize",
		Level: "MUST", Section: "§3.1.4, §5.7",
		Requires: "The nextPageToken field MUST always be present in the response (\"\" on the last page); tasks, pageSize and totalSize are REQUIRED"},
		(*listFamily).shape},
	{Result{ID: "B5.artifacts-omitted", Row: "B5", Operation: a2a.MethodListTasks, Title: "without includeArtifacts, tasks carry no artifacts member",
		Level: "MUST", Section: "§3.1.4",
		Requires: "When includeArtifacts is false (the default), the artifacts field MUST be omitted entirely from each Task object (not an empty array or null)"},
		(*listFamily).artifactsOmitted},
	{Result{ID: "B5.sorted", Row: "B5", Operation: a2a.MethodListTasks, Title: "tasks are sorted by status timestamp, newest first",
		Level: "MUST", Section: "§3.1.4",
		Requires: "Implementations MUST return tasks sorted by their status timestamp time in descending order"},
		(*listFamily).sorted},
	{Result{ID: "B5.page-size-zero", Row: "B5", Operation: a2a.MethodListTasks, Title: "ListTasks with pageSize 0 (outside 1..100)",
		Level: "SHOULD", Section: "§3.1.4, §2.7", Requires: pageSizeRequires},
		pageSizeOutOfRange(0)},
	{Result{ID: "B5.page-size-over", Row: "B5", Operation: a2a.MethodListTasks, Title: "ListTasks with pageSize 101 (outside 1..100)",
		Level: "SHOULD", Section: "§3.1.4, §2.7", Requires: pageSizeRequires},
		pageSizeOutOfRange(101)},
	{Result{ID: "B5.bad-token", Row: "B5", Operation: a2a.MethodListTasks, Title: "ListTasks with a page token the server never issued",
		Level: "SPEC SILENT", Section: "§3.1.4, §3.3.2",
		Requires: "page tokens are opaque; the spec does not say what an invalid one gets (servers MUST validate input, §3.3.2)"},
		(*listFamily).badToken},
}

const pageSizeRequires = "pageSize: the minimum value is 1, the maximum value is 100 (proto comment); the spec's validation sample refuses 150"

// listChecks runs listSteps.
func (b *bindingRun) listChecks(ctx context.Context) {
	runSteps(ctx, b, &listFamily{b: b, list: &a2a.ListTasksResponse{}}, listSteps)
}

// shape lists the tasks and grades the REQUIRED members of the response;
// on gRPC presence is not observable, so the decoded message is graded.
func (f *listFamily) shape(ctx context.Context, r *rec) {
	b := f.b
	f.res = b.t.call(ctx, a2a.MethodListTasks, &a2a.ListTasksRequest{}, callOpts{})
	res := f.res
	r.saw(res)
	defer func() { f.haveList = res.ok() && res.decode(f.list) == nil }()
	if r.incomplete(res) {
		return
	}
	if b.t.binding == a2a.BindingGRPC {
		l := &a2a.ListTasksResponse{}
		switch {
		case !res.ok():
			r.fail("ListTasks failed: %s", res.outcome())
		case res.decode(l) != nil:
			r.fail("the response message is not a ListTasksResponse")
		default:
			r.same().pass("%d tasks, nextPageToken %q, pageSize %d, totalSize %d (protobuf: a field at its default is not sent and reads as the default, so presence is not observable)",
				len(l.GetTasks()), abridge(l.GetNextPageToken(), 24), l.GetPageSize(), l.GetTotalSize())
		}
		return
	}
	var top map[string]json.RawMessage
	switch {
	case !res.ok():
		r.fail("ListTasks failed: %s", res.outcome())
	case json.Unmarshal(res.raw, &top) != nil || json.Unmarshal(res.raw, &f.raw) != nil:
		r.fail("the result is not a ListTasksResponse object")
	default:
		var missing []string
		for _, k := range []string{"tasks", "nextPageToken", "pageSize", "totalSize"} {
			if _, ok := top[k]; !ok {
				missing = append(missing, k)
			}
		}
		if len(missing) > 0 {
			r.fail("missing: %s", strings.Join(missing, ", "))
		} else {
			r.same().pass("%d tasks, nextPageToken %q, pageSize %s, totalSize %s", len(f.raw.Tasks), abridge(*f.raw.NextPageToken, 24), f.raw.PageSize, f.raw.TotalSize)
		}
	}
}

// artifactsOmitted grades the tasks listed without includeArtifacts: on
// JSON the artifacts member must be absent, on gRPC the field empty.
func (f *listFamily) artifactsOmitted(_ context.Context, r *rec) {
	r.saw(f.res)
	grpc := f.b.t.binding == a2a.BindingGRPC
	switch {
	case !f.haveList:
		r.skip("no ListTasks result")
	case grpc && len(f.list.GetTasks()) == 0:
		r.na("the server lists no tasks")
	case grpc:
		bad := 0
		for _, t := range f.list.GetTasks() {
			if len(t.GetArtifacts()) > 0 {
				bad++
			}
		}
		if bad > 0 {
			r.fail("%d of %d tasks carry artifacts", bad, len(f.list.GetTasks()))
		} else {
			r.same().pass("none of %d tasks carries artifacts", len(f.list.GetTasks()))
		}
	case len(f.raw.Tasks) == 0:
		r.na("the server lists no tasks")
	default:
		bad := 0
		for _, t := range f.raw.Tasks {
			var o map[string]json.RawMessage
			if json.Unmarshal(t, &o) == nil {
				if _, ok := o["artifacts"]; ok {
					bad++
				}
			}
		}
		if bad > 0 {
			r.fail("%d of %d tasks carry an artifacts member", bad, len(f.raw.Tasks))
		} else {
			r.same().pass("none of %d tasks carries artifacts", len(f.raw.Tasks))
		}
	}
}

func (f *listFamily) sorted(_ context.Context, r *rec) {
	r.saw(f.res)
	if !f.haveList {
		r.skip("no ListTasks result")
		return
	}
	sortedCheck(r, f.list.GetTasks())
}

// pageSizeOutOfRange is a step that lists with a pageSize outside 1..100.
func pageSizeOutOfRange(size int32) func(*listFamily, context.Context, *rec) {
	return func(f *listFamily, ctx context.Context, r *rec) {
		b := f.b
		res := b.t.call(ctx, a2a.MethodListTasks, &a2a.ListTasksRequest{PageSize: new(size)}, callOpts{})
		r.saw(res)
		b.probes[fmt.Sprintf("ListTasks with pageSize %d", size)] = outcomeKey(res)
		if r.incomplete(res) {
			return
		}
		got := &a2a.ListTasksResponse{}
		switch {
		case res.err.is(a2a.CodeInvalidParams):
			r.same().pass("refused: %s", describeError(res.err))
		case res.ok() && res.decode(got) == nil && got.GetPageSize() >= 1 && got.GetPageSize() <= 100 && len(got.GetTasks()) <= 100:
			r.differs("Parley refuses with InvalidParamsError").pass("accepted and kept within bounds (pageSize %d in the response)", got.GetPageSize())
		case res.ok():
			r.differs("Parley refuses with InvalidParamsError").warn("accepted: response pageSize %d, %d tasks", got.GetPageSize(), len(got.GetTasks()))
		default:
			r.differs("Parley refuses with InvalidParamsError").warn("refused with %s rather than InvalidParamsError", describeError(res.err))
		}
	}
}

func (f *listFamily) badToken(ctx context.Context, r *rec) {
	b := f.b
	res := b.t.call(ctx, a2a.MethodListTasks, &a2a.ListTasksRequest{PageToken: "parley-check-not-a-token"}, callOpts{})
	b.probes["ListTasks with a page token never issued"] = outcomeKey(res)
	switch {
	case !r.gradable(res):
	case res.err.is(a2a.CodeInvalidParams):
		r.same().na("refused: %s", describeError(res.err))
	default:
		r.differs("Parley refuses with InvalidParamsError").na("%s", res.outcome())
	}
}

// sortedCheck grades the order of listed tasks.
func sortedCheck(r *rec, tasks []*a2a.Task) {
	var stamped int
	for i, t := range tasks {
		if t.GetStatus().GetTimestamp() == nil {
			continue
		}
		stamped++
		if i > 0 && tasks[i-1].GetStatus().GetTimestamp() != nil &&
			tasks[i-1].GetStatus().GetTimestamp().AsTime().Before(t.GetStatus().GetTimestamp().AsTime()) {
			r.fail("task %d (%s) is newer than task %d (%s)", i, t.GetStatus().GetTimestamp().AsTime().Format(time.RFC3339Nano),
				i-1, tasks[i-1].GetStatus().GetTimestamp().AsTime().Format(time.RFC3339Nano))
			return
		}
	}
	if stamped < 2 {
		r.na("fewer than two tasks with a status timestamp")
		return
	}
	r.same().pass("%d tasks in descending status timestamp order", stamped)
}
