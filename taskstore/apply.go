package taskstore

import (
	"slices"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
)

// Apply changes t as the stream event ev says, the one rule every store
// uses to keep a task's current state from its log:
//   - a status update replaces the status, and its message, when it has
//     one, is added to the history (agent messages are part of the
//     conversation, spec §4.1.1);
//   - an artifact update with append adds its parts to the artifact with
//     the same id (a2a.AppendChunk), without append replaces it by a copy;
//     an artifact whose id is new is added at the end, copied (an append to
//     an unknown artifact starts it: decision B11);
//   - a Task replaces everything;
//   - a Message changes nothing (a direct reply is not part of a task).
//
// Events are immutable (see package taskstore), so t shares what the
// event points to — the status, the status message, the appended parts —
// except an artifact it starts or replaces, which it copies, since later
// chunks change that artifact in place. Applying an event costs the size
// of the event, never that of the task. It reports whether the artifact update was for a known artifact id
// (true for every other event).
func Apply(t *a2a.Task, ev *a2a.StreamResponse) (known bool) {
	switch p := ev.GetPayload().(type) {
	case *a2a.StreamResponse_StatusUpdate:
		t.Status = p.StatusUpdate.GetStatus()
		if m := t.Status.GetMessage(); m != nil {
			t.History = append(t.History, m)
		}
	case *a2a.StreamResponse_ArtifactUpdate:
		u := p.ArtifactUpdate
		for i, a := range t.Artifacts {
			if a.ArtifactId != u.GetArtifact().GetArtifactId() {
				continue
			}
			if u.Append {
				a2a.AppendChunk(a, u.Artifact)
			} else {
				t.Artifacts[i] = a2a.CloneArtifact(u.Artifact)
			}
			return true
		}
		t.Artifacts = append(t.Artifacts, a2a.CloneArtifact(u.Artifact))
		return false
	case *a2a.StreamResponse_Task:
		proto.Reset(t)
		proto.Merge(t, p.Task)
	}
	return true
}

// ApplyBorrowing is Apply for a task that may share the artifacts of the
// events applied to it: an artifact update without append, or one whose
// artifact id is new, puts the event's artifact itself in t, and adds it
// to *borrowed; an append to a borrowed artifact first replaces it in t
// (and in *borrowed, by nil) by a copy of its own, which later chunks
// extend in place as Apply's do. Events are immutable, so the artifacts
// borrowed never change: t is as Apply would leave it, at the cost of the
// chunks appended, without a copy of each artifact sent whole (spec
// §4.2.2: the artifact of a TaskArtifactUpdateEvent). Every other event is
// applied by Apply. The artifacts of t not in *borrowed must be t's own.
func ApplyBorrowing(t *a2a.Task, ev *a2a.StreamResponse, borrowed *[]*a2a.Artifact) (known bool) {
	u := ev.GetArtifactUpdate()
	if u == nil {
		return Apply(t, ev)
	}
	for i, a := range t.Artifacts {
		if a.ArtifactId != u.GetArtifact().GetArtifactId() {
			continue
		}
		j := slices.Index(*borrowed, a)
		if !u.Append {
			t.Artifacts[i] = u.Artifact
			if j >= 0 {
				(*borrowed)[j] = u.Artifact
			} else {
				*borrowed = append(*borrowed, u.Artifact)
			}
			return true
		}
		if j >= 0 {
			a = a2a.CloneArtifact(a)
			t.Artifacts[i] = a
			(*borrowed)[j] = nil
		}
		a2a.AppendChunk(a, u.Artifact)
		return true
	}
	t.Artifacts = append(t.Artifacts, u.Artifact)
	*borrowed = append(*borrowed, u.Artifact)
	return false
}
