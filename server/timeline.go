package server

// The task timeline of the A2A 1.1 preview (spec PR #2129 §3.2.8): a task
// answered to a call served in a version that shows generations carries
// its timeline (the last timelineLength entries; all of them when unset)
// and its artifacts' start and end generations, read from the task's
// timeline base and event log (taskstore.Timeline) after the answer is
// made, outside the run's lock. Answers in 1.0 and 0.3 are not touched, and their requests'
// timelineLength is cleared as a member they do not know.

import (
	"context"
	"errors"
	"slices"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/version"
	"parley.dev/parley/taskstore"
)

// timelinePage is how many logged events one store read returns while a
// timeline is built. It is larger than a resume's page: a timeline reads
// the whole log at once, and a SQL store reads whole rows (a row holds a
// batch of chunks, up to hundreds) to return a page, so small pages read
// the rows at a page's end again and again; it still bounds what one read
// holds in memory.
const timelinePage = 4096

// timelined gives t, the caller's answer to the call on ctx, its timeline
// (the last n entries) and its artifacts' generations, when the call is
// served in a version that shows them; t's generation (which that version
// shows) bounds the log read. A log whose start is gone without a base
// (pruned by an older Parley) gives no timeline and no artifact
// generations rather than a timeline without its start.
// t's artifacts are replaced by copies (they may be shared); its
// timeline is the caller's own, as answer makes the task.
func (s *Server) timelined(ctx context.Context, scope taskstore.Scope, t *a2a.Task, n *int32) error {
	if t == nil || !s.generations || !version.ShowsGeneration(s.served(ctx)) {
		return nil
	}
	if n != nil && *n == 0 && len(t.Artifacts) == 0 {
		return nil
	}
	tl, err := s.readTimeline(ctx, scope, t.Id, uint64(t.GetGeneration()), n)
	switch {
	case errors.Is(err, taskstore.ErrPruned), errors.Is(err, taskstore.ErrNotFound):
		return nil // no longer kept, or removed meanwhile: no timeline
	case err != nil:
		return a2a.Internal(err)
	}
	t.Timeline = tl.Last(n)
	if ci := a2a.CallInfoFrom(ctx); ci == nil || !ci.Decoded {
		// The entries share the logged events' messages and statuses (a
		// store may share them with the running task, taskstore.Events):
		// a binding only encodes them, but a caller of the Go API owns
		// its answer (see answer) and gets copies.
		t.Timeline = a2a.CloneTask(&a2a.Task{Timeline: t.Timeline}).Timeline
	}
	if len(t.Artifacts) > 0 {
		as := make([]*a2a.Artifact, len(t.Artifacts))
		for i, a := range t.Artifacts {
			sp := tl.Span(a.GetArtifactId())
			as[i] = &a2a.Artifact{ArtifactId: a.ArtifactId, Name: a.Name, Description: a.Description, Parts: a.Parts,
				Metadata: a.Metadata, Extensions: a.Extensions, StartGeneration: sp.Start, EndGeneration: sp.End}
		}
		t.Artifacts = as
	}
	return nil
}

// timelineReads is how many times readTimeline reads a timeline whose
// log was pruned past its base meanwhile before it gives up.
const timelineReads = 3

// readTimeline reads the task's timeline up to event upto: its base (what
// its pruned events said, taskstore.Fold), then the logged events
// after it. A prune between the two reads moves the base on and the log's
// start past it (taskstore.ErrPruned): the read starts again.
func (s *Server) readTimeline(ctx context.Context, scope taskstore.Scope, id string, upto uint64, n *int32) (*taskstore.Timeline, error) {
	var err error
	for range timelineReads {
		var tl *taskstore.Timeline
		tl, err = s.readTimelineOnce(ctx, scope, id, upto, n)
		if !errors.Is(err, taskstore.ErrPruned) || errors.Is(err, taskstore.ErrTimelineLost) {
			return tl, err // read, or never to be read
		}
	}
	return nil, err
}

// readTimelineOnce is one read of readTimeline. A base past upto (an
// answer read before a prune that outran it) gives its entries up to
// upto, and no end to an artifact it ends after upto.
func (s *Server) readTimelineOnce(ctx context.Context, scope taskstore.Scope, id string, upto uint64, n *int32) (*taskstore.Timeline, error) {
	base, err := s.store.TimelineBase(ctx, scope, id)
	if err != nil {
		return nil, err
	}
	tl := &taskstore.Timeline{Keep: n} // holds about the last n entries, not the whole log's
	after, err := tl.Start(base)
	if err != nil {
		return nil, err
	}
	if after > upto {
		end := taskstore.Generation(upto)
		tl.Entries = slices.DeleteFunc(tl.Entries, func(e *a2a.TimelineEntry) bool { return e.Generation > end })
		for id, sp := range tl.Spans {
			if sp.End > end || -sp.End > end {
				// Ended, or updated, after upto: it streamed at upto (as
				// far as the base tells; an end at or before upto that a
				// terminal state after it gave is kept).
				sp.End = 0
				tl.Spans[id] = sp
			}
		}
	}
	for after < upto {
		evs, err := s.store.Events(ctx, scope, id, after, min(timelinePage, int(upto-after)))
		if err != nil {
			return nil, err
		}
		last := after
		for _, ev := range evs {
			if ev.Seq > last && ev.Seq <= upto {
				tl.Add(ev)
				last = ev.Seq
			}
		}
		if last == after {
			break // the log ended early: the entries it had
		}
		after = last
	}
	return tl, nil
}
