package memstore

import (
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"weak"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
)

// TestFinishedTaskPacked: a task is kept encoded once terminal, decoded
// for a write and encoded again after it, and reads see it whole.
func TestFinishedTaskPacked(t *testing.T) {
	s := New()
	sc := taskstore.Scope{Owner: "o"}
	tk := &a2a.Task{Id: "t1", ContextId: "c", Status: &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_WORKING},
		History: []*a2a.Message{{MessageId: "m1", Role: a2a.Role_ROLE_USER, Parts: []*a2a.Part{{Content: &a2a.Part_Text{Text: "hi"}}}}}}
	want := proto.Clone(tk).(*a2a.Task)
	created := &a2a.StreamResponse{Payload: &a2a.StreamResponse_Task{Task: proto.Clone(tk).(*a2a.Task)}}
	done := &a2a.StreamResponse{Payload: &a2a.StreamResponse_StatusUpdate{StatusUpdate: &a2a.TaskStatusUpdateEvent{
		TaskId: "t1", ContextId: "c", Status: &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_COMPLETED}}}}
	if err := s.CreateTaskBatch(t.Context(), sc, tk, []taskstore.Event{{Seq: 1, Response: created}, {Seq: 2, Response: done}}); err != nil {
		t.Fatal(err)
	}
	taskstore.Apply(want, done)
	e := s.tasks["t1"]
	if e.task != nil || e.packed == nil || e.log.old.len() != 2 || len(e.log.live) != 0 {
		t.Fatalf("a completed task is not packed: task %v, %d bytes, log %+v", e.task != nil, len(e.packed), e.log)
	}
	check := func(what string) {
		t.Helper()
		got, err := s.GetTask(t.Context(), sc, "t1")
		if err != nil {
			t.Fatal(err)
		}
		want.Generation = taskstore.Generation(e.seq)
		if !proto.Equal(want, got) {
			t.Errorf("%s: GetTask = %v, want %v", what, got, want)
		}
		evs, err := s.Events(t.Context(), sc, "t1", 0, 0)
		if err != nil || len(evs) != int(e.seq) {
			t.Fatalf("%s: Events = %d events, %v; want %d", what, len(evs), err, e.seq)
		}
		if !proto.Equal(done, evs[1].Response) {
			t.Errorf("%s: logged event 2 = %v, want %v", what, evs[1].Response, done)
		}
	}
	check("packed")
	more := &a2a.StreamResponse{Payload: &a2a.StreamResponse_ArtifactUpdate{ArtifactUpdate: &a2a.TaskArtifactUpdateEvent{
		TaskId: "t1", ContextId: "c", Artifact: &a2a.Artifact{ArtifactId: "a", Parts: []*a2a.Part{{Content: &a2a.Part_Text{Text: "late"}}}}}}}
	if err := s.Append(t.Context(), sc, "t1", taskstore.Event{Seq: 3, Response: more}); err != nil {
		t.Fatal(err)
	}
	taskstore.Apply(want, more)
	if e.task != nil || e.log.old.len() != 3 || len(e.log.live) != 0 {
		t.Error("a write to a finished task left it unpacked")
	}
	check("after a write")
}

// TestFinishingWriteShares: a write that leaves its task terminal builds
// the task it packs without copying the artifacts its events start
// (applyShared), yet stores what taskstore.Apply on a copy would, and
// changes neither the caller's task nor any event, even when a chunk is
// appended to an artifact an event of the same write started, or to one
// of the caller's task.
func TestFinishingWriteShares(t *testing.T) {
	text := func(s string) []*a2a.Part { return []*a2a.Part{{Content: &a2a.Part_Text{Text: s}}} }
	art := func(id, s string, app bool) *a2a.StreamResponse {
		return &a2a.StreamResponse{Payload: &a2a.StreamResponse_ArtifactUpdate{ArtifactUpdate: &a2a.TaskArtifactUpdateEvent{
			TaskId: "t1", ContextId: "c", Append: app, Artifact: &a2a.Artifact{ArtifactId: id, Parts: text(s)}}}}
	}
	status := func(st a2a.TaskState, msg string) *a2a.StreamResponse {
		s := &a2a.TaskStatus{State: st}
		if msg != "" {
			s.Message = &a2a.Message{MessageId: "r-" + msg, Role: a2a.Role_ROLE_AGENT, Parts: text(msg)}
		}
		return &a2a.StreamResponse{Payload: &a2a.StreamResponse_StatusUpdate{StatusUpdate: &a2a.TaskStatusUpdateEvent{
			TaskId: "t1", ContextId: "c", Status: s}}}
	}
	newTask := func() *a2a.Task {
		return &a2a.Task{Id: "t1", ContextId: "c", Status: &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_SUBMITTED},
			History:   []*a2a.Message{{MessageId: "m1", Role: a2a.Role_ROLE_USER, Parts: text("hi")}},
			Artifacts: []*a2a.Artifact{{ArtifactId: "old", Parts: text("o1")}}}
	}
	sc := taskstore.Scope{Owner: "o"}
	for _, create := range []bool{true, false} {
		tk := newTask()
		resps := []*a2a.StreamResponse{
			status(a2a.TaskState_TASK_STATE_WORKING, ""),
			art("a", "a1", false), art("a", "a2", true), art("old", "o2", true),
			art("b", "b1", false), art("b", "b2", false), art("a", "a3", true),
			status(a2a.TaskState_TASK_STATE_COMPLETED, "done"),
		}
		var evs []taskstore.Event
		if create {
			evs = append(evs, taskstore.Event{Seq: 1, Response: &a2a.StreamResponse{Payload: &a2a.StreamResponse_Task{Task: newTask()}}})
		}
		for i, r := range resps {
			evs = append(evs, taskstore.Event{Seq: uint64(i + 2), Response: r})
		}
		var before []*a2a.StreamResponse
		for _, ev := range evs {
			before = append(before, proto.Clone(ev.Response).(*a2a.StreamResponse))
		}
		tkBefore := proto.Clone(tk).(*a2a.Task)
		want := proto.Clone(tk).(*a2a.Task)
		for _, r := range resps {
			taskstore.Apply(want, r)
		}

		s := New()
		var err error
		if create {
			err = s.CreateTaskBatch(t.Context(), sc, tk, evs)
		} else {
			err = s.CreateTaskBatch(t.Context(), sc, tk, []taskstore.Event{{Seq: 1, Response: &a2a.StreamResponse{Payload: &a2a.StreamResponse_Task{Task: newTask()}}}})
			if err == nil {
				err = s.AppendBatch(t.Context(), sc, "t1", evs)
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.GetTask(t.Context(), sc, "t1")
		if err != nil {
			t.Fatal(err)
		}
		got.Generation = 0 // checked by the store kit
		if !proto.Equal(got, want) {
			t.Errorf("create=%v: stored %v\nwant %v", create, got, want)
		}
		if !proto.Equal(tk, tkBefore) {
			t.Errorf("create=%v: the caller's task changed: %v", create, tk)
		}
		for i, ev := range evs {
			if !proto.Equal(ev.Response, before[i]) {
				t.Errorf("create=%v: event %d changed: %v", create, i, ev.Response)
			}
		}
		if e := s.tasks["t1"]; e.task != nil {
			t.Errorf("create=%v: the finished task is not packed", create)
		}
	}
}

// TestReadAgainCached: a finished task read a second time keeps its
// decoded tree for the reads after, which share it; a write drops
// it, and the reads after see the write; no more than cachedTasks are kept.
func TestReadAgainCached(t *testing.T) {
	s := New()
	sc := taskstore.Scope{Owner: "o"}
	mk := func(id string) {
		tk := &a2a.Task{Id: id, ContextId: "c", Status: &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_COMPLETED},
			History: []*a2a.Message{{MessageId: "m-" + id, Role: a2a.Role_ROLE_USER, Parts: []*a2a.Part{{Content: &a2a.Part_Text{Text: "hi"}}}}}}
		if err := s.CreateTaskBatch(t.Context(), sc, tk, []taskstore.Event{{Seq: 1, Response: &a2a.StreamResponse{Payload: &a2a.StreamResponse_Task{Task: tk}}}}); err != nil {
			t.Fatal(err)
		}
	}
	mk("t1")
	e := s.tasks["t1"]
	first, _ := s.GetTask(t.Context(), sc, "t1")
	if e.decoded.Load() != nil {
		t.Fatal("a task read once keeps its decoded tree")
	}
	second, _ := s.GetTask(t.Context(), sc, "t1")
	kept := e.decoded.Load()
	if kept == nil {
		t.Fatal("a task read twice keeps no decoded tree")
	}
	third, _ := s.GetTask(t.Context(), sc, "t1")
	if !proto.Equal(first, second) || !proto.Equal(first, third) {
		t.Fatalf("reads differ: %v, %v, %v", first, second, third)
	}
	if second != kept || third != kept {
		t.Fatal("a read again returned a copy, not the kept tree (GetTask's tasks are shared)")
	}
	held := proto.Clone(kept).(*a2a.Task)
	if err := s.Append(t.Context(), sc, "t1", taskstore.Event{Message: &a2a.Message{MessageId: "m2", Role: a2a.Role_ROLE_USER, Parts: []*a2a.Part{{Content: &a2a.Part_Text{Text: "more"}}}}}); err != nil {
		t.Fatal(err)
	}
	if e.decoded.Load() != nil {
		t.Fatal("a write kept the decoded tree")
	}
	if !proto.Equal(kept, held) {
		t.Fatalf("a write changed the tree a read returned: %v", kept)
	}
	if got, _ := s.GetTask(t.Context(), sc, "t1"); len(got.History) != 2 {
		t.Fatalf("a read after a write: %v", got)
	}
	for i := range cachedTasks + 10 {
		id := "x" + string(rune('a'+i%26)) + string(rune('a'+i/26))
		mk(id)
		s.GetTask(t.Context(), sc, id)
		s.GetTask(t.Context(), sc, id)
	}
	n := 0
	for _, e := range s.tasks {
		if e.decoded.Load() != nil {
			n++
		}
	}
	if n != cachedTasks {
		t.Fatalf("%d decoded trees kept, want %d", n, cachedTasks)
	}
}

// TestLargeReadShared: the readers of a large finished task that arrive
// while an answer still holds its tree share that tree (one decoding, not
// one per call); a write neither changes it nor is hidden by it, and the
// store keeps no tree once no answer holds it.
func TestLargeReadShared(t *testing.T) {
	s := New()
	sc := taskstore.Scope{Owner: "o"}
	big := strings.Repeat("x", 4*cachedTaskBytes)
	tk := &a2a.Task{Id: "big", ContextId: "c", Status: &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_COMPLETED},
		Artifacts: []*a2a.Artifact{a2a.TextArtifact("a", big)}}
	if err := s.CreateTaskBatch(t.Context(), sc, tk, []taskstore.Event{{Seq: 1, Response: &a2a.StreamResponse{Payload: &a2a.StreamResponse_Task{Task: tk}}}}); err != nil {
		t.Fatal(err)
	}
	e := s.tasks["big"]
	if len(e.packed) <= cachedTaskBytes {
		t.Fatalf("the task packs to %d bytes, not above %d", len(e.packed), cachedTaskBytes)
	}
	first, err := s.GetTask(t.Context(), sc, "big")
	if err != nil {
		t.Fatal(err)
	}
	second, _ := s.GetTask(t.Context(), sc, "big")
	if first != second {
		t.Fatal("a second read while the first answer holds the tree decoded another")
	}
	held := proto.Clone(first).(*a2a.Task)
	if err := s.Append(t.Context(), sc, "big", taskstore.Event{Message: &a2a.Message{MessageId: "m2", Role: a2a.Role_ROLE_USER, Parts: []*a2a.Part{{Content: &a2a.Part_Text{Text: "more"}}}}}); err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(first, held) {
		t.Fatal("a write changed the tree a read returned")
	}
	after, _ := s.GetTask(t.Context(), sc, "big")
	if after == first || len(after.History) != 1 {
		t.Fatalf("a read after a write got the old tree (history %d)", len(after.History))
	}
	runtime.KeepAlive(first)
	first, second, after = nil, nil, nil
	runtime.GC()
	runtime.GC()
	if s.large.Held(weak.Make(e)) {
		t.Error("the store keeps the tree of a large task no answer holds")
	}
}

// TestLargeReadsConcurrent: GetTask of two different large finished tasks
// decode at once, each not waiting for the other's decoding (a store-wide
// lock around the decoding made them take turns); readers of one task
// still share one decoding (TestLargeReadShared).
func TestLargeReadsConcurrent(t *testing.T) {
	s := New()
	sc := taskstore.Scope{Owner: "o"}
	big := strings.Repeat("x", 4*cachedTaskBytes)
	for _, id := range []string{"a", "b"} {
		tk := &a2a.Task{Id: id, ContextId: "c", Status: &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_COMPLETED},
			Artifacts: []*a2a.Artifact{a2a.TextArtifact("a", big)}}
		if err := s.CreateTaskBatch(t.Context(), sc, tk, []taskstore.Event{{Seq: 1, Response: &a2a.StreamResponse{Payload: &a2a.StreamResponse_Task{Task: tk}}}}); err != nil {
			t.Fatal(err)
		}
	}
	// Each decoding waits, up to a bound, until both have begun.
	var begun sync.WaitGroup
	begun.Add(2)
	both := make(chan struct{})
	go func() { begun.Wait(); close(both) }()
	decode := unpackLarge
	defer func() { unpackLarge = decode }()
	var overlapped atomic.Int32
	unpackLarge = func(b []byte) (*a2a.Task, error) {
		begun.Done()
		select {
		case <-both:
			overlapped.Add(1)
		case <-time.After(2 * time.Second):
		}
		return decode(b)
	}
	var wg sync.WaitGroup
	for _, id := range []string{"a", "b"} {
		wg.Go(func() {
			if _, err := s.GetTask(t.Context(), sc, id); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := overlapped.Load(); n != 2 {
		t.Fatalf("%d of 2 decodings ran while the other did; they took turns", n)
	}
}
