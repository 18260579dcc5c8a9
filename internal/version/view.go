package version

import "parley.dev/parley/a2a"

// What a version sees of the members a newer one added. The core calls
// these at its edge, once per request and per answer, with the version it
// serves the call in (a2a.CallInfo.Served); no binding does.

// ClearRequest clears, for a call served in v, the request members v does
// not have, so the core never acts on them: a v1.0 caller's
// currentGeneration or ifGenerationMatch is a member v1.0 does not know,
// and it treats such members by ignoring them. req is changed in place.
func ClearRequest(v string, req any) {
	if ShowsGeneration(v) {
		return
	}
	switch r := req.(type) {
	case *a2a.GetTaskRequest:
		r.CurrentGeneration = nil
	case *a2a.SendMessageRequest:
		if c := r.GetConfiguration(); c != nil {
			c.IfGenerationMatch = nil
		}
	}
}

// Task clears, for a call served in v, the members of t that v does not
// have. t must be the caller's own copy.
func Task(v string, t *a2a.Task) *a2a.Task {
	if t != nil && !ShowsGeneration(v) {
		t.Generation = 0
	}
	return t
}

// Event returns the stream event resp as a call served in v sees it:
// resp itself when v shows everything resp holds, otherwise a copy
// without the members v does not have (events are shared by every
// stream and never changed, spec §3.2.7's generation included). A Task
// payload is copied shallowly: only its generation differs.
func Event(v string, resp *a2a.StreamResponse) *a2a.StreamResponse {
	if ShowsGeneration(v) || generationOf(resp) == 0 {
		return resp
	}
	return Plain(resp)
}

// Plain returns a copy of resp without a generation (resp itself when it
// has none), sharing everything else.
func Plain(resp *a2a.StreamResponse) *a2a.StreamResponse {
	switch p := resp.GetPayload().(type) {
	case *a2a.StreamResponse_StatusUpdate:
		if p.StatusUpdate.GetGeneration() != 0 {
			u := p.StatusUpdate
			return &a2a.StreamResponse{Payload: &a2a.StreamResponse_StatusUpdate{StatusUpdate: &a2a.TaskStatusUpdateEvent{
				TaskId: u.TaskId, ContextId: u.ContextId, Status: u.Status, Metadata: u.Metadata}}}
		}
	case *a2a.StreamResponse_ArtifactUpdate:
		if p.ArtifactUpdate.GetGeneration() != 0 {
			u := p.ArtifactUpdate
			return &a2a.StreamResponse{Payload: &a2a.StreamResponse_ArtifactUpdate{ArtifactUpdate: &a2a.TaskArtifactUpdateEvent{
				TaskId: u.TaskId, ContextId: u.ContextId, Artifact: u.Artifact, Append: u.Append, LastChunk: u.LastChunk, Metadata: u.Metadata}}}
		}
	case *a2a.StreamResponse_Task:
		if t := p.Task; t.GetGeneration() != 0 {
			return &a2a.StreamResponse{Payload: &a2a.StreamResponse_Task{Task: &a2a.Task{
				Id: t.Id, ContextId: t.ContextId, Status: t.Status, Artifacts: t.Artifacts, History: t.History, Metadata: t.Metadata}}}
		}
	}
	return resp
}

// generationOf returns the generation an event carries, 0 for none.
func generationOf(resp *a2a.StreamResponse) int64 {
	switch p := resp.GetPayload().(type) {
	case *a2a.StreamResponse_StatusUpdate:
		return p.StatusUpdate.GetGeneration()
	case *a2a.StreamResponse_ArtifactUpdate:
		return p.ArtifactUpdate.GetGeneration()
	case *a2a.StreamResponse_Task:
		return p.Task.GetGeneration()
	}
	return 0
}
