package equivalence_test

import (
	"testing"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
)

// TestCrossBinding: tasks created over one binding are read, listed,
// canceled and subscribed to over every binding, with equal content (the
// same task, so byte-for-byte equal messages, identifiers and timestamps
// included).
func TestCrossBinding(t *testing.T) {
	for _, creator := range bindings {
		t.Run(creator, func(t *testing.T) {
			t.Parallel()
			e := start(t, plain)
			mk := &caller{t: t, e: e, b: creator, z: newNormalizer()}
			done := mk.task(send("hello"))
			r := send("input-required")
			r.Message.ContextId = done.GetContextId()
			mk.task(r)
			toCancel := map[string]string{}
			for _, b := range bindings {
				toCancel[b] = mk.task(send("input-required")).GetId()
			}
			watched := mk.task(send("auth-required")).GetId()

			events := subscribeEverywhere(t, e, mk, watched)

			wantGet := mk.ok("GetTask", getTask(done.GetId())).value
			if !proto.Equal(wantGet, done) {
				t.Fatalf("GetTask over %s differs from the SendMessage result", creator)
			}
			wantList := mk.ok("ListTasks", &a2a.ListTasksRequest{ContextId: done.GetContextId(), IncludeArtifacts: proto.Bool(true)}).value
			if n := len(wantList.(*a2a.ListTasksResponse).GetTasks()); n != 2 {
				t.Fatalf("the context lists %d tasks, want 2", n)
			}

			for _, reader := range bindings {
				t.Run(reader, func(t *testing.T) {
					c := &caller{t: t, e: e, b: reader, z: newNormalizer()}
					t.Run("GetTask", func(t *testing.T) {
						c.t = t
						sameMessage(t, c.ok("GetTask", getTask(done.GetId())).value, wantGet, creator)
					})
					t.Run("ListTasks", func(t *testing.T) {
						c.t = t
						sameMessage(t, c.ok("ListTasks", &a2a.ListTasksRequest{ContextId: done.GetContextId(), IncludeArtifacts: proto.Bool(true)}).value, wantList, creator)
					})
					t.Run("CancelTask", func(t *testing.T) {
						c.t = t
						canceled := c.ok("CancelTask", cancelTask(toCancel[reader]))
						if state(canceled) != a2a.TaskState_TASK_STATE_CANCELED {
							t.Fatalf("state %v", state(canceled))
						}
						mk := &caller{t: t, e: e, b: creator, z: newNormalizer()}
						sameMessage(t, canceled.value, mk.ok("GetTask", getTask(toCancel[reader])).value, creator)
						// Cancelling again over the creator's binding returns
						// the same task.
						sameMessage(t, mk.ok("CancelTask", cancelTask(toCancel[reader])).value, canceled.value, creator)
					})
					t.Run("SubscribeToTask", func(t *testing.T) {
						got, want := events[reader], events[creator]
						if kinds(got) != "task status:CANCELED" {
							t.Fatalf("events %q", kinds(got))
						}
						if len(got) != len(want) {
							t.Fatalf("%d events, %s got %d", len(got), creator, len(want))
						}
						for i := range got {
							sameMessage(t, got[i], want[i], creator)
						}
					})
				})
			}
		})
	}
}

func sameMessage(t *testing.T, got, want proto.Message, other string) {
	t.Helper()
	if !proto.Equal(got, want) {
		t.Errorf("differs from the same read over %s:\n%s\nwant:\n%s", other, prototext.Format(got), prototext.Format(want))
	}
}

// subscribeEverywhere subscribes to the task watched over every binding,
// then cancels it over mk's, and returns the events each binding received.
func subscribeEverywhere(t *testing.T, e *env, mk *caller, watched string) map[string][]*a2a.StreamResponse {
	t.Helper()
	streams := map[string]*stream{}
	for _, b := range bindings {
		c := &caller{t: t, e: e, b: b, z: newNormalizer()}
		streams[b] = openUntil(c, "SubscribeToTask", subscribe(watched), func(*a2a.StreamResponse) bool { return true })
	}
	mk.ok("CancelTask", cancelTask(watched))
	events := map[string][]*a2a.StreamResponse{}
	for b, s := range streams {
		out := s.drain()
		if out.err != nil {
			t.Fatalf("subscription over %s ended with %s", b, out.err)
		}
		events[b] = out.events
	}
	return events
}
