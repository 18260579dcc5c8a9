package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
)

// batchChecks are the tests of AppendBatch, for a store that implements
// taskstore.BatchAppender; they pass trivially for one that does not.
var batchChecks = []check[TaskStore]{
	{"AppendBatch", testAppendBatch},
	{"AppendBatchAllOrNone", testAppendBatchAllOrNone},
	{"AppendBatchReplaces", testAppendBatchReplaces},
	{"AppendBatchJoins", testAppendBatchJoins},
	{"CreateTaskBatch", testCreateTaskBatch},
	{"CreateTaskBatchAllOrNone", testCreateTaskBatchAllOrNone},
	{"ConcurrentAppendBatches", testConcurrentAppendBatches},
	{"EventsOfBatches", testEventsOfBatches},
	{"TimelineOfPrunedLog", testTimelineOfPrunedLog},
}

func init() {
	eventChecks = append(eventChecks, batchChecks...)
	outboxChecks = append(outboxChecks, check[OutboxStore]{"PushOutboxBatch", testPushOutboxBatch},
		check[OutboxStore]{"PushOutboxCreateBatch", testPushOutboxCreateBatch})
}

// batcher returns s as a BatchAppender, or skips the test.
func batcher(t *testing.T, s any) taskstore.BatchAppender {
	b, ok := s.(taskstore.BatchAppender)
	if !ok {
		t.Skip("the store does not implement taskstore.BatchAppender")
	}
	return b
}

// numbered returns evs as Events numbered from first on.
func numbered(first uint64, evs ...*a2a.StreamResponse) []taskstore.Event {
	out := make([]taskstore.Event, len(evs))
	for i, ev := range evs {
		out[i] = taskstore.Event{Seq: first + uint64(i), Response: ev}
	}
	return out
}

// testAppendBatch: a batch records its events as Appends one after the
// other would, in the log and in the task, and later Appends follow it.
func testAppendBatch(t *testing.T, s TaskStore) {
	b := batcher(t, s)
	want, created := logTask(t, s, "batch")
	done := statusAt("batch", 6, completed, at(9)).Response
	done.GetStatusUpdate().Status.Message = &a2a.Message{MessageId: "m-done", Role: a2a.Role_ROLE_AGENT, Parts: []*a2a.Part{text("done")}}
	evs := []*a2a.StreamResponse{
		statusAt("batch", 2, working, at(5)).Response,
		chunk("batch", "a", false, "hello"),
		chunk("batch", "a", true, " world"),
		chunk("batch", "b", true, "started by an append"),
		done,
	}
	if err := b.AppendBatch(t.Context(), scopeA, "batch", numbered(2, evs...)); err != nil {
		t.Fatalf("AppendBatch: %v", err)
	}
	for _, ev := range evs {
		taskstore.Apply(want, ev)
	}
	wantEqual(t, "task after a batch", mustGet(t, s, scopeA, "batch"), want)
	wantEvents(t, "log after a batch", mustEvents(t, s, "batch", 0, 0), 1, append([]*a2a.StreamResponse{created}, evs...)...)
	if n := mustList(t, s, scopeA, taskstore.ListQuery{State: completed}).Total; n != 1 {
		t.Errorf("completed Total %d after the batch, want 1", n)
	}
	more := chunk("batch", "a", true, "!")
	appendAll(t, s, "batch", want, 7, more)
	if err := b.AppendBatch(t.Context(), scopeA, "batch", numbered(8, chunk("batch", "a", true, "?"))); err != nil {
		t.Fatalf("AppendBatch of one event after an Append: %v", err)
	}
	if seq, err := s.LastSeq(t.Context(), scopeA, "batch"); err != nil || seq != 8 {
		t.Errorf("LastSeq = %d, %v; want 8", seq, err)
	}
}

// testAppendBatchReplaces: artifacts replaced in a batch end as the
// Appends one after the other would leave them, whether the artifact was
// there before the batch or is appended to and replaced again inside it,
// between status updates that add to the history.
func testAppendBatchReplaces(t *testing.T, s TaskStore) {
	b := batcher(t, s)
	want, _ := logTask(t, s, "repl")
	appendAll(t, s, "repl", want, 2, chunk("repl", "a", false, "old"), chunk("repl", "a", true, " and more"))
	withMessage := func(st a2a.TaskState, id string) *a2a.StreamResponse {
		ev := statusEvent("repl", st)
		ev.GetStatusUpdate().Status.Message = &a2a.Message{MessageId: id, Role: a2a.Role_ROLE_AGENT, Parts: []*a2a.Part{text(id)}}
		return ev
	}
	for i, batch := range [][]*a2a.StreamResponse{
		// A replacement of an artifact stored before the batch, then
		// chunks appended to it.
		{withMessage(working, "w1"), chunk("repl", "a", false, "new"), chunk("repl", "a", true, "+"), chunk("repl", "b", false, "b1")},
		// Replacements after chunks of the same artifact in the batch.
		{chunk("repl", "b", true, "+b"), chunk("repl", "b", false, "b2"), withMessage(working, "w2"),
			chunk("repl", "a", false, "newer"), chunk("repl", "a", false, "newest"), chunk("repl", "b", true, "!")},
	} {
		first := uint64(len(mustEvents(t, s, "repl", 0, 0)) + 1)
		if err := b.AppendBatch(t.Context(), scopeA, "repl", numbered(first, batch...)); err != nil {
			t.Fatalf("AppendBatch %d: %v", i+1, err)
		}
		for _, ev := range batch {
			taskstore.Apply(want, proto.Clone(ev).(*a2a.StreamResponse))
		}
		wantEqual(t, fmt.Sprintf("task after batch %d", i+1), mustGet(t, s, scopeA, "repl"), want)
	}
}

// testAppendBatchJoins: a stream's run of chunks (which the SQL stores
// write as one chunk per artifact) ends as the Appends one after the other
// would leave it, whatever names, descriptions and metadata its chunks
// carry and however the chunks of new artifacts interleave, over stored
// artifacts and in later runs; and the events are not changed.
func testAppendBatchJoins(t *testing.T, s TaskStore) {
	b := batcher(t, s)
	want, _ := logTask(t, s, "join")
	appendAll(t, s, "join", want, 2, chunk("join", "old", false, "stored"))
	named := func(id string, appendTo bool, body, name, desc string, meta bool) *a2a.StreamResponse {
		ev := chunk("join", id, appendTo, body)
		a := ev.GetArtifactUpdate().Artifact
		a.Name, a.Description = name, desc
		if meta {
			a.Metadata = &structpb.Struct{Fields: map[string]*structpb.Value{"k": structpb.NewStringValue(body)}}
		}
		return ev
	}
	for i, batch := range [][]*a2a.StreamResponse{
		{named("x", false, "x1", "ex", "", true), named("old", true, "+1", "", "d", true), named("y", true, "y1", "", "", false),
			named("x", true, "x2", "", "second", true), statusEvent("join", working), named("x", true, "x3", "ex3", "", false),
			named("old", true, "+2", "o", "", false), named("y", true, "y2", "why", "", true)},
		{named("y", true, "y3", "", "", false), named("x", true, "x4", "", "", false), named("z", true, "z1", "zed", "", true),
			named("y", true, "y4", "", "d4", false), named("x", false, "x5", "", "", false), named("x", true, "x6", "", "", false)},
	} {
		first := uint64(len(mustEvents(t, s, "join", 0, 0)) + 1)
		sent := make([]*a2a.StreamResponse, len(batch))
		for j, ev := range batch {
			sent[j] = proto.Clone(ev).(*a2a.StreamResponse)
		}
		if err := b.AppendBatch(t.Context(), scopeA, "join", numbered(first, batch...)); err != nil {
			t.Fatalf("AppendBatch %d: %v", i+1, err)
		}
		for j, ev := range batch {
			if !proto.Equal(ev, sent[j]) {
				t.Fatalf("AppendBatch %d changed its event %d: %v, was %v", i+1, j, ev, sent[j])
			}
			taskstore.Apply(want, sent[j])
		}
		wantEqual(t, fmt.Sprintf("task after run %d", i+1), mustGet(t, s, scopeA, "join"), want)
	}
	appendAll(t, s, "join", want, uint64(len(mustEvents(t, s, "join", 0, 0))+1), named("z", true, "z2", "", "", false))
	wantEqual(t, "task after an Append", mustGet(t, s, scopeA, "join"), want)
}

// testCreateTaskBatch: a task created with the events after its first
// is stored as CreateTask and the Appends one after the other would leave
// it, in the task, its log, its last number and the ListTasks counts; the
// caller's task is not changed.
func testCreateTaskBatch(t *testing.T, s TaskStore) {
	b := batcher(t, s)
	want := task("cb", "c", submitted, at(1))
	taskstore.Apply(want, chunk("cb", "pre", false, "made before"))
	created := snapshotEvent(want)
	done := statusAt("cb", 6, completed, at(9)).Response
	done.GetStatusUpdate().Status.Message = &a2a.Message{MessageId: "m-done", Role: a2a.Role_ROLE_AGENT, Parts: []*a2a.Part{text("done")}}
	evs := []*a2a.StreamResponse{created, statusAt("cb", 2, working, at(5)).Response,
		chunk("cb", "a", false, "hello"), chunk("cb", "a", true, " world"), chunk("cb", "pre", true, " and after"), done}
	before := proto.Clone(want).(*a2a.Task)
	if err := b.CreateTaskBatch(t.Context(), scopeA, want, numbered(1, evs...)); err != nil {
		t.Fatalf("CreateTaskBatch: %v", err)
	}
	wantEqual(t, "the caller's task after CreateTaskBatch", want, before)
	for _, ev := range evs[1:] {
		taskstore.Apply(want, proto.Clone(ev).(*a2a.StreamResponse))
	}
	wantEqual(t, "task after CreateTaskBatch", mustGet(t, s, scopeA, "cb"), want)
	wantEvents(t, "log after CreateTaskBatch", mustEvents(t, s, "cb", 0, 0), 1, evs...)
	for _, c := range []struct {
		state a2a.TaskState
		want  int
	}{{completed, 1}, {submitted, 0}, {working, 0}} {
		if n := mustList(t, s, scopeA, taskstore.ListQuery{State: c.state}).Total; n != c.want {
			t.Errorf("%v Total %d after CreateTaskBatch, want %d", c.state, n, c.want)
		}
	}
	appendAll(t, s, "cb", want, 7, chunk("cb", "a", true, "!"))
	wantEqual(t, "task after an Append that follows CreateTaskBatch", mustGet(t, s, scopeA, "cb"), want)
}

// testCreateTaskBatchAllOrNone: a CreateTaskBatch that cannot be written
// whole leaves no task behind.
func testCreateTaskBatchAllOrNone(t *testing.T, s TaskStore) {
	b := batcher(t, s)
	tk := task("cn", "c", submitted, at(1))
	noArtifact := &a2a.StreamResponse{Payload: &a2a.StreamResponse_ArtifactUpdate{ArtifactUpdate: &a2a.TaskArtifactUpdateEvent{TaskId: "cn"}}}
	gap := numbered(1, snapshotEvent(tk), chunk("cn", "a", false, "x"))
	gap[1].Seq = 3
	for what, evs := range map[string][]taskstore.Event{
		"an artifact update without an artifact": numbered(1, snapshotEvent(tk), chunk("cn", "a", false, "x"), noArtifact),
		"a gap after the first event":            gap,
	} {
		if err := b.CreateTaskBatch(t.Context(), scopeA, tk, evs); err == nil {
			t.Errorf("CreateTaskBatch with %s: no error", what)
		}
		if _, err := s.GetTask(t.Context(), scopeA, "cn"); !errors.Is(err, taskstore.ErrNotFound) {
			t.Errorf("GetTask after a refused CreateTaskBatch with %s: %v, want ErrNotFound", what, err)
		}
	}
}

// testAppendBatchAllOrNone: a batch that cannot be written whole writes
// nothing: a first number that does not follow the task's last (ErrSeq),
// a gap inside the batch, an event that no task could hold, another
// scope (ErrNotFound).
func testAppendBatchAllOrNone(t *testing.T, s TaskStore) {
	b := batcher(t, s)
	want, created := logTask(t, s, "whole")
	ok := chunk("whole", "a", false, "kept out")
	noArtifact := &a2a.StreamResponse{Payload: &a2a.StreamResponse_ArtifactUpdate{ArtifactUpdate: &a2a.TaskArtifactUpdateEvent{TaskId: "whole"}}}
	gap := numbered(2, ok, ok)
	gap[1].Seq = 4
	for _, c := range []struct {
		what string
		sc   taskstore.Scope
		evs  []taskstore.Event
		want error
	}{
		{"a first number after a gap", scopeA, numbered(3, ok, ok), taskstore.ErrSeq},
		{"a first number already taken", scopeA, numbered(1, ok, ok), taskstore.ErrSeq},
		{"a gap inside the batch", scopeA, gap, nil},
		{"an artifact update without an artifact", scopeA, numbered(2, ok, noArtifact), nil},
		{"another scope", scopeB, numbered(2, ok), taskstore.ErrNotFound},
	} {
		err := b.AppendBatch(t.Context(), c.sc, "whole", c.evs)
		if err == nil {
			t.Errorf("AppendBatch with %s: no error", c.what)
		} else if c.want != nil {
			wantErr(t, "AppendBatch with "+c.what, err, c.want)
		}
		wantEqual(t, "task after a refused batch with "+c.what, mustGet(t, s, scopeA, "whole"), want)
		wantEvents(t, "log after a refused batch with "+c.what, mustEvents(t, s, "whole", 0, 0), 1, created)
	}
}

// testConcurrentAppendBatches: batches to several tasks at once each land
// whole and in order.
func testConcurrentAppendBatches(t *testing.T, s TaskStore) {
	b := batcher(t, s)
	const tasks, batches, each = 6, 10, 7
	var wg sync.WaitGroup
	errs := make(chan error, tasks)
	for w := range tasks {
		id := fmt.Sprintf("cb%d", w)
		logTask(t, s, id)
		wg.Go(func() {
			for i := range batches {
				evs := make([]*a2a.StreamResponse, each)
				for j := range evs {
					evs[j] = chunk(id, "a", i+j > 0, fmt.Sprint(i*each+j))
				}
				if err := b.AppendBatch(t.Context(), scopeA, id, numbered(2+uint64(i*each), evs...)); err != nil {
					errs <- fmt.Errorf("AppendBatch(%s, batch %d): %w", id, i, err)
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
	for w := range tasks {
		id := fmt.Sprintf("cb%d", w)
		evs := mustEvents(t, s, id, 1, 0)
		if len(evs) != batches*each {
			t.Fatalf("task %s: %d events, want %d", id, len(evs), batches*each)
		}
		for i, ev := range evs {
			if got := ev.Response.GetArtifactUpdate().GetArtifact().GetParts()[0].GetText(); got != fmt.Sprint(i) || ev.Seq != uint64(i+2) {
				t.Fatalf("task %s: event %d is %q with seq %d, want %q with seq %d", id, i, got, ev.Seq, fmt.Sprint(i), i+2)
			}
		}
		if got := len(mustGet(t, s, scopeA, id).GetArtifacts()[0].GetParts()); got != batches*each {
			t.Errorf("task %s: artifact has %d parts, want %d", id, got, batches*each)
		}
	}
}

// testPushOutboxCreateBatch: a CreateTaskBatch with an inline push
// configuration queues each of its events with Push for it, in order.
func testPushOutboxCreateBatch(t *testing.T, s OutboxStore) {
	b := batcher(t, s)
	tk := task("pc", "c", submitted, at(1))
	cfg := hook("pc", "h")
	evs := []*a2a.StreamResponse{snapshotEvent(tk), statusEvent("pc", working), chunk("pc", "a", false, "x"), statusEvent("pc", completed)}
	batch := numbered(1, evs...)
	batch[0].PushConfig = cfg
	for i := range batch {
		batch[i].Push = true
	}
	if err := b.CreateTaskBatch(t.Context(), scopeA, tk, batch); err != nil {
		t.Fatalf("CreateTaskBatch: %v", err)
	}
	wantQueue(t, s, target(scopeA, "pc", "h"), cfg, []uint64{1, 2, 3, 4}, evs...)
}

// testPushOutboxBatch: a batch with Push queues each of its events, in
// order, for every active configuration of the task, as its Appends would.
func testPushOutboxBatch(t *testing.T, s OutboxStore) {
	b := batcher(t, s)
	tk := task("pb", "c", submitted, at(1))
	created := snapshotEvent(tk)
	cfg := hook("pb", "h")
	if err := s.CreateTask(t.Context(), scopeA, tk, taskstore.Event{Seq: 1, Response: created, Push: true, PushConfig: cfg}); err != nil {
		t.Fatal(err)
	}
	evs := []*a2a.StreamResponse{statusEvent("pb", working), chunk("pb", "a", false, "x"), chunk("pb", "a", true, "y"), statusEvent("pb", completed)}
	batch := numbered(2, evs...)
	for i := range batch {
		batch[i].Push = true
	}
	if err := b.AppendBatch(t.Context(), scopeA, "pb", batch); err != nil {
		t.Fatalf("AppendBatch: %v", err)
	}
	wantQueue(t, s, target(scopeA, "pb", "h"), cfg, []uint64{1, 2, 3, 4, 5}, append([]*a2a.StreamResponse{created}, evs...)...)
}

// testEventsOfBatches: a log written in batches (a CreateTaskBatch, an
// AppendBatch, an Append) reads as the same events in every window, by
// every after and limit; PruneEvents counts and removes every event but
// the task's last, whether it was logged with others or alone, and the
// log goes on after it.
func testEventsOfBatches(t *testing.T, s TaskStore) {
	ctx := t.Context()
	b := batcher(t, s)
	tk := task("lb", "c", submitted, at(1))
	all := []*a2a.StreamResponse{snapshotEvent(tk), statusAt("lb", 2, working, at(2)).Response,
		chunk("lb", "a", false, "one"), chunk("lb", "a", true, "two")}
	if err := b.CreateTaskBatch(ctx, scopeA, tk, numbered(1, all...)); err != nil {
		t.Fatalf("CreateTaskBatch: %v", err)
	}
	more := []*a2a.StreamResponse{chunk("lb", "a", true, "three"), chunk("lb", "b", false, "four"), chunk("lb", "b", true, "five")}
	if err := b.AppendBatch(ctx, scopeA, "lb", numbered(5, more...)); err != nil {
		t.Fatalf("AppendBatch: %v", err)
	}
	all = append(all, more...)
	last := statusAt("lb", 8, completed, at(8))
	if err := s.Append(ctx, scopeA, "lb", last); err != nil {
		t.Fatalf("Append: %v", err)
	}
	all = append(all, last.Response)
	n := len(all)
	for after := 0; after <= n; after++ {
		for limit := 0; limit <= n-after+1; limit++ {
			end := n
			if limit > 0 {
				end = min(n, after+limit)
			}
			wantEvents(t, fmt.Sprintf("after %d, limit %d", after, limit),
				mustEvents(t, s, "lb", uint64(after), limit), uint64(after)+1, all[after:end]...)
		}
	}

	// The task's last event alone in its row, then logged with others.
	pruned, err := s.PruneEvents(ctx, time.Now().Add(time.Hour))
	if err != nil || pruned != n-1 {
		t.Fatalf("PruneEvents = %d, %v; want %d (all but the last)", pruned, err, n-1)
	}
	for after := range n - 1 {
		_, err := s.Events(ctx, scopeA, "lb", uint64(after), 0)
		wantErr(t, fmt.Sprintf("Events after %d, pruned", after), err, taskstore.ErrPruned)
	}
	wantEvents(t, "the last event, kept", mustEvents(t, s, "lb", uint64(n-1), 0), uint64(n), all[n-1])
	later := []*a2a.StreamResponse{chunk("lb", "c", false, "six"), chunk("lb", "c", true, "seven")}
	if err := b.AppendBatch(ctx, scopeA, "lb", numbered(uint64(n+1), later...)); err != nil {
		t.Fatalf("AppendBatch after pruning: %v", err)
	}
	wantEvents(t, "after pruning and a batch", mustEvents(t, s, "lb", uint64(n-1), 0), uint64(n), all[n-1], later[0], later[1])
	if pruned, err := s.PruneEvents(ctx, time.Now().Add(time.Hour)); err != nil || pruned != 2 {
		t.Fatalf("second PruneEvents = %d, %v; want 2", pruned, err)
	}
	wantEvents(t, "the last of a batch, kept", mustEvents(t, s, "lb", uint64(n+1), 0), uint64(n+2), later[1])
	_, err = s.Events(ctx, scopeA, "lb", uint64(n), 0)
	wantErr(t, "Events before the last of a pruned batch", err, taskstore.ErrPruned)
	if pruned, err := s.PruneEvents(ctx, time.Now().Add(time.Hour)); err != nil || pruned != 0 {
		t.Errorf("third PruneEvents = %d, %v; want 0", pruned, err)
	}
}
