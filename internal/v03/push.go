package v03

import (
	"encoding/json"

	"parley.dev/parley/a2a"
)

// PushPayload is the body of a notification to a v0.3 configuration: a
// v0.3 Task object, as v0.3 servers post. A v1.0 outbox holds events, not
// whole tasks, so (lossy) a status update becomes the task with that
// status and without history or artifacts, an artifact update the task
// with that artifact alone and the state "working" (artifacts stream only
// while a task works), and a direct message reply a task-less message.
func PushPayload(ev *a2a.StreamResponse) ([]byte, error) {
	var out any
	switch p := ev.GetPayload().(type) {
	case *a2a.StreamResponse_Task:
		out = TaskFromV1(p.Task)
	case *a2a.StreamResponse_StatusUpdate:
		u := p.StatusUpdate
		out = &Task{Kind: KindTask, ID: u.GetTaskId(), ContextID: u.GetContextId(), Status: StatusFromV1(u.GetStatus()), Metadata: mapOf(u.GetMetadata())}
	case *a2a.StreamResponse_ArtifactUpdate:
		u := p.ArtifactUpdate
		out = &Task{Kind: KindTask, ID: u.GetTaskId(), ContextID: u.GetContextId(),
			Status:    TaskStatus{State: StateName(a2a.TaskState_TASK_STATE_WORKING)},
			Artifacts: []Artifact{ArtifactFromV1(u.GetArtifact())}}
	default:
		out = MessageFromV1(ev.GetMessage())
	}
	return json.Marshal(out)
}
