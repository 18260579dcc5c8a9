package a2ahttp

import (
	"strconv"
	"testing"
	"time"

	"parley.dev/parley/a2a"
)

// BenchmarkWatchdogAddRemove is what the write deadline costs a request
// besides its writes: one add and one remove on the handler's watchdog,
// whose map one mutex guards, from as many goroutines as GOMAXPROCS.
func BenchmarkWatchdogAddRemove(b *testing.B) {
	d := newWatchdog(time.Minute)
	b.RunParallel(func(pb *testing.PB) {
		w := &answerWriter{}
		for pb.Next() {
			d.add(w)
			d.remove(w)
		}
	})
}

// BenchmarkAnswerSize is what the answer budget costs an answer or a
// stream event before the binding encodes it: its protobuf size.
func BenchmarkAnswerSize(b *testing.B) {
	cs := newCallers(0, 0, DefaultAnswerBudget)
	task := &a2a.Task{Id: "0b5f6a2e-9d5c-4f0e-8a51-3f1b2c4d5e6f", ContextId: "c7d8e9f0-1a2b-4c3d-8e4f-5a6b7c8d9e0f",
		Status: &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_COMPLETED}}
	task.Artifacts = []*a2a.Artifact{a2a.TextArtifact("echo", "hello")}
	task.History = []*a2a.Message{{MessageId: "m1", Role: a2a.Role_ROLE_USER, Parts: []*a2a.Part{{Content: &a2a.Part_Text{Text: "hello"}}}}}
	chunk := &a2a.StreamResponse{Payload: &a2a.StreamResponse_ArtifactUpdate{ArtifactUpdate: &a2a.TaskArtifactUpdateEvent{
		TaskId: task.Id, ContextId: task.ContextId, Append: true, Artifact: a2a.TextArtifact("stream", "chunk 17")}}}
	b.Run("task", func(b *testing.B) {
		for range b.N {
			cs.answerSize(&a2a.SendMessageResponse{Payload: &a2a.SendMessageResponse_Task{Task: task}})
		}
	})
	b.Run("chunk", func(b *testing.B) {
		for range b.N {
			cs.answerSize(chunk)
		}
	})
	big := &a2a.Task{Id: task.Id, ContextId: task.ContextId, Status: task.Status}
	for i := range 2000 {
		big.History = append(big.History, &a2a.Message{MessageId: "m" + strconv.Itoa(i), Role: a2a.Role_ROLE_USER,
			Parts: []*a2a.Part{{Content: &a2a.Part_Text{Text: "chunk " + strconv.Itoa(i)}}}})
	}
	b.Run("task of 2000 messages", func(b *testing.B) {
		for range b.N {
			cs.answerSize(big)
		}
	})
}
