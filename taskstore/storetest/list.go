package storetest

import (
	"errors"
	"fmt"
	"testing"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
)

// orderFixture creates tasks with distinct and equal timestamps, inserted
// neither in id nor in time order.
func orderFixture(t *testing.T, s taskstore.Tasks) []*a2a.Task {
	tasks := []*a2a.Task{
		task("m", "c1", working, at(50)),
		task("b", "c2", completed, at(10)),
		task("z", "c1", completed, at(30)),
		task("a", "c1", working, at(30)),
		task("q", "c2", working, at(30)),
		task("k", "c1", failed, at(70)),
		task("c", "c2", working, at(-5)),
		task("y", "c1", canceled, at(10)),
		task("aa", "c2", working, at(30)),
		task("x", "c1", submitted, at(90)),
	}
	mustCreate(t, s, scopeA, tasks...)
	return tasks
}

// testListOrder: ListTasks returns every task newest first, ties broken by
// greater id first.
func testListOrder(t *testing.T, s TaskStore) {
	tasks := orderFixture(t, s)
	res := mustList(t, s, scopeA, taskstore.ListQuery{})
	want := expectedOrder(tasks)
	sameIDs(t, "ListTasks order", ids(res.Tasks), want)
	if res.Total != len(tasks) || res.More {
		t.Errorf("Total %d More %v, want %d false", res.Total, res.More, len(tasks))
	}
	// Spot-check the tie-break explicitly, independent of expectedOrder.
	sameIDs(t, "tasks at the same timestamp", ids(mustList(t, s, scopeA, taskstore.ListQuery{Since: at(30), Limit: 1000}).Tasks)[3:], []string{"z", "q", "aa", "a"})
	for i, tk := range res.Tasks {
		var src *a2a.Task
		for _, x := range tasks {
			if x.Id == tk.GetId() {
				src = x
			}
		}
		wantEqual(t, fmt.Sprintf("listed task %d", i), tk, src)
	}
}

// filter returns the tasks keep accepts, in order.
func filter(tasks []*a2a.Task, keep func(*a2a.Task) bool) []*a2a.Task {
	var out []*a2a.Task
	for _, tk := range tasks {
		if keep(tk) {
			out = append(out, tk)
		}
	}
	return out
}

// testListFilters: each filter combination returns exactly the matching
// tasks in order, in one page and paged one at a time.
func testListFilters(t *testing.T, s TaskStore) {
	tasks := orderFixture(t, s)
	// Noise in other scopes that match the same filters.
	mustCreate(t, s, scopeB, task("nb", "c1", working, at(30)))
	mustCreate(t, s, scopeC, task("nc", "c1", working, at(30)))

	cases := []struct {
		q    taskstore.ListQuery
		keep func(*a2a.Task) bool
	}{
		{taskstore.ListQuery{ContextID: "c1"}, func(x *a2a.Task) bool { return x.ContextId == "c1" }},
		{taskstore.ListQuery{ContextID: "none"}, func(x *a2a.Task) bool { return false }},
		{taskstore.ListQuery{State: working}, func(x *a2a.Task) bool { return x.Status.State == working }},
		{taskstore.ListQuery{State: rejected}, func(x *a2a.Task) bool { return false }},
		{taskstore.ListQuery{Since: at(30)}, func(x *a2a.Task) bool { return !x.Status.Timestamp.AsTime().Before(at(30)) }},
		{taskstore.ListQuery{ContextID: "c1", State: working}, func(x *a2a.Task) bool { return x.ContextId == "c1" && x.Status.State == working }},
		{taskstore.ListQuery{ContextID: "c2", Since: at(10)}, func(x *a2a.Task) bool {
			return x.ContextId == "c2" && !x.Status.Timestamp.AsTime().Before(at(10))
		}},
		{taskstore.ListQuery{State: completed, Since: at(30)}, func(x *a2a.Task) bool {
			return x.Status.State == completed && !x.Status.Timestamp.AsTime().Before(at(30))
		}},
		{taskstore.ListQuery{ContextID: "c2", State: working, Since: at(0)}, func(x *a2a.Task) bool {
			return x.ContextId == "c2" && x.Status.State == working && !x.Status.Timestamp.AsTime().Before(at(0))
		}},
	}
	for _, tc := range cases {
		want := expectedOrder(filter(tasks, tc.keep))
		res := mustList(t, s, scopeA, tc.q)
		sameIDs(t, fmt.Sprintf("ListTasks(%+v)", tc.q), ids(res.Tasks), want)
		if res.Total != len(want) || res.More {
			t.Errorf("ListTasks(%+v): Total %d More %v, want %d false", tc.q, res.Total, res.More, len(want))
		}
		// The same filters paged one task at a time.
		q := tc.q
		q.Limit = 1
		got := walk(t, s, scopeA, q, len(want))
		sameIDs(t, fmt.Sprintf("ListTasks(%+v) paged by 1", tc.q), got, want)
	}
}

// testListSince: Since keeps tasks at or after it, the bound included.
func testListSince(t *testing.T, s TaskStore) {
	mustCreate(t, s, scopeA,
		task("before", "c", working, at(99)),
		task("exact", "c", working, at(100)),
		task("after", "c", working, at(101)))
	res := mustList(t, s, scopeA, taskstore.ListQuery{Since: at(100)})
	sameIDs(t, "Since is inclusive", ids(res.Tasks), []string{"after", "exact"})
	if res.Total != 2 {
		t.Errorf("Total %d, want 2", res.Total)
	}
	res = mustList(t, s, scopeA, taskstore.ListQuery{Since: at(102)})
	if len(res.Tasks) != 0 || res.Total != 0 {
		t.Errorf("Since after every task: %d tasks, Total %d; want none", len(res.Tasks), res.Total)
	}
	res = mustList(t, s, scopeA, taskstore.ListQuery{Since: at(-1000)})
	if res.Total != 3 {
		t.Errorf("Since before every task: Total %d, want 3", res.Total)
	}
}

// testTotalAndMore: Total ignores the cursor and the limit; More says
// whether tasks remain after the page.
func testTotalAndMore(t *testing.T, s TaskStore) {
	var tasks []*a2a.Task
	for i := range 7 {
		tasks = append(tasks, task(fmt.Sprintf("t%d", i), fmt.Sprintf("c%d", i%2), working, at(i)))
	}
	mustCreate(t, s, scopeA, tasks...)
	all := expectedOrder(tasks)

	check := func(q taskstore.ListQuery, wantIDs []string, total int, more bool) {
		t.Helper()
		res := mustList(t, s, scopeA, q)
		sameIDs(t, fmt.Sprintf("ListTasks(%+v)", q), ids(res.Tasks), wantIDs)
		if res.Total != total || res.More != more {
			t.Errorf("ListTasks(%+v): Total %d More %v, want %d %v", q, res.Total, res.More, total, more)
		}
	}
	check(taskstore.ListQuery{Limit: 7}, all, 7, false)
	check(taskstore.ListQuery{Limit: 8}, all, 7, false)
	check(taskstore.ListQuery{Limit: 6}, all[:6], 7, true)
	check(taskstore.ListQuery{Limit: 1}, all[:1], 7, true)
	check(taskstore.ListQuery{Limit: 3, After: cursorOf(tasks[6])}, all[1:4], 7, true)
	check(taskstore.ListQuery{Limit: 3, After: cursorOf(tasks[3])}, all[4:7], 7, false)
	check(taskstore.ListQuery{Limit: 3, After: cursorOf(tasks[0])}, nil, 7, false)
	// c1 holds t5, t3, t1.
	check(taskstore.ListQuery{Limit: 2, ContextID: "c1"}, []string{"t5", "t3"}, 3, true)
	check(taskstore.ListQuery{Limit: 2, ContextID: "c1", After: cursorOf(tasks[3])}, []string{"t1"}, 3, false)
	check(taskstore.ListQuery{Limit: 2, ContextID: "c0", Since: at(2)}, []string{"t6", "t4"}, 3, true)
	// A context and a state, paged.
	check(taskstore.ListQuery{Limit: 2, ContextID: "c1", State: working}, []string{"t5", "t3"}, 3, true)
	check(taskstore.ListQuery{Limit: 2, ContextID: "c1", State: working, After: cursorOf(tasks[3])}, []string{"t1"}, 3, false)
	check(taskstore.ListQuery{Limit: 2, ContextID: "c0", State: working, Since: at(3)}, []string{"t6", "t4"}, 2, false)
	check(taskstore.ListQuery{Limit: 2, ContextID: "c1", State: completed}, nil, 0, false)
	// A cursor that is not a stored task still positions the page.
	check(taskstore.ListQuery{Limit: 10, After: &taskstore.Cursor{Time: at(4), ID: "t4x"}}, all[2:], 7, false)
	check(taskstore.ListQuery{Limit: 10, After: &taskstore.Cursor{Time: at(4), ID: "t3"}}, all[3:], 7, false)
}

// walk pages through the query with its limit and returns the ids seen. It
// fails on a page larger than the limit, a More flag that disagrees with
// the next page, or a Total that changes.
func walk(t *testing.T, s taskstore.Tasks, sc taskstore.Scope, q taskstore.ListQuery, total int) []string {
	t.Helper()
	var seen []string
	for pages := 0; ; pages++ {
		if pages > total+2 {
			t.Fatalf("walk did not end after %d pages", pages)
		}
		res := mustList(t, s, sc, q)
		if len(res.Tasks) > q.Limit {
			t.Fatalf("page of %d tasks exceeds Limit %d", len(res.Tasks), q.Limit)
		}
		if total >= 0 && res.Total != total {
			t.Errorf("page %d: Total %d, want %d", pages, res.Total, total)
		}
		seen = append(seen, ids(res.Tasks)...)
		if !res.More {
			return seen
		}
		if len(res.Tasks) == 0 {
			t.Fatalf("page %d is empty but More is set", pages)
		}
		q.After = cursorOf(res.Tasks[len(res.Tasks)-1])
	}
}

// testPagination: walking pages of any size returns every task once, in
// order, also when page boundaries fall among equal timestamps.
func testPagination(t *testing.T, s TaskStore) {
	var tasks []*a2a.Task
	for i := range 53 {
		// Groups of up to 4 tasks share a timestamp, so page boundaries
		// fall inside groups.
		tasks = append(tasks, task(fmt.Sprintf("p%03d", (i*37)%53), "c", working, at(i/4)))
	}
	mustCreate(t, s, scopeA, tasks...)
	want := expectedOrder(tasks)
	for _, limit := range []int{1, 2, 3, 5, 10, 53, 100} {
		got := walk(t, s, scopeA, taskstore.ListQuery{Limit: limit}, len(tasks))
		sameIDs(t, fmt.Sprintf("walk with Limit %d", limit), got, want)
	}
}

// testPaginationWhileCreating: tasks created during a walk appear in it
// exactly when they sort after the cursor, and none appears twice.
func testPaginationWhileCreating(t *testing.T, s TaskStore) {
	var tasks []*a2a.Task
	for i := range 30 {
		tasks = append(tasks, task(fmt.Sprintf("o%02d", i), "c", working, at(i/3)))
	}
	mustCreate(t, s, scopeA, tasks...)
	want := map[string]bool{}
	for _, tk := range tasks {
		want[tk.Id] = true
	}

	q := taskstore.ListQuery{Limit: 4}
	seen := map[string]int{}
	n := 0
	for pages := 0; ; pages++ {
		if pages > 100 {
			t.Fatal("walk did not end")
		}
		res := mustList(t, s, scopeA, q)
		for _, tk := range res.Tasks {
			seen[tk.GetId()]++
		}
		if !res.More {
			break
		}
		last := res.Tasks[len(res.Tasks)-1]
		lt := last.GetStatus().GetTimestamp().AsTime()
		// Tasks created during the walk: newer ones and ones tied with
		// the cursor but sorting before it must not appear later; older
		// ones and ones tied but sorting after it must.
		newer := task(fmt.Sprintf("n%02d", n), "c", working, at(1000+n))
		tieBefore := task(last.GetId()+"~", "c", working, lt)
		older := task(fmt.Sprintf("l%02d", n), "c", working, at(-1000-n))
		n++
		mustCreate(t, s, scopeA, newer, tieBefore, older)
		if lid := last.GetId(); len(lid) > 1 {
			tieAfter := task(lid[:len(lid)-1], "c", working, lt)
			if _, err := s.GetTask(t.Context(), scopeA, tieAfter.Id); errors.Is(err, taskstore.ErrNotFound) {
				mustCreate(t, s, scopeA, tieAfter)
				want[tieAfter.Id] = true
			}
		}
		want[older.Id] = true
		q.After = cursorOf(last)
	}
	for id, c := range seen {
		if c > 1 {
			t.Errorf("task %q seen %d times during the walk", id, c)
		}
		if !want[id] {
			t.Errorf("task %q, created during the walk before the cursor, was returned", id)
		}
	}
	for id := range want {
		if seen[id] == 0 {
			t.Errorf("task %q was never returned by the walk", id)
		}
	}
}

// testListAfterUpdate: an update that changes a task's timestamp, state or
// context moves it in the order, the filters and the totals at once.
func testListAfterUpdate(t *testing.T, s TaskStore) {
	mustCreate(t, s, scopeA,
		task("t1", "c1", working, at(1)),
		task("t2", "c1", working, at(2)),
		task("t3", "c2", working, at(3)))
	// Move t1 to the front, to another state and another context.
	mustUpdate(t, s, scopeA, task("t1", "c2", completed, at(10)))
	sameIDs(t, "order after update", ids(mustList(t, s, scopeA, taskstore.ListQuery{}).Tasks), []string{"t1", "t3", "t2"})
	sameIDs(t, "old state after update", ids(mustList(t, s, scopeA, taskstore.ListQuery{State: working}).Tasks), []string{"t3", "t2"})
	sameIDs(t, "new state after update", ids(mustList(t, s, scopeA, taskstore.ListQuery{State: completed}).Tasks), []string{"t1"})
	sameIDs(t, "old context after update", ids(mustList(t, s, scopeA, taskstore.ListQuery{ContextID: "c1"}).Tasks), []string{"t2"})
	sameIDs(t, "new context after update", ids(mustList(t, s, scopeA, taskstore.ListQuery{ContextID: "c2"}).Tasks), []string{"t1", "t3"})
	sameIDs(t, "context and state after update", ids(mustList(t, s, scopeA, taskstore.ListQuery{ContextID: "c2", State: completed}).Tasks), []string{"t1"})
	// Move it back behind everything; totals follow.
	mustUpdate(t, s, scopeA, task("t1", "c1", working, at(0)))
	res := mustList(t, s, scopeA, taskstore.ListQuery{State: working, Since: at(0)})
	sameIDs(t, "order after second update", ids(res.Tasks), []string{"t3", "t2", "t1"})
	if res.Total != 3 {
		t.Errorf("Total %d, want 3", res.Total)
	}
	if n := mustList(t, s, scopeA, taskstore.ListQuery{State: completed}).Total; n != 0 {
		t.Errorf("completed Total %d after moving back, want 0", n)
	}
}
