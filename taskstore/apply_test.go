package taskstore_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
)

// TestApplyBorrowingAsApply: a task kept by ApplyBorrowing, which shares
// the events' artifacts, equals the one Apply keeps with copies, after
// every event of random runs of status updates, new artifacts, appends
// and replacements; and no event is changed by being applied.
func TestApplyBorrowingAsApply(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for run := range 200 {
		want := &a2a.Task{Id: "t", ContextId: "c", Status: &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_WORKING}}
		got := proto.Clone(want).(*a2a.Task)
		var borrowed []*a2a.Artifact
		var evs, sent []*a2a.StreamResponse
		for i := range 30 {
			var ev *a2a.StreamResponse
			if rng.IntN(6) == 0 {
				ev = &a2a.StreamResponse{Payload: &a2a.StreamResponse_StatusUpdate{StatusUpdate: &a2a.TaskStatusUpdateEvent{
					TaskId: "t", ContextId: "c", Status: &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_WORKING,
						Message: &a2a.Message{MessageId: fmt.Sprint("m", i), Role: a2a.Role_ROLE_AGENT, Parts: []*a2a.Part{a2a.TextPart("s")}}},
				}}}
			} else {
				a := &a2a.Artifact{ArtifactId: fmt.Sprint("a", rng.IntN(3)), Parts: []*a2a.Part{a2a.TextPart(fmt.Sprint(run, ".", i))}}
				if rng.IntN(3) == 0 {
					a.Name = fmt.Sprint("n", i)
				}
				ev = &a2a.StreamResponse{Payload: &a2a.StreamResponse_ArtifactUpdate{ArtifactUpdate: &a2a.TaskArtifactUpdateEvent{
					TaskId: "t", ContextId: "c", Artifact: a, Append: rng.IntN(2) == 0,
				}}}
			}
			evs = append(evs, ev)
			sent = append(sent, proto.Clone(ev).(*a2a.StreamResponse))
			wk := taskstore.Apply(want, proto.Clone(ev).(*a2a.StreamResponse))
			gk := taskstore.ApplyBorrowing(got, ev, &borrowed)
			if wk != gk {
				t.Fatalf("run %d event %d: known %v, Apply %v", run, i, gk, wk)
			}
			if !proto.Equal(got, want) {
				t.Fatalf("run %d event %d: task\n%v\nApply:\n%v", run, i, got, want)
			}
		}
		for i := range evs {
			if !proto.Equal(evs[i], sent[i]) {
				t.Fatalf("run %d: event %d changed:\n%v\nwas\n%v", run, i, evs[i], sent[i])
			}
		}
	}
}
