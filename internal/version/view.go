package version

import "parley.dev/parley/a2a"

// What a version sees of the members a newer one added. The core calls
// these at its edge, once per request and per answer, with the version it
// serves the call in (a2a.CallInfo.Served); no binding does.

// generationMembers returns the request members of req that only
// versions showing generations have (spec §3.2.7, §3.2.8):
// GetTaskRequest.currentGeneration and timelineLength,
// SendMessageConfiguration.ifGenerationMatch and timelineLength,
// ListTasksRequest.timelineLength; nil members for a request without
// them.
func generationMembers(req any) (gen **int64, timeline **int32) {
	switch r := req.(type) {
	case *a2a.GetTaskRequest:
		return &r.CurrentGeneration, &r.TimelineLength
	case *a2a.ListTasksRequest:
		return nil, &r.TimelineLength
	case *a2a.SendMessageRequest:
		if c := r.GetConfiguration(); c != nil {
			return &c.IfGenerationMatch, &c.TimelineLength
		}
	}
	return nil, nil
}

// ClearRequest clears, for a call served in v, the request members v does
// not have, so the core never acts on them: a v1.0 caller's
// currentGeneration, ifGenerationMatch or timelineLength is a member v1.0
// does not know, and it treats such members by ignoring them. req is
// changed in place.
func ClearRequest(v string, req any) {
	if ShowsGeneration(v) {
		return
	}
	gen, timeline := generationMembers(req)
	if gen != nil {
		*gen = nil
	}
	if timeline != nil {
		*timeline = nil
	}
}

// UsesGeneration reports whether req sets a member only versions that
// show generations have, so that a client must send it in such a version.
func UsesGeneration(req any) bool {
	gen, timeline := generationMembers(req)
	return (gen != nil && *gen != nil) || (timeline != nil && *timeline != nil)
}

// Task sets, for a call served in v, t's generation to gen when v shows
// generations (spec §3.2.7), and clears it and the timeline (§3.2.8)
// otherwise. t must be the
// caller's own copy.
func Task(v string, t *a2a.Task, gen int64) *a2a.Task {
	if t == nil {
		return nil
	}
	if ShowsGeneration(v) {
		t.Generation = gen
	} else {
		t.Generation, t.Timeline = 0, nil
	}
	return t
}

// WithGeneration returns a copy of the stream event resp carrying the
// generation gen (spec §3.2.7), for a version that shows generations.
// Events are shared by every stream and never changed, so the copy is
// shallow: only its generation differs. A direct reply (a Message), which
// has none, and gen 0 give resp itself.
func WithGeneration(resp *a2a.StreamResponse, gen int64) *a2a.StreamResponse {
	if gen == 0 {
		return resp
	}
	switch p := resp.GetPayload().(type) {
	case *a2a.StreamResponse_StatusUpdate:
		u := p.StatusUpdate
		return &a2a.StreamResponse{Payload: &a2a.StreamResponse_StatusUpdate{StatusUpdate: &a2a.TaskStatusUpdateEvent{
			TaskId: u.TaskId, ContextId: u.ContextId, Status: u.Status, Metadata: u.Metadata, Generation: gen}}}
	case *a2a.StreamResponse_ArtifactUpdate:
		u := p.ArtifactUpdate
		return &a2a.StreamResponse{Payload: &a2a.StreamResponse_ArtifactUpdate{ArtifactUpdate: &a2a.TaskArtifactUpdateEvent{
			TaskId: u.TaskId, ContextId: u.ContextId, Artifact: u.Artifact, Append: u.Append, LastChunk: u.LastChunk,
			Metadata: u.Metadata, Generation: gen}}}
	case *a2a.StreamResponse_Task:
		t := p.Task
		return &a2a.StreamResponse{Payload: &a2a.StreamResponse_Task{Task: &a2a.Task{
			Id: t.Id, ContextId: t.ContextId, Status: t.Status, Artifacts: t.Artifacts, History: t.History,
			Metadata: t.Metadata, Generation: gen, Timeline: t.Timeline}}}
	}
	return resp
}
