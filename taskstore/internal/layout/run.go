package layout

import (
	"slices"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
)

// EncodeRun encodes what an AppendBatch of evs writes, each event as
// EncodeAppend does, but for one thing when the batch is a run (status
// updates and artifact updates only, what the server pipelines while an
// agent streams): the artifact updates of one artifact are joined into
// one chunk, which the first of them carries; the others are Joined. The
// joined chunk is what the updates leave when taskstore.Apply applies
// them one after the other to any task: the parts of the appends after
// the last replacing update (or the first update), appended to it, and
// the last name and description given; it replaces its artifact when one
// of them did, and is appended otherwise. So a run costs one row per
// artifact, not per chunk, and a long stream's rows grow with its writes,
// not its chunks.
func EncodeRun(evs []taskstore.Event) ([]Append, error) {
	joined := joinRun(evs)
	out := make([]Append, len(evs))
	for i, ev := range evs {
		var err error
		if joined == nil || ev.Response.GetArtifactUpdate() == nil {
			out[i], err = EncodeAppend(ev)
		} else {
			c := joined[i]
			out[i], err = encodeAppend(ev, c.a, c.appendTo)
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// joinedChunk is the chunk of one artifact that a run writes.
type joinedChunk struct {
	a        *a2a.Artifact
	appendTo bool
	own      bool // a is joinRun's, not an event's
}

// joinRun returns, for each artifact update of the run evs, the chunk it
// carries: the joined chunk of its artifact on the first update of it, a
// nil artifact on the others. It returns nil when evs is not a run.
func joinRun(evs []taskstore.Event) []joinedChunk {
	for _, ev := range evs {
		if ev.Message != nil || (ev.Response.GetStatusUpdate() == nil && ev.Response.GetArtifactUpdate() == nil) {
			return nil
		}
	}
	out := make([]joinedChunk, len(evs))
	first := make(map[string]int, 1)
	for i, ev := range evs {
		u := ev.Response.GetArtifactUpdate()
		if u.GetArtifact() == nil {
			continue // a status update, or an update EncodeAppend refuses
		}
		id := u.Artifact.GetArtifactId()
		j, seen := first[id]
		switch c := &out[j]; {
		case !seen:
			first[id] = i
			out[i] = joinedChunk{a: u.Artifact, appendTo: u.Append}
		case !u.Append:
			*c = joinedChunk{a: u.Artifact}
		default:
			if !c.own {
				c.a, c.own = shallowArtifact(c.a), true
			}
			a2a.AppendChunk(c.a, u.Artifact)
		}
	}
	return out
}

// shallowArtifact returns an artifact that shares everything with a but
// the list of its parts, to be appended to and encoded; a is an event's,
// and not changed.
func shallowArtifact(a *a2a.Artifact) *a2a.Artifact {
	c := &a2a.Artifact{ArtifactId: a.ArtifactId, Name: a.Name, Description: a.Description,
		Metadata: a.Metadata, Extensions: a.Extensions, Parts: slices.Clip(a.Parts)}
	if u := a.ProtoReflect().GetUnknown(); len(u) > 0 {
		c.ProtoReflect().SetUnknown(u)
	}
	return c
}
