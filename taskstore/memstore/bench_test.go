package memstore_test

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/memstore"
	"parley.dev/parley/taskstore/storetest"
)

var benchScope = taskstore.Scope{Tenant: "t", Owner: "o"}

func benchTask(i int) *a2a.Task {
	id := fmt.Sprintf("task-%08d", i)
	states := []a2a.TaskState{a2a.TaskState_TASK_STATE_WORKING, a2a.TaskState_TASK_STATE_COMPLETED}
	return &a2a.Task{
		Id:        id,
		ContextId: fmt.Sprintf("ctx-%d", i%10),
		Status: &a2a.TaskStatus{State: states[i%2],
			Timestamp: timestamppb.New(time.UnixMilli(1_700_000_000_000 + int64(i/2)))},
		History: []*a2a.Message{{MessageId: "m-" + id, Role: a2a.Role_ROLE_USER,
			Parts: []*a2a.Part{{Content: &a2a.Part_Text{Text: "please do the thing number " + id}}}}},
	}
}

func BenchmarkCreate(b *testing.B) {
	s := memstore.New()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if err := s.CreateTask(b.Context(), benchScope, benchTask(i), taskstore.Event{}); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

func filled(b *testing.B, n int) *memstore.Store {
	s := memstore.New()
	for i := range n {
		if err := s.CreateTask(b.Context(), benchScope, benchTask(i), taskstore.Event{}); err != nil {
			b.Fatal(err)
		}
	}
	return s
}

func BenchmarkGet(b *testing.B) {
	s := filled(b, 10000)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := s.GetTask(b.Context(), benchScope, fmt.Sprintf("task-%08d", i%10000)); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

func BenchmarkListPage(b *testing.B) {
	s := filled(b, 10000)
	mid := benchTask(5000)
	for _, c := range []struct {
		name string
		q    taskstore.ListQuery
	}{
		{"first", taskstore.ListQuery{Limit: 50}},
		{"middle", taskstore.ListQuery{Limit: 50, After: &taskstore.Cursor{Time: mid.Status.Timestamp.AsTime(), ID: mid.Id}}},
		{"state+context", taskstore.ListQuery{Limit: 50, State: a2a.TaskState_TASK_STATE_WORKING, ContextID: "ctx-4"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				res, err := s.ListTasks(b.Context(), benchScope, c.q)
				if err != nil || len(res.Tasks) != 50 {
					b.Fatalf("%d tasks, %v", len(res.Tasks), err)
				}
			}
		})
	}
}

func BenchmarkAppendChunk(b *testing.B) {
	for _, at := range []int{10, 10000} {
		b.Run(fmt.Sprintf("at=%d", at), func(b *testing.B) {
			storetest.BenchAppendChunk(b, memstore.New(), at)
		})
	}
}

func BenchmarkSendMessage(b *testing.B) {
	storetest.BenchSendMessage(b, memstore.New())
}

func BenchmarkSendMessageBatched(b *testing.B) {
	storetest.BenchSendMessageBatched(b, memstore.New())
}

// BenchmarkHeapPerFinishedTask reports what a finished task of a blocking
// SendMessage (the task, its four logged events) costs the store's heap
// once the garbage is collected: bytes and objects, the latter being what
// each collection walks.
func BenchmarkHeapPerFinishedTask(b *testing.B) {
	heapPer(b, 10000, "task", func(s *memstore.Store, i int) {
		tk := benchTask(i)
		tk.Status.State = a2a.TaskState_TASK_STATE_SUBMITTED
		id := tk.Id
		status := func(st a2a.TaskState) *a2a.StreamResponse {
			return &a2a.StreamResponse{Payload: &a2a.StreamResponse_StatusUpdate{StatusUpdate: &a2a.TaskStatusUpdateEvent{
				TaskId: id, ContextId: tk.ContextId, Status: &a2a.TaskStatus{State: st, Timestamp: timestamppb.Now()}}}}
		}
		evs := []taskstore.Event{
			{Seq: 1, Response: &a2a.StreamResponse{Payload: &a2a.StreamResponse_Task{Task: tk}}},
			{Seq: 2, Response: status(a2a.TaskState_TASK_STATE_WORKING)},
			{Seq: 3, Response: &a2a.StreamResponse{Payload: &a2a.StreamResponse_ArtifactUpdate{ArtifactUpdate: &a2a.TaskArtifactUpdateEvent{
				TaskId: id, ContextId: tk.ContextId, Artifact: a2a.TextArtifact("echo", "the answer to "+id)}}}},
			{Seq: 4, Response: status(a2a.TaskState_TASK_STATE_COMPLETED)},
		}
		if err := s.CreateTaskBatch(b.Context(), benchScope, tk, evs); err != nil {
			b.Fatal(err)
		}
	})
}

// heapPer reports what each of n things put in a new store by put(s, i),
// i from 0 to n-1, costs the store's heap once the garbage is collected:
// bytes and objects per unit, the latter being what each collection
// walks.
func heapPer(b *testing.B, n int, unit string, put func(s *memstore.Store, i int)) {
	heapPerEach(b, n, 1, unit, put)
}

// heapPerEach is heapPer for calls of put that each put per units.
func heapPerEach(b *testing.B, n, per int, unit string, put func(s *memstore.Store, i int)) {
	for b.Loop() {
		s := memstore.New()
		before := liveHeap()
		for i := range n {
			put(s, i)
		}
		after := liveHeap()
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(n*per), "heap-B/"+unit)
		b.ReportMetric(float64(after.HeapObjects-before.HeapObjects)/float64(n*per), "objects/"+unit)
		runtime.KeepAlive(s)
	}
}

// liveHeap collects the garbage and reads the heap's statistics.
func liveHeap() runtime.MemStats {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m
}

// BenchmarkLongStreams writes streams of 200, 2,000 and 10,000 chunks and
// reads each back once finished (storetest.BenchLongStreams; one
// operation is one chunk): the cost per chunk must be the same.
func BenchmarkLongStreams(b *testing.B) {
	for _, chunks := range []int{200, 2000, 10000} {
		b.Run(fmt.Sprintf("chunks=%d", chunks), func(b *testing.B) {
			storetest.BenchLongStreams(b, memstore.New(), chunks)
		})
	}
}

// BenchmarkHeapPerLoggedEvent reports what one logged event of a finished
// chunk stream costs the store's heap once the garbage is collected: 20
// tasks of 10,000 chunks each, made as the server makes those of the
// conformance agent's "stream 10000" (ids of 36 characters, the chunks
// "chunk 0" to "chunk 9999" of one artifact, written in batches of
// storetest.LongStreamBatch events), with their task snapshot and status
// events. What is measured is the task with its log: the artifact's parts
// are counted, spread over the events.
func BenchmarkHeapPerLoggedEvent(b *testing.B) {
	const chunks = 10000
	heapPerEach(b, 20, chunks+3, "event", func(s *memstore.Store, i int) {
		putStream(b, s, i, chunks, true)
	})
}

// BenchmarkHeapPerLiveEvent is BenchmarkHeapPerLoggedEvent for streams
// still running (all but the COMPLETED status): their events are kept as
// the trees the writes stored, which the stream's readers share.
func BenchmarkHeapPerLiveEvent(b *testing.B) {
	const chunks = 10000
	heapPerEach(b, 20, chunks+2, "event", func(s *memstore.Store, i int) {
		putStream(b, s, i, chunks, false)
	})
}

// putStream stores a stream of n chunks, finished or not
// (BenchmarkHeapPerLoggedEvent).
func putStream(b *testing.B, s *memstore.Store, i, n int, finish bool) {
	id := fmt.Sprintf("0199a0c4-7d1e-7a3b-9f10-%012d", i)
	ctxID := fmt.Sprintf("0199a0c4-7d1e-7a3b-9f11-%012d", i)
	tk := &a2a.Task{Id: id, ContextId: ctxID, Status: &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_SUBMITTED, Timestamp: timestamppb.Now()}}
	status := func(st a2a.TaskState) *a2a.StreamResponse {
		return &a2a.StreamResponse{Payload: &a2a.StreamResponse_StatusUpdate{StatusUpdate: &a2a.TaskStatusUpdateEvent{
			TaskId: id, ContextId: ctxID, Status: &a2a.TaskStatus{State: st, Timestamp: timestamppb.Now()}}}}
	}
	resps := []*a2a.StreamResponse{{Payload: &a2a.StreamResponse_Task{Task: a2a.CloneTask(tk)}}, status(a2a.TaskState_TASK_STATE_WORKING)}
	for c := range n {
		resps = append(resps, &a2a.StreamResponse{Payload: &a2a.StreamResponse_ArtifactUpdate{ArtifactUpdate: &a2a.TaskArtifactUpdateEvent{
			TaskId: id, ContextId: ctxID, Artifact: a2a.TextArtifact("stream", fmt.Sprintf("chunk %d", c)),
			Append: c > 0, LastChunk: c == n-1}}})
	}
	if finish {
		resps = append(resps, status(a2a.TaskState_TASK_STATE_COMPLETED))
	}
	for at := 0; at < len(resps); at += storetest.LongStreamBatch {
		batch := resps[at:min(at+storetest.LongStreamBatch, len(resps))]
		evs := make([]taskstore.Event, len(batch))
		for j, r := range batch {
			evs[j] = taskstore.Event{Seq: uint64(at + j + 1), Response: r}
		}
		var err error
		if at == 0 {
			err = s.CreateTaskBatch(b.Context(), benchScope, tk, evs)
		} else {
			err = s.AppendBatch(b.Context(), benchScope, id, evs)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHeapPerReplyRecord reports what the idempotency record of a
// message answered with a direct reply (the reply "echo: " and the text,
// ids of 36 characters as the server makes them) costs the store's heap
// once the garbage is collected.
func BenchmarkHeapPerReplyRecord(b *testing.B) {
	heapPer(b, 20000, "record", func(s *memstore.Store, i int) {
		id := fmt.Sprintf("0199a0c4-7d1e-7a3b-9f10-%012d", i)
		r := &taskstore.MessageRecord{MessageID: id, Digest: fmt.Sprintf("%064x", i), Created: time.Now()}
		if _, err := s.PutMessage(b.Context(), benchScope, r); err != nil {
			b.Fatal(err)
		}
		reply := &a2a.Message{MessageId: "r" + id[1:], ContextId: "c" + id[1:], Role: a2a.Role_ROLE_AGENT,
			Parts: []*a2a.Part{{Content: &a2a.Part_Text{Text: "echo: hello"}}}}
		if err := s.SetMessageReply(b.Context(), benchScope, id, reply); err != nil {
			b.Fatal(err)
		}
	})
}
