package storetest

import (
	"errors"
	"fmt"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
)

// taskChecks are the tests of the tasks role, ListTasks included
// (testListOrder and those after it).
var taskChecks = []check[TaskStore]{
	{"CreateGetRoundTrip", testCreateGet},
	{"UpdateRoundTrip", testUpdate},
	{"TaskCopiesInAndOut", testTaskCopies},
	{"EventSequence", testEventSequence},
	{"DuplicateIDAcrossScopes", testDuplicate},
	{"ScopeIsolation", testScopeIsolation},
	{"TaskWithoutStatus", testNoStatus},
	{"ListOrder", testListOrder},
	{"ListFilters", testListFilters},
	{"ListSinceInclusive", testListSince},
	{"ListTotalAndMore", testTotalAndMore},
	{"ListPagination", testPagination},
	{"ListPaginationWhileCreating", testPaginationWhileCreating},
	{"ListAfterUpdate", testListAfterUpdate},
	{"ListActive", testListActive},
	{"DeleteFinished", testDeleteFinished},
}

func init() { taskChecks = append(taskChecks, eventChecks...) }

// testCreateGet: a created task reads and lists back exactly as given.
func testCreateGet(t *testing.T, s TaskStore) {
	want := richTask("rich")
	mustCreate(t, s, scopeA, want)
	wantEqual(t, "GetTask after CreateTask", mustGet(t, s, scopeA, "rich"), want)

	_, err := s.GetTask(t.Context(), scopeA, "missing")
	wantErr(t, "GetTask of an unknown id", err, taskstore.ErrNotFound)

	res := mustList(t, s, scopeA, taskstore.ListQuery{})
	if len(res.Tasks) != 1 {
		t.Fatalf("ListTasks returned %d tasks, want 1", len(res.Tasks))
	}
	wantEqual(t, "task listed", res.Tasks[0], want)
}

// testUpdate: a Task event replaces the whole task, and an Append never
// creates one.
func testUpdate(t *testing.T, s TaskStore) {
	tk := richTask("u1")
	mustCreate(t, s, scopeA, tk)

	up := proto.Clone(tk).(*a2a.Task)
	up.Status = &a2a.TaskStatus{State: completed, Timestamp: timestamppb.New(at(100))}
	up.History = append(up.History, message("m3", "u1", up.ContextId, "third"))
	up.Artifacts = nil
	up.Metadata = nil
	mustUpdate(t, s, scopeA, up)
	wantEqual(t, "GetTask after a Task event", mustGet(t, s, scopeA, "u1"), up)

	err := s.Append(t.Context(), scopeA, "nope", statusAt("nope", 1, working, at(1)))
	wantErr(t, "Append to an unknown id", err, taskstore.ErrNotFound)
	if _, err := s.GetTask(t.Context(), scopeA, "nope"); !errors.Is(err, taskstore.ErrNotFound) {
		t.Errorf("Append to an unknown id created it (GetTask error %v)", err)
	}
}

// testEventSequence: the last event sequence number is stored with the
// task, grows by one per event, is kept by a message without an event, and
// is only visible in the task's scope; an event out of sequence is refused
// (ErrSeq) without writing anything.
func testEventSequence(t *testing.T, s TaskStore) {
	ctx := t.Context()
	tk := task("seq", "c", working, at(1))
	if err := s.CreateTask(ctx, scopeA, tk, taskstore.Event{Seq: 1}); err != nil {
		t.Fatal(err)
	}
	want := func(n uint64) {
		t.Helper()
		got, err := s.LastSeq(ctx, scopeA, "seq")
		if err != nil || got != n {
			t.Fatalf("LastSeq = %d, %v; want %d", got, err, n)
		}
	}
	want(1)
	for _, step := range []struct {
		ev   taskstore.Event
		err  error
		last uint64
	}{
		{statusAt("seq", 2, working, at(2)), nil, 2},
		{taskstore.Event{Message: message("m1", "seq", "c", "more")}, nil, 2},
		{statusAt("seq", 2, completed, at(3)), taskstore.ErrSeq, 2},
		{statusAt("seq", 4, completed, at(3)), taskstore.ErrSeq, 2},
		{statusAt("seq", 1, completed, at(3)), taskstore.ErrSeq, 2},
		{taskstore.Event{Response: statusEvent("seq", completed)}, taskstore.ErrSeq, 2},
		{taskstore.Event{Seq: 3, Message: message("m2", "seq", "c", "more")}, taskstore.ErrSeq, 2},
		{statusAt("seq", 3, inputRequired, at(4)), nil, 3},
	} {
		before := mustGet(t, s, scopeA, "seq")
		err := s.Append(ctx, scopeA, "seq", step.ev)
		if step.err == nil && err != nil {
			t.Fatalf("Append(seq %d): %v", step.ev.Seq, err)
		}
		if step.err != nil {
			wantErr(t, fmt.Sprintf("Append(seq %d) after %d", step.ev.Seq, step.last), err, step.err)
			wantEqual(t, "task after a refused Append", mustGet(t, s, scopeA, "seq"), before)
		}
		want(step.last)
	}
	if _, err := s.LastSeq(ctx, scopeB, "seq"); !errors.Is(err, taskstore.ErrNotFound) {
		t.Fatalf("LastSeq from another scope: %v, want ErrNotFound", err)
	}
	if _, err := s.LastSeq(ctx, scopeA, "nope"); !errors.Is(err, taskstore.ErrNotFound) {
		t.Fatalf("LastSeq of a missing task: %v, want ErrNotFound", err)
	}
}

// testTaskCopies: the store keeps copies of the tasks it is given, and
// ListTasks and ListActive return copies, so no caller's change reaches a
// stored task; GetTask's tasks may be shared, and no later write of the
// task changes one.
func testTaskCopies(t *testing.T, s TaskStore) {
	ctx := t.Context()
	in := richTask("c1")
	want := proto.Clone(in).(*a2a.Task)
	mustCreate(t, s, scopeA, in)
	in.Status.State = failed
	in.History[0].Parts[0] = text("changed")
	in.Metadata.Fields["priority"] = structpb.NewNumberValue(9)
	wantEqual(t, "stored task after the caller changed the created task", mustGet(t, s, scopeA, "c1"), want)

	got := mustGet(t, s, scopeA, "c1")
	again := mustGet(t, s, scopeA, "c1") // read twice: a cache may keep it now
	wantEqual(t, "task read again", again, got)

	res := mustList(t, s, scopeA, taskstore.ListQuery{})
	res.Tasks[0].Status.State = rejected
	res.Tasks[0].History[0].MessageId = "x"
	wantEqual(t, "stored task after the caller changed a listed task", mustGet(t, s, scopeA, "c1"), want)

	up := proto.Clone(want).(*a2a.Task)
	up.Status = &a2a.TaskStatus{State: working, Timestamp: timestamppb.New(at(7))}
	want = proto.Clone(up).(*a2a.Task)
	held := proto.Clone(again).(*a2a.Task)
	mustUpdate(t, s, scopeA, up)
	wantEqual(t, "a task GetTask returned, after a write of the task", again, held)
	up.Status.State = completed
	up.History = nil
	wantEqual(t, "stored task after the caller changed an updated task", mustGet(t, s, scopeA, "c1"), want)

	active, err := s.ListActive(ctx)
	if err != nil || len(active) != 1 {
		t.Fatalf("ListActive: %d tasks, error %v; want 1 task", len(active), err)
	}
	active[0].Task.Status.State = failed
	active[0].Task.ContextId = "zzz"
	wantEqual(t, "stored task after the caller changed an active task", mustGet(t, s, scopeA, "c1"), want)
}

// testDuplicate: a task id taken in one scope is refused in every scope,
// and the refused task is visible nowhere.
func testDuplicate(t *testing.T, s TaskStore) {
	orig := task("dup", "c", working, at(1))
	mustCreate(t, s, scopeA, orig)
	for _, sc := range append([]taskstore.Scope{scopeA}, others...) {
		err := s.CreateTask(t.Context(), sc, task("dup", "other", completed, at(2)), taskstore.Event{})
		wantErr(t, fmt.Sprintf("CreateTask of a taken id in scope %+v", sc), err, taskstore.ErrExists)
	}
	wantEqual(t, "task after refused duplicates", mustGet(t, s, scopeA, "dup"), orig)
	for _, sc := range others {
		if _, err := s.GetTask(t.Context(), sc, "dup"); !errors.Is(err, taskstore.ErrNotFound) {
			t.Errorf("refused duplicate became visible in scope %+v (error %v)", sc, err)
		}
		if n := mustList(t, s, sc, taskstore.ListQuery{}).Total; n != 0 {
			t.Errorf("refused duplicate counted in scope %+v: Total %d", sc, n)
		}
	}
}

// testScopeIsolation: no other scope can read, change or list a task (see
// testPushConfigScopeIsolation for its push configurations).
func testScopeIsolation(t *testing.T, s TaskStore) {
	ctx := t.Context()
	a := task("a1", "shared-ctx", working, at(10))
	mustCreate(t, s, scopeA, a, task("a2", "shared-ctx", completed, at(20)))
	mustCreate(t, s, scopeB, task("b1", "shared-ctx", working, at(15)))

	for _, sc := range others {
		name := fmt.Sprintf("scope %+v", sc)
		_, err := s.GetTask(ctx, sc, "a1")
		wantErr(t, name+": GetTask of another scope's task", err, taskstore.ErrNotFound)

		err = s.Append(ctx, sc, "a1", statusAt("a1", 1, failed, at(99)))
		wantErr(t, name+": Append to another scope's task", err, taskstore.ErrNotFound)
		err = s.Append(ctx, sc, "a1", taskstore.Event{Message: message("mx", "a1", "x", "hi")})
		wantErr(t, name+": Append of a message to another scope's task", err, taskstore.ErrNotFound)

		for _, q := range []taskstore.ListQuery{{}, {ContextID: "shared-ctx"}, {ContextID: "shared-ctx", State: working}, {State: working}, {Since: at(0)}} {
			res := mustList(t, s, sc, q)
			for _, tk := range res.Tasks {
				if tk.GetId() == "a1" || tk.GetId() == "a2" {
					t.Errorf("%s: ListTasks(%+v) shows scope A's task %q", name, q, tk.GetId())
				}
			}
			want := 0
			if sc == scopeB {
				want = 1
			}
			if res.Total != want || len(res.Tasks) != want {
				t.Errorf("%s: ListTasks(%+v) Total %d, %d tasks; want %d", name, q, res.Total, len(res.Tasks), want)
			}
		}
	}

	wantEqual(t, "scope A's task after other scopes touched it", mustGet(t, s, scopeA, "a1"), a)
	res := mustList(t, s, scopeA, taskstore.ListQuery{})
	sameIDs(t, "scope A's list", ids(res.Tasks), []string{"a2", "a1"})
	if res.Total != 2 {
		t.Errorf("scope A's Total %d, want 2", res.Total)
	}
}

// testNoStatus: a task without a status is stored, read and listed, and
// is not terminal.
func testNoStatus(t *testing.T, s TaskStore) {
	tk := &a2a.Task{Id: "bare", ContextId: "c"}
	mustCreate(t, s, scopeA, tk)
	wantEqual(t, "task without status", mustGet(t, s, scopeA, "bare"), tk)
	if res := mustList(t, s, scopeA, taskstore.ListQuery{}); res.Total != 1 || len(res.Tasks) != 1 {
		t.Errorf("ListTasks: Total %d, %d tasks; want 1", res.Total, len(res.Tasks))
	}
	if n, err := s.DeleteFinished(t.Context(), at(1000)); err != nil || n != 0 {
		t.Errorf("DeleteFinished removed %d (error %v), want 0: the task is not terminal", n, err)
	}
}

// testListActive: ListActive returns the SUBMITTED and WORKING tasks of
// every scope, each once and with its scope.
func testListActive(t *testing.T, s TaskStore) {
	type placed struct {
		sc taskstore.Scope
		tk *a2a.Task
	}
	all := []placed{
		{scopeA, task("s1", "c", submitted, at(1))},
		{scopeA, task("w1", "c", working, at(2))},
		{scopeA, task("i1", "c", inputRequired, at(3))},
		{scopeA, task("u1", "c", authRequired, at(4))},
		{scopeA, task("d1", "c", completed, at(5))},
		{scopeB, task("w2", "c", working, at(6))},
		{scopeB, task("f2", "c", failed, at(7))},
		{scopeC, task("s3", "c", submitted, at(8))},
		{scopeC, task("x3", "c", canceled, at(9))},
		{scopeD, task("w4", "c", working, at(10))},
		{scopeE, task("r5", "c", rejected, at(11))},
		{scopeE, task("w5", "c", working, at(-11))},
	}
	want := map[string]placed{}
	for _, p := range all {
		mustCreate(t, s, p.sc, p.tk)
		if st := p.tk.Status.State; st == submitted || st == working {
			want[p.tk.Id] = p
		}
	}
	// A task that stops being active leaves the list.
	mustUpdate(t, s, scopeA, task("s1", "c", completed, at(12)))
	delete(want, "s1")

	active, err := s.ListActive(t.Context())
	if err != nil {
		t.Fatalf("ListActive: %v", err)
	}
	got := map[string]bool{}
	for _, st := range active {
		id := st.Task.GetId()
		if got[id] {
			t.Errorf("ListActive returned %q twice", id)
		}
		got[id] = true
		p, ok := want[id]
		if !ok {
			t.Errorf("ListActive returned %q in state %v", id, st.Task.GetStatus().GetState())
			continue
		}
		if st.Scope != p.sc {
			t.Errorf("ListActive: task %q in scope %+v, want %+v", id, st.Scope, p.sc)
		}
		wantEqual(t, "active task "+id, st.Task, p.tk)
	}
	for id := range want {
		if !got[id] {
			t.Errorf("ListActive is missing %q", id)
		}
	}
}

// finishedTask is a task of the DeleteFinished tests, placed in a scope,
// and whether DeleteFinished(ctx, finishedCut) must remove it.
type finishedTask struct {
	sc   taskstore.Scope
	tk   *a2a.Task
	gone bool
}

// finishedCut is the time the DeleteFinished tests remove tasks before.
var finishedCut = at(100)

// finishedTasks returns the tasks of the DeleteFinished tests: terminal
// ones before the cut, at it and after it, and old ones in every
// non-terminal state, spread over the scopes.
func finishedTasks() []finishedTask {
	return []finishedTask{
		{scopeA, task("c-old", "c", completed, at(99)), true},
		{scopeB, task("f-old", "c", failed, at(50)), true},
		{scopeC, task("x-old", "c", canceled, at(-500)), true},
		{scopeD, task("r-old", "c", rejected, at(0)), true},
		{scopeA, task("c-cut", "c", completed, at(100)), false},
		{scopeA, task("c-new", "c", completed, at(101)), false},
		{scopeA, task("s-old", "c", submitted, at(1)), false},
		{scopeA, task("w-old", "c", working, at(1)), false},
		{scopeE, task("i-old", "c", inputRequired, at(1)), false},
		{scopeE, task("a-old", "c", authRequired, at(1)), false},
	}
}

// testDeleteFinished: terminal tasks older than the cut go, whatever their
// scope; nothing else does, and a removed id can be used again (see
// testDeleteFinishedConfigs for their push configurations).
func testDeleteFinished(t *testing.T, s TaskStore) {
	ctx := t.Context()
	all := finishedTasks()
	for _, p := range all {
		mustCreate(t, s, p.sc, p.tk)
	}
	n, err := s.DeleteFinished(ctx, finishedCut)
	if err != nil {
		t.Fatalf("DeleteFinished: %v", err)
	}
	if n != 4 {
		t.Errorf("DeleteFinished removed %d, want 4", n)
	}
	for _, p := range all {
		_, err := s.GetTask(ctx, p.sc, p.tk.Id)
		switch {
		case p.gone && !errors.Is(err, taskstore.ErrNotFound):
			t.Errorf("task %q survived DeleteFinished (error %v)", p.tk.Id, err)
		case !p.gone && err != nil:
			t.Errorf("task %q was removed by DeleteFinished: %v", p.tk.Id, err)
		}
	}
	if res := mustList(t, s, scopeA, taskstore.ListQuery{}); res.Total != 4 {
		t.Errorf("scope A Total %d after DeleteFinished, want 4", res.Total)
	}
	// A removed id can be used again.
	mustCreate(t, s, scopeA, task("f-old", "c", working, at(200)))
	if n, err := s.DeleteFinished(ctx, finishedCut); err != nil || n != 0 {
		t.Errorf("second DeleteFinished removed %d (error %v), want 0", n, err)
	}
}
