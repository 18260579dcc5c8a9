package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
)

// eventChecks are the tests of the event log: Append, Events and
// PruneEvents. They are part of the tasks role.
var eventChecks = []check[TaskStore]{
	{"AppendStatus", testAppendStatus},
	{"AppendArtifacts", testAppendArtifacts},
	{"AppendMessage", testAppendMessage},
	{"AppendMessageWithEvent", testAppendMessageWithEvent},
	{"AppendCopies", testAppendCopies},
	{"Events", testEvents},
	{"PruneEvents", testPruneEvents},
	{"ConcurrentAppends", testConcurrentAppends},
	{"ConcurrentAppendsSameSeq", testConcurrentSameSeq},
	{"DeleteFinishedDropsLog", testDeleteDropsLog},
	{"EmptyAppend", testEmptyAppend},
	{"AppendToFinished", testAppendToFinished},
}

// statusAt returns event seq of a task: a status update to st at ts.
func statusAt(taskID string, seq uint64, st a2a.TaskState, ts time.Time) taskstore.Event {
	return taskstore.Event{Seq: seq, Response: &a2a.StreamResponse{Payload: &a2a.StreamResponse_StatusUpdate{
		StatusUpdate: &a2a.TaskStatusUpdateEvent{TaskId: taskID, ContextId: "c",
			Status: &a2a.TaskStatus{State: st, Timestamp: timestamppb.New(ts)}}}}}
}

// chunk returns an artifact update of a task carrying one text part.
func chunk(taskID, artifactID string, appendTo bool, body string) *a2a.StreamResponse {
	return &a2a.StreamResponse{Payload: &a2a.StreamResponse_ArtifactUpdate{ArtifactUpdate: &a2a.TaskArtifactUpdateEvent{
		TaskId: taskID, ContextId: "c", Append: appendTo,
		Artifact: &a2a.Artifact{ArtifactId: artifactID, Parts: []*a2a.Part{text(body)}}}}}
}

// logTask creates task id in scope A with its creation event (a snapshot,
// seq 1) and returns the task and that event.
func logTask(t *testing.T, s taskstore.Tasks, id string) (*a2a.Task, *a2a.StreamResponse) {
	t.Helper()
	tk := task(id, "c", submitted, at(1))
	ev := snapshotEvent(tk)
	if err := s.CreateTask(t.Context(), scopeA, tk, taskstore.Event{Seq: 1, Response: ev}); err != nil {
		t.Fatalf("CreateTask(%q): %v", id, err)
	}
	return tk, ev
}

// appendAll appends the events with sequence numbers from first on, and
// applies each to want as taskstore.Apply does, the reference.
func appendAll(t *testing.T, s taskstore.Tasks, id string, want *a2a.Task, first uint64, evs ...*a2a.StreamResponse) {
	t.Helper()
	for i, ev := range evs {
		seq := first + uint64(i)
		if err := s.Append(t.Context(), scopeA, id, taskstore.Event{Seq: seq, Response: ev}); err != nil {
			t.Fatalf("Append(%q, seq %d): %v", id, seq, err)
		}
		taskstore.Apply(want, proto.Clone(ev).(*a2a.StreamResponse))
	}
}

// mustEvents reads a task's events in scope A.
func mustEvents(t *testing.T, s taskstore.Tasks, id string, after uint64, limit int) []a2a.StreamEvent {
	t.Helper()
	evs, err := s.Events(t.Context(), scopeA, id, after, limit)
	if err != nil {
		t.Fatalf("Events(%q, after %d, limit %d): %v", id, after, limit, err)
	}
	return evs
}

// wantEvents checks evs are the events with sequence numbers first,
// first+1, … and these responses.
func wantEvents(t *testing.T, what string, evs []a2a.StreamEvent, first uint64, want ...*a2a.StreamResponse) {
	t.Helper()
	if len(evs) != len(want) {
		t.Fatalf("%s: %d events, want %d", what, len(evs), len(want))
	}
	for i, ev := range evs {
		if ev.Seq != first+uint64(i) {
			t.Errorf("%s: event %d has seq %d, want %d", what, i, ev.Seq, first+uint64(i))
		}
		wantEqual(t, fmt.Sprintf("%s: event %d", what, ev.Seq), ev.Response, want[i])
	}
}

// testAppendStatus: a status update replaces the status, adds its message
// to the history, and moves the task in ListTasks at once.
func testAppendStatus(t *testing.T, s TaskStore) {
	want, _ := logTask(t, s, "st")
	working := statusAt("st", 2, working, at(5)).Response
	done := statusAt("st", 3, completed, at(9)).Response
	done.GetStatusUpdate().Status.Message = &a2a.Message{MessageId: "m-done", Role: a2a.Role_ROLE_AGENT, Parts: []*a2a.Part{text("done")}}
	appendAll(t, s, "st", want, 2, working, done)
	got := mustGet(t, s, scopeA, "st")
	wantEqual(t, "task after status updates", got, want)
	if len(got.History) != 1 || got.History[0].MessageId != "m-done" {
		t.Errorf("history after a status update with a message: %v", got.History)
	}
	res := mustList(t, s, scopeA, taskstore.ListQuery{State: completed, Since: at(9)})
	if res.Total != 1 || len(res.Tasks) != 1 {
		t.Fatalf("ListTasks(completed since the update): Total %d, %d tasks; want 1", res.Total, len(res.Tasks))
	}
	wantEqual(t, "listed task after status updates", res.Tasks[0], want)
	if n := mustList(t, s, scopeA, taskstore.ListQuery{State: submitted}).Total; n != 0 {
		t.Errorf("submitted Total %d after the updates, want 0", n)
	}
	if seq, err := s.LastSeq(t.Context(), scopeA, "st"); err != nil || seq != 3 {
		t.Errorf("LastSeq = %d, %v; want 3", seq, err)
	}
}

// testAppendArtifacts: artifact updates append chunks, replace an
// artifact in its place, add new ones at the end, and start an artifact
// from an append to an unknown id (decision B11).
func testAppendArtifacts(t *testing.T, s TaskStore) {
	want, _ := logTask(t, s, "ar")
	named := chunk("ar", "a", true, " world")
	named.GetArtifactUpdate().Artifact.Name = "greeting"
	named.GetArtifactUpdate().LastChunk = true
	evs := []*a2a.StreamResponse{
		chunk("ar", "a", false, "hello"),
		named,
		chunk("ar", "b", false, "second"),
		chunk("ar", "a", true, "!"),
		chunk("ar", "b", false, "replaced"),
		chunk("ar", "c", true, "started by an append"),
		chunk("ar", "b", true, " and grown"),
	}
	appendAll(t, s, "ar", want, 2, evs...)
	got := mustGet(t, s, scopeA, "ar")
	wantEqual(t, "task after artifact updates", got, want)
	var order []string
	for _, a := range got.GetArtifacts() {
		order = append(order, a.GetArtifactId())
	}
	sameIDs(t, "artifact order", order, []string{"a", "b", "c"})
	if a := got.GetArtifacts()[0]; len(a.Parts) != 3 || a.Name != "greeting" {
		t.Errorf("artifact a: %d parts, name %q; want 3 parts named greeting", len(a.Parts), a.Name)
	}
	if b := got.GetArtifacts()[1]; len(b.Parts) != 2 || b.Parts[0].GetText() != "replaced" {
		t.Errorf("artifact b after replace and append: %v", b.Parts)
	}
	// Many chunks of one artifact keep their order.
	var many []*a2a.StreamResponse
	for i := range 300 {
		many = append(many, chunk("ar", "a", true, fmt.Sprint(i)))
	}
	appendAll(t, s, "ar", want, 2+uint64(len(evs)), many...)
	wantEqual(t, "task after 300 more chunks", mustGet(t, s, scopeA, "ar"), want)
}

// testAppendMessage: a message without an event joins the history, after
// what is there, and changes neither the sequence nor the log.
func testAppendMessage(t *testing.T, s TaskStore) {
	ctx := t.Context()
	want, created := logTask(t, s, "msg")
	upd := statusAt("msg", 2, working, at(2)).Response
	upd.GetStatusUpdate().Status.Message = &a2a.Message{MessageId: "m-agent", Role: a2a.Role_ROLE_AGENT, Parts: []*a2a.Part{text("?")}}
	appendAll(t, s, "msg", want, 2, upd)
	follow := message("m-user", "msg", "c", "an answer")
	if err := s.Append(ctx, scopeA, "msg", taskstore.Event{Message: follow}); err != nil {
		t.Fatalf("Append(message): %v", err)
	}
	want.History = append(want.History, follow)
	wantEqual(t, "task after a follow-up message", mustGet(t, s, scopeA, "msg"), want)
	if seq, err := s.LastSeq(ctx, scopeA, "msg"); err != nil || seq != 2 {
		t.Errorf("LastSeq after a message = %d, %v; want 2", seq, err)
	}
	wantEvents(t, "log after a message", mustEvents(t, s, "msg", 0, 0), 1, created, upd)
	// The next event follows on.
	appendAll(t, s, "msg", want, 3, statusAt("msg", 3, completed, at(3)).Response)
	wantEqual(t, "task after the next event", mustGet(t, s, scopeA, "msg"), want)
}

// testAppendMessageWithEvent: a message and an event in one Append (the
// server's conditional follow-up: the client's message and the WORKING
// status its acceptance is) are one write fenced by the event's sequence
// number: at a number already taken neither is written (ErrSeq); at the
// next one the message joins the history before the event's own status
// message, and the event is logged.
func testAppendMessageWithEvent(t *testing.T, s TaskStore) {
	ctx := t.Context()
	want, created := logTask(t, s, "mwe")
	follow := message("m-follow", "mwe", "c", "an answer")
	stale := statusAt("mwe", 1, working, at(2))
	stale.Message = follow
	if err := s.Append(ctx, scopeA, "mwe", stale); !errors.Is(err, taskstore.ErrSeq) {
		t.Fatalf("Append(message with event at a taken number) = %v, want ErrSeq", err)
	}
	wantEqual(t, "task after a refused message with an event", mustGet(t, s, scopeA, "mwe"), want)
	ev := statusAt("mwe", 2, working, at(2))
	ev.Response.GetStatusUpdate().Status.Message = &a2a.Message{MessageId: "m-agent", Role: a2a.Role_ROLE_AGENT, Parts: []*a2a.Part{text("on it")}}
	ev.Message = follow
	if err := s.Append(ctx, scopeA, "mwe", ev); err != nil {
		t.Fatalf("Append(message with event): %v", err)
	}
	want.History = append(want.History, follow)
	taskstore.Apply(want, ev.Response)
	wantEqual(t, "task after a message with an event", mustGet(t, s, scopeA, "mwe"), want)
	if seq, err := s.LastSeq(ctx, scopeA, "mwe"); err != nil || seq != 2 {
		t.Errorf("LastSeq after a message with an event = %d, %v; want 2", seq, err)
	}
	wantEvents(t, "log after a message with an event", mustEvents(t, s, "mwe", 0, 0), 1, created, ev.Response)
}

// testAppendCopies: the store copies appended messages; events are
// immutable and may be shared (package taskstore), but applying a later
// chunk must not change a logged event; a task GetTask returned may be
// shared too, and no later append changes it.
func testAppendCopies(t *testing.T, s TaskStore) {
	ctx := t.Context()
	want, _ := logTask(t, s, "cp")
	ev := chunk("cp", "a", false, "kept")
	m := message("m1", "cp", "c", "kept too")
	wantEv := proto.Clone(ev).(*a2a.StreamResponse)
	appendAll(t, s, "cp", want, 2, ev)
	if err := s.Append(ctx, scopeA, "cp", taskstore.Event{Message: m}); err != nil {
		t.Fatal(err)
	}
	want.History = append(want.History, proto.Clone(m).(*a2a.Message))
	m.Parts[0] = text("changed")
	// A later chunk must not change the logged first one.
	appendAll(t, s, "cp", want, 3, chunk("cp", "a", true, " more"))
	wantEqual(t, "task after the caller changed an appended message", mustGet(t, s, scopeA, "cp"), want)
	wantEvents(t, "logged first chunk after a later one", mustEvents(t, s, "cp", 1, 1), 2, wantEv)
	mustGet(t, s, scopeA, "cp")
	got := mustGet(t, s, scopeA, "cp") // read twice: a cache may keep it now
	held := proto.Clone(got).(*a2a.Task)
	appendAll(t, s, "cp", want, 4, chunk("cp", "a", true, " and more"))
	if err := s.Append(ctx, scopeA, "cp", taskstore.Event{Message: message("m2", "cp", "c", "later")}); err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "a task GetTask returned, after appends to the task", got, held)
}

// testEvents: Events returns the log after a sequence number, in order,
// bounded by limit, only in the task's scope.
func testEvents(t *testing.T, s TaskStore) {
	ctx := t.Context()
	want, created := logTask(t, s, "ev")
	evs := []*a2a.StreamResponse{
		statusAt("ev", 2, working, at(2)).Response,
		chunk("ev", "a", false, "one"),
		chunk("ev", "a", true, "two"),
		statusAt("ev", 5, completed, at(5)).Response,
	}
	appendAll(t, s, "ev", want, 2, evs...)
	all := append([]*a2a.StreamResponse{created}, evs...)
	wantEvents(t, "every event", mustEvents(t, s, "ev", 0, 0), 1, all...)
	wantEvents(t, "every event, limit 100", mustEvents(t, s, "ev", 0, 100), 1, all...)
	wantEvents(t, "after 2", mustEvents(t, s, "ev", 2, 0), 3, all[2:]...)
	wantEvents(t, "after 1, limit 2", mustEvents(t, s, "ev", 1, 2), 2, all[1:3]...)
	wantEvents(t, "after 4, limit 1", mustEvents(t, s, "ev", 4, 1), 5, all[4])
	wantEvents(t, "after the last", mustEvents(t, s, "ev", 5, 0), 6)
	wantEvents(t, "after a future one", mustEvents(t, s, "ev", 50, 0), 51)

	for _, sc := range others {
		_, err := s.Events(ctx, sc, "ev", 0, 0)
		wantErr(t, fmt.Sprintf("Events from scope %+v", sc), err, taskstore.ErrNotFound)
	}
	_, err := s.Events(ctx, scopeA, "missing", 0, 0)
	wantErr(t, "Events of a missing task", err, taskstore.ErrNotFound)

	// A task created without an event has an empty log.
	mustCreate(t, s, scopeA, task("quiet", "c", working, at(1)))
	if evs := mustEvents(t, s, "quiet", 0, 0); len(evs) != 0 {
		t.Errorf("Events of a task without events: %d, want none", len(evs))
	}
}

// testPruneEvents: PruneEvents drops what was logged before the cut,
// except each task's last event; the tasks do not change; asking for
// pruned events is ErrPruned.
func testPruneEvents(t *testing.T, s TaskStore) {
	ctx := t.Context()
	want, _ := logTask(t, s, "p1")
	evs := []*a2a.StreamResponse{chunk("p1", "a", false, "x"), chunk("p1", "a", true, "y"), statusAt("p1", 4, completed, at(4)).Response}
	appendAll(t, s, "p1", want, 2, evs...)
	logTask(t, s, "p2") // one event only: kept
	mustCreate(t, s, scopeB, task("p3", "c", working, at(1)))

	if n, err := s.PruneEvents(ctx, time.Now().Add(-time.Hour)); err != nil || n != 0 {
		t.Fatalf("PruneEvents(an hour ago) = %d, %v; want 0", n, err)
	}
	wantEvents(t, "log before pruning", mustEvents(t, s, "p1", 2, 0), 3, evs[1:]...)

	n, err := s.PruneEvents(ctx, time.Now().Add(time.Hour))
	if err != nil || n != 3 {
		t.Fatalf("PruneEvents(in an hour) = %d, %v; want 3 (all but each task's last)", n, err)
	}
	for _, after := range []uint64{0, 1, 2} {
		_, err := s.Events(ctx, scopeA, "p1", after, 0)
		wantErr(t, fmt.Sprintf("Events after %d, pruned", after), err, taskstore.ErrPruned)
	}
	wantEvents(t, "the last event, kept", mustEvents(t, s, "p1", 3, 0), 4, evs[2])
	wantEvents(t, "after the last, pruned", mustEvents(t, s, "p1", 4, 0), 5)
	if got := mustEvents(t, s, "p2", 0, 0); len(got) != 1 {
		t.Errorf("a task's only event: %d events after pruning, want 1", len(got))
	}
	_, err = s.Events(ctx, scopeB, "p1", 0, 0)
	wantErr(t, "Events of a pruned task from another scope", err, taskstore.ErrNotFound)
	wantEqual(t, "task after pruning", mustGet(t, s, scopeA, "p1"), want)
	if seq, err := s.LastSeq(ctx, scopeA, "p1"); err != nil || seq != 4 {
		t.Errorf("LastSeq after pruning = %d, %v; want 4", seq, err)
	}
	// The log goes on.
	more := chunk("p1", "b", false, "z")
	appendAll(t, s, "p1", want, 5, more)
	wantEvents(t, "after pruning and one more", mustEvents(t, s, "p1", 3, 0), 4, evs[2], more)
	if n, err := s.PruneEvents(ctx, time.Now().Add(time.Hour)); err != nil || n != 1 {
		t.Errorf("second PruneEvents = %d, %v; want 1", n, err)
	}
	wantEqual(t, "task after pruning again", mustGet(t, s, scopeA, "p1"), want)
}

// testConcurrentAppends: writers appending to their own tasks at the same
// time lose nothing and keep each task's order.
func testConcurrentAppends(t *testing.T, s TaskStore) {
	const workers, each = 8, 40
	wants := make([]*a2a.Task, workers)
	for w := range workers {
		wants[w], _ = logTask(t, s, fmt.Sprintf("ca%d", w))
	}
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := range workers {
		id := fmt.Sprintf("ca%d", w)
		wg.Go(func() {
			for i := range each {
				ev := chunk(id, "a", i > 0, fmt.Sprint(i))
				if err := s.Append(t.Context(), scopeA, id, taskstore.Event{Seq: uint64(i + 2), Response: ev}); err != nil {
					errs <- fmt.Errorf("Append(%s, %d): %w", id, i+2, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for w, want := range wants {
		id := fmt.Sprintf("ca%d", w)
		for i := range each {
			taskstore.Apply(want, chunk(id, "a", i > 0, fmt.Sprint(i)))
		}
		wantEqual(t, "task "+id, mustGet(t, s, scopeA, id), want)
		if evs := mustEvents(t, s, id, 0, 0); len(evs) != each+1 || evs[each].Seq != each+1 {
			t.Errorf("task %s: %d events, want %d in order", id, len(evs), each+1)
		}
	}
}

// testConcurrentSameSeq: of concurrent appends with the same sequence
// number to one task, exactly one is written; the others get ErrSeq.
func testConcurrentSameSeq(t *testing.T, s TaskStore) {
	logTask(t, s, "race")
	const n = 12
	var wg sync.WaitGroup
	results := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			results <- s.Append(t.Context(), scopeA, "race", taskstore.Event{Seq: 2, Response: chunk("race", fmt.Sprint(i), false, "x")})
		})
	}
	wg.Wait()
	close(results)
	ok, refused := 0, 0
	for err := range results {
		switch {
		case err == nil:
			ok++
		case errors.Is(err, taskstore.ErrSeq):
			refused++
		default:
			t.Errorf("concurrent Append: %v", err)
		}
	}
	if ok != 1 || refused != n-1 {
		t.Errorf("concurrent appends of seq 2: %d written, %d ErrSeq; want 1 and %d", ok, refused, n-1)
	}
	if got := mustGet(t, s, scopeA, "race"); len(got.Artifacts) != 1 {
		t.Errorf("task after the race has %d artifacts, want 1", len(got.Artifacts))
	}
	if evs := mustEvents(t, s, "race", 0, 0); len(evs) != 2 {
		t.Errorf("log after the race: %d events, want 2", len(evs))
	}
}

// testDeleteDropsLog: DeleteFinished removes a task's history, artifacts
// and events with it; a task created later with the same id starts with
// none of them.
func testDeleteDropsLog(t *testing.T, s TaskStore) {
	ctx := t.Context()
	_, _ = logTask(t, s, "gone")
	done := statusAt("gone", 4, completed, at(2)).Response
	done.GetStatusUpdate().Status.Message = &a2a.Message{MessageId: "m-done", Role: a2a.Role_ROLE_AGENT, Parts: []*a2a.Part{text("bye")}}
	appendAll(t, s, "gone", task("gone", "c", submitted, at(1)), 2, chunk("gone", "a", false, "x"), chunk("gone", "a", true, "y"), done)
	if err := s.Append(ctx, scopeA, "gone", taskstore.Event{Message: message("m-u", "gone", "c", "hi")}); err != nil {
		t.Fatal(err)
	}
	if n, err := s.DeleteFinished(ctx, at(3)); err != nil || n != 1 {
		t.Fatalf("DeleteFinished = %d, %v; want 1", n, err)
	}
	_, err := s.Events(ctx, scopeA, "gone", 0, 0)
	wantErr(t, "Events of a removed task", err, taskstore.ErrNotFound)
	again := task("gone", "c2", working, at(10))
	created := snapshotEvent(again)
	if err := s.CreateTask(ctx, scopeB, again, taskstore.Event{Seq: 1, Response: created}); err != nil {
		t.Fatalf("CreateTask of a removed id: %v", err)
	}
	got := mustGet(t, s, scopeB, "gone")
	wantEqual(t, "task created with a removed id", got, again)
	evs, err := s.Events(ctx, scopeB, "gone", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	wantEvents(t, "log of a task created with a removed id", evs, 1, created)
}

// testEmptyAppend: an Append with neither event nor message writes nothing
// and succeeds in the task's scope, and is ErrNotFound elsewhere; an
// artifact update without an artifact is refused, writing nothing.
func testEmptyAppend(t *testing.T, s TaskStore) {
	want, _ := logTask(t, s, "empty")
	bad := &a2a.StreamResponse{Payload: &a2a.StreamResponse_ArtifactUpdate{ArtifactUpdate: &a2a.TaskArtifactUpdateEvent{TaskId: "empty"}}}
	if err := s.Append(t.Context(), scopeA, "empty", taskstore.Event{Seq: 2, Response: bad}); err == nil {
		t.Error("Append of an artifact update without an artifact: no error")
	}
	if err := s.Append(t.Context(), scopeA, "empty", taskstore.Event{}); err != nil {
		t.Errorf("empty Append: %v", err)
	}
	wantEqual(t, "task after an empty Append", mustGet(t, s, scopeA, "empty"), want)
	if seq, err := s.LastSeq(t.Context(), scopeA, "empty"); err != nil || seq != 1 {
		t.Errorf("LastSeq after an empty Append = %d, %v; want 1", seq, err)
	}
	err := s.Append(t.Context(), scopeB, "empty", taskstore.Event{})
	wantErr(t, "empty Append from another scope", err, taskstore.ErrNotFound)
}

// testAppendToFinished: a task made finished, with history and artifacts
// (which a store may keep with the task rather than apart), takes the
// events that come after all as any task does: a message added to its
// history, an artifact replaced, one appended to, a new one, and then a
// Task event that replaces the whole; GetTask and ListTasks show each
// step as taskstore.Apply leaves it.
func testAppendToFinished(t *testing.T, s TaskStore) {
	want := task("fin", "c", completed, at(3))
	want.History = []*a2a.Message{message("m1", "fin", "c", "first"), message("m2", "fin", "c", "second")}
	want.Artifacts = []*a2a.Artifact{
		{ArtifactId: "a", Parts: []*a2a.Part{text("a0")}},
		{ArtifactId: "b", Name: "bee", Parts: []*a2a.Part{text("b0")}},
	}
	if err := s.CreateTask(t.Context(), scopeA, want, taskstore.Event{Seq: 1, Response: snapshotEvent(want)}); err != nil {
		t.Fatalf("CreateTask: %v", err)
	}
	check := func(what string) {
		t.Helper()
		wantEqual(t, "GetTask "+what, mustGet(t, s, scopeA, "fin"), want)
		page := mustList(t, s, scopeA, taskstore.ListQuery{ContextID: "c"}).Tasks
		if len(page) != 1 {
			t.Fatalf("ListTasks %s: %d tasks, want 1", what, len(page))
		}
		page[0].Generation = 0
		wantEqual(t, "ListTasks "+what, page[0], want)
	}
	check("as made")
	working := statusAt("fin", 2, working, at(4)).Response
	working.GetStatusUpdate().Status.Message = &a2a.Message{MessageId: "m3", Role: a2a.Role_ROLE_AGENT, Parts: []*a2a.Part{text("third")}}
	appendAll(t, s, "fin", want, 2, working,
		chunk("fin", "a", false, "a1"), chunk("fin", "b", true, "b1"), chunk("fin", "c", false, "c0"), chunk("fin", "a", true, "a2"))
	check("after events")
	replaced := task("fin", "c", completed, at(9))
	replaced.History = []*a2a.Message{message("m9", "fin", "c", "only")}
	replaced.Artifacts = []*a2a.Artifact{{ArtifactId: "z", Parts: []*a2a.Part{text("z0")}}}
	appendAll(t, s, "fin", want, 7, snapshotEvent(replaced), chunk("fin", "z", true, "z1"))
	check("after a Task event")
}
