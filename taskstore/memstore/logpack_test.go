package memstore

import (
	"fmt"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
)

const (
	packTask = "0199a0c4-7d1e-7a3b-9f10-000000000001"
	packCtx  = "0199a0c4-7d1e-7a3b-9f11-000000000001"
)

func artifactUpdate(task, ctx, text string, app bool) *a2a.StreamResponse {
	return &a2a.StreamResponse{Payload: &a2a.StreamResponse_ArtifactUpdate{ArtifactUpdate: &a2a.TaskArtifactUpdateEvent{
		TaskId: task, ContextId: ctx, Artifact: a2a.TextArtifact("stream", text), Append: app}}}
}

func statusUpdate(task, ctx string, st a2a.TaskState) *a2a.StreamResponse {
	return &a2a.StreamResponse{Payload: &a2a.StreamResponse_StatusUpdate{StatusUpdate: &a2a.TaskStatusUpdateEvent{
		TaskId: task, ContextId: ctx, Status: &a2a.TaskStatus{State: st}}}}
}

// TestPackedEvents: every kind of event reads back as it was logged from
// a packed log, and the ids are left out of exactly the updates that
// carry the task's own.
func TestPackedEvents(t *testing.T) {
	withUnknown := artifactUpdate(packTask, packCtx, "x", true)
	withUnknown.GetArtifactUpdate().ProtoReflect().SetUnknown(protowire.AppendString(protowire.AppendTag(nil, 99, protowire.BytesType), "later"))
	outerUnknown := statusUpdate(packTask, packCtx, a2a.TaskState_TASK_STATE_WORKING)
	outerUnknown.ProtoReflect().SetUnknown(protowire.AppendVarint(protowire.AppendTag(nil, 98, protowire.VarintType), 7))
	meta, _ := structpb.NewStruct(map[string]any{"k": "v"})
	withMeta := statusUpdate(packTask, packCtx, a2a.TaskState_TASK_STATE_COMPLETED)
	withMeta.GetStatusUpdate().Metadata = meta
	for _, c := range []struct {
		name  string
		r     *a2a.StreamResponse
		flags byte
	}{
		{"chunk", artifactUpdate(packTask, packCtx, "chunk 1", true), elidedTask | elidedContext},
		{"status", statusUpdate(packTask, packCtx, a2a.TaskState_TASK_STATE_WORKING), elidedTask | elidedContext},
		{"status with metadata", withMeta, elidedTask | elidedContext},
		{"ids alone", statusUpdate(packTask, packCtx, a2a.TaskState_TASK_STATE_UNSPECIFIED), elidedTask | elidedContext},
		{"unknown field inside", withUnknown, elidedTask | elidedContext},
		{"unknown field outside", outerUnknown, 0},
		{"another context", artifactUpdate(packTask, "other", "y", false), elidedTask},
		{"another task", artifactUpdate("other", packCtx, "y", false), elidedContext},
		{"no ids", artifactUpdate("", "", "z", false), 0},
		{"task snapshot", &a2a.StreamResponse{Payload: &a2a.StreamResponse_Task{Task: &a2a.Task{Id: packTask, ContextId: packCtx}}}, 0},
		{"message", &a2a.StreamResponse{Payload: &a2a.StreamResponse_Message{Message: &a2a.Message{MessageId: "m", TaskId: packTask, ContextId: packCtx}}}, 0},
		{"empty", &a2a.StreamResponse{}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			first := artifactUpdate(packTask, packCtx, "first", false)
			p, _, err := packEvents(nil, []*a2a.StreamResponse{first, c.r}, packTask, packCtx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := p.buf[p.ends[0]]; got != c.flags {
				t.Errorf("flags %b, want %b", got, c.flags)
			}
			if want := proto.Size(c.r) + 1; c.flags == 0 && int(p.ends[1]-p.ends[0]) != want {
				t.Errorf("kept in %d bytes, want %d (as it is)", p.ends[1]-p.ends[0], want)
			}
			for i, want := range []*a2a.StreamResponse{first, c.r} {
				got, err := p.event(i)
				if err != nil || !proto.Equal(got, want) {
					t.Errorf("event %d = %v, %v; want %v", i, got, err, want)
				}
			}
		})
	}
}

// TestPackedEventsCorrupt: a packed event that cannot be read is an
// error, not a panic nor a wrong event.
func TestPackedEventsCorrupt(t *testing.T) {
	for _, c := range []struct {
		name string
		buf  []byte
	}{
		{"no flags", nil},
		{"bad encoding", []byte{0, 0xff}},
		{"ids left out of a task", append([]byte{elidedTask}, protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), nil)...)},
	} {
		p := &packedEvents{buf: c.buf, ends: []uint32{uint32(len(c.buf))}}
		if r, err := p.event(0); err == nil {
			t.Errorf("%s: decoded %v, want an error", c.name, r)
		}
	}
}

// FuzzPackedEvents: any event reads back from a packed log as it was
// logged, after one packing and after a second that adds to the first,
// and decoding any bytes as a packed event never panics.
func FuzzPackedEvents(f *testing.F) {
	for _, r := range []*a2a.StreamResponse{
		artifactUpdate(packTask, packCtx, "chunk 0", false),
		statusUpdate(packTask, "c", a2a.TaskState_TASK_STATE_COMPLETED),
		{Payload: &a2a.StreamResponse_Task{Task: &a2a.Task{Id: packTask}}},
	} {
		b, _ := proto.Marshal(r)
		f.Add(b, packTask, packCtx)
	}
	f.Add([]byte{0x22, 0x02, 0x0a, 0x00}, "", "")
	f.Fuzz(func(t *testing.T, data []byte, task, ctx string) {
		raw := &packedEvents{buf: data, ends: []uint32{uint32(len(data))}, task: task, ctx: ctx}
		_, _ = raw.event(0)
		r := new(a2a.StreamResponse)
		if proto.Unmarshal(data, r) != nil {
			return
		}
		p, _, err := packEvents(nil, []*a2a.StreamResponse{r}, task, ctx, nil)
		if err != nil {
			return
		}
		p, _, err = packEvents(p, []*a2a.StreamResponse{r}, "", "", nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := range p.len() {
			if got, err := p.event(i); err != nil || !proto.Equal(got, r) {
				t.Fatalf("event %d = %v, %v; want %v", i, got, err, r)
			}
		}
	})
}

// TestLogAcrossPacking: a task taken out of a terminal state keeps its
// packed events and logs the next ones as trees; reads, limits and
// pruning go across the two, and packing again joins them.
func TestLogAcrossPacking(t *testing.T) {
	s := New()
	sc := taskstore.Scope{Owner: "o"}
	tk := &a2a.Task{Id: packTask, ContextId: packCtx, Status: &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_WORKING}}
	var logged []*a2a.StreamResponse
	add := func(r *a2a.StreamResponse) {
		t.Helper()
		logged = append(logged, r)
		if err := s.Append(t.Context(), sc, packTask, taskstore.Event{Seq: uint64(len(logged)), Response: r}); err != nil {
			t.Fatal(err)
		}
	}
	logged = append(logged, &a2a.StreamResponse{Payload: &a2a.StreamResponse_Task{Task: a2a.CloneTask(tk)}})
	if err := s.CreateTask(t.Context(), sc, tk, taskstore.Event{Seq: 1, Response: logged[0]}); err != nil {
		t.Fatal(err)
	}
	add(artifactUpdate(packTask, packCtx, "a", false))
	add(statusUpdate(packTask, packCtx, a2a.TaskState_TASK_STATE_COMPLETED))
	add(statusUpdate(packTask, packCtx, a2a.TaskState_TASK_STATE_WORKING))
	add(artifactUpdate(packTask, packCtx, "b", true))
	e := s.tasks[packTask]
	if e.log.old.len() != 3 || len(e.log.live) != 2 {
		t.Fatalf("log: %d packed, %d live; want 3 and 2", e.log.old.len(), len(e.log.live))
	}
	check := func(what string, kept int) {
		t.Helper()
		for after := range len(logged) + 1 {
			for _, limit := range []int{0, 1, 2, 4} {
				got, err := s.Events(t.Context(), sc, packTask, uint64(after), limit)
				if after < len(logged)-kept {
					if err != taskstore.ErrPruned {
						t.Errorf("%s: Events(%d, %d) = %v; want ErrPruned", what, after, limit, err)
					}
					continue
				}
				want := logged[after:]
				if limit > 0 && len(want) > limit {
					want = want[:limit]
				}
				if err != nil || len(got) != len(want) {
					t.Fatalf("%s: Events(%d, %d) = %d events, %v; want %d", what, after, limit, len(got), err, len(want))
				}
				for i, ev := range got {
					if ev.Seq != uint64(after+i+1) || !proto.Equal(ev.Response, want[i]) {
						t.Errorf("%s: Events(%d, %d)[%d] = %d %v; want %d %v", what, after, limit, i, ev.Seq, ev.Response, after+i+1, want[i])
					}
				}
			}
		}
	}
	check("packed then live", len(logged))
	// Pruning up to event 2 (the second span) leaves one packed event.
	e.log.spans = []span{{last: 2, at: 10}, {last: 5, at: 20}}
	if n := e.log.prune(11); n != 2 || e.log.old.len() != 1 || e.log.first != 3 {
		t.Fatalf("pruned %d, first %d, %d packed; want 2, 3, 1", n, e.log.first, e.log.old.len())
	}
	check("pruned into the packed events", 3)
	add(statusUpdate(packTask, packCtx, a2a.TaskState_TASK_STATE_CANCELED))
	if e.log.old.len() != 4 || len(e.log.live) != 0 {
		t.Fatalf("finished again: %d packed, %d live; want 4 and 0", e.log.old.len(), len(e.log.live))
	}
	check("packed again", 4)
	if n := e.log.prune(1 << 62); n != 3 {
		t.Fatalf("pruned %d, want 3 (all but the last)", n)
	}
	check("all but the last", 1)
}

// TestPruneToTheSecond: the log keeps when its events were logged to the
// second, rounded up: PruneEvents drops no event logged at or after the
// cut, and drops those logged before it once the cut is past their second.
func TestPruneToTheSecond(t *testing.T) {
	s := New()
	base := time.Unix(1_800_000_000, 0)
	var now time.Time
	s.now = func() time.Time { return now }
	sc := taskstore.Scope{Owner: "o"}
	times := []time.Duration{200 * time.Millisecond, 700 * time.Millisecond, 1000 * time.Millisecond, 1500 * time.Millisecond, 2100 * time.Millisecond}
	for i, d := range times {
		now = base.Add(d)
		r := artifactUpdate(packTask, packCtx, fmt.Sprint(i), i > 0)
		var err error
		if i == 0 {
			err = s.CreateTask(t.Context(), sc, &a2a.Task{Id: packTask, ContextId: packCtx, Status: &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_WORKING}},
				taskstore.Event{Seq: 1, Response: r})
		} else {
			err = s.Append(t.Context(), sc, packTask, taskstore.Event{Seq: uint64(i + 1), Response: r})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	// Spans: events 1–3 at 1 s, 4 at 2 s, 5 at 3 s.
	for _, c := range []struct {
		cut  time.Duration
		want int
	}{
		{200 * time.Millisecond, 0},  // none before
		{900 * time.Millisecond, 0},  // 1 and 2 were, but their second is not past
		{1000 * time.Millisecond, 0}, // 3 was logged at the cut
		{1001 * time.Millisecond, 3},
		{2 * time.Second, 0},
		{time.Hour, 1}, // 4; 5 is the last
	} {
		if n, err := s.PruneEvents(t.Context(), base.Add(c.cut)); err != nil || n != c.want {
			t.Errorf("PruneEvents(%v) = %d, %v; want %d", c.cut, n, err, c.want)
		}
	}
}
