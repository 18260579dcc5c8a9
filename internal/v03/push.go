package v03

import (
	"encoding/json"
	"strings"

	"parley.dev/parley/a2a"
)

// versionMark is appended to the URL fragment of a push configuration
// registered over v0.3. The fragment never leaves the server (HTTP clients
// do not send it), survives every store unchanged, and is visible to v1.0
// readers, who may set it themselves to ask for v0.3 payloads.
const versionMark = "a2a-version=0.3"

// MarkURL marks a webhook URL as a v0.3 configuration's.
func MarkURL(u string) string {
	if u == "" || IsMarked(u) {
		return u
	}
	if strings.Contains(u, "#") {
		return u + "&" + versionMark
	}
	return u + "#" + versionMark
}

// IsMarked reports whether a webhook URL carries the v0.3 mark.
func IsMarked(u string) bool {
	return strings.HasSuffix(u, "#"+versionMark) || strings.HasSuffix(u, "&"+versionMark)
}

// UnmarkURL removes the v0.3 mark.
func UnmarkURL(u string) string {
	if !IsMarked(u) {
		return u
	}
	return u[:len(u)-len(versionMark)-1]
}

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
