package a2a_test

import (
	"fmt"

	"parley.dev/parley/a2a"
)

// followUpStream is what a server streams after the client answered a task
// waiting in INPUT_REQUIRED: the snapshot (still INPUT_REQUIRED), then the
// agent at work, an artifact in token-sized chunks, and a new question.
func followUpStream() []a2a.StreamEvent {
	task := &a2a.Task{Id: "t-1", ContextId: "c-1", Status: &a2a.TaskStatus{
		State: a2a.StateInputRequired, Message: a2a.AgentMessage("Proceed? (yes/no)")}}
	status := func(s a2a.TaskState, text string) *a2a.StreamResponse {
		st := &a2a.TaskStatus{State: s}
		if text != "" {
			st.Message = a2a.AgentMessage(text)
		}
		return &a2a.StreamResponse{Payload: &a2a.StreamResponse_StatusUpdate{StatusUpdate: &a2a.TaskStatusUpdateEvent{
			TaskId: "t-1", ContextId: "c-1", Status: st}}}
	}
	chunk := func(text string, appendTo, last bool) *a2a.StreamResponse {
		return &a2a.StreamResponse{Payload: &a2a.StreamResponse_ArtifactUpdate{ArtifactUpdate: &a2a.TaskArtifactUpdateEvent{
			TaskId: "t-1", ContextId: "c-1", Artifact: a2a.TextArtifact("plan", text), Append: appendTo, LastChunk: last}}}
	}
	var evs []a2a.StreamEvent
	for i, r := range []*a2a.StreamResponse{
		{Payload: &a2a.StreamResponse_Task{Task: task}},
		status(a2a.StateWorking, ""),
		chunk("Step", false, false),
		chunk(" one", true, false),
		chunk(", step two.", true, true),
		status(a2a.StateInputRequired, "Run it now? (yes/no)"),
	} {
		evs = append(evs, a2a.StreamEvent{Seq: uint64(i + 5), Response: r})
	}
	return evs
}

// A client reading a follow-up stream: one switch on Kind, the question
// asked only when INPUT_REQUIRED is news and not the opening snapshot, and
// the reply addressed to the same task.
func ExampleStreamEvent() {
	for _, ev := range followUpStream() {
		switch ev.Kind() {
		case a2a.EventTask, a2a.EventStatusUpdate:
			fmt.Printf("%s %s snapshot=%v\n", ev.Kind(), ev.State(), ev.Snapshot())
		case a2a.EventArtifactUpdate:
			fmt.Printf("%s %s %q\n", ev.Kind(), ev.Artifact().GetArtifactId(), a2a.ArtifactText(ev.Artifact()))
		}
		if ev.State() == a2a.StateInputRequired && !ev.Snapshot() {
			fmt.Println("agent asks:", a2a.FirstText(ev.Message()))
			reply := a2a.UserMessageFor(ev.TaskID(), ev.ContextID(), "yes")
			fmt.Println("reply on task", reply.GetTaskId())
		}
		if ev.Final() {
			break
		}
	}
	// Output:
	// task TASK_STATE_INPUT_REQUIRED snapshot=true
	// statusUpdate TASK_STATE_WORKING snapshot=false
	// artifactUpdate plan "Step"
	// artifactUpdate plan " one"
	// artifactUpdate plan ", step two."
	// statusUpdate TASK_STATE_INPUT_REQUIRED snapshot=false
	// agent asks: Run it now? (yes/no)
	// reply on task t-1
}

// Chunks of a streamed artifact put back together: appended text joins
// without separators, and Done says when the last chunk has come.
func ExampleArtifactAssembler() {
	var arts a2a.ArtifactAssembler
	for _, ev := range followUpStream() {
		arts.Add(ev)
		if a := ev.Artifact(); a != nil {
			fmt.Printf("%q done=%v\n", arts.Text(a.GetArtifactId()), arts.Done(a.GetArtifactId()))
		}
	}
	for _, a := range arts.Artifacts() {
		fmt.Printf("%s: %s\n", a.GetArtifactId(), a2a.ArtifactText(a))
	}
	// Output:
	// "Step" done=false
	// "Step one" done=false
	// "Step one, step two." done=true
	// plan: Step one, step two.
}

// A follow-up message for a task the client holds: the task's ids are
// filled in, with a fresh messageId.
func ExampleFollowUp() {
	task := &a2a.Task{Id: "t-1", ContextId: "c-1", Status: &a2a.TaskStatus{State: a2a.StateInputRequired}}
	if a2a.IsInterrupted(task.GetStatus().GetState()) {
		m := a2a.FollowUp(task, "yes")
		fmt.Println(m.GetRole() == a2a.RoleUser, m.GetTaskId(), m.GetContextId(), a2a.FirstText(m))
	}
	// Output:
	// true t-1 c-1 yes
}
