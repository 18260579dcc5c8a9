package server

// What a caller sees of the members a newer protocol version added (the
// A2A 1.1 preview's task generation, spec §3.2.2, §3.2.7): the core
// decides a call's version once (begin, a2a.CallInfo.Served), and here,
// at the edge where every answer leaves it, a call served in an older
// version gets its answers without those members and has them cleared
// from its request, as that version treats members it does not know. The
// bindings, v0.3's included, only ever encode what they get.

import (
	"context"
	"iter"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/version"
	"parley.dev/parley/taskstore"
)

// served returns the version the call on ctx is served in, once begin
// chose it; a call with no CallInfo (the Go API in process) is served in
// the newest version served.
func (s *Server) served(ctx context.Context) string { return s.servedIn(a2a.CallInfoFrom(ctx)) }

// servedIn is served for the call whose CallInfo is ci (nil without one).
func (s *Server) servedIn(ci *a2a.CallInfo) string {
	if ci != nil && ci.Served != "" {
		return ci.Served
	}
	return s.opts.ProtocolVersions[0]
}

// taskAnswer returns t, the caller's own copy, as the call on ctx sees it,
// gen being its generation (taskstore.Generation of the sequence number
// of its last event).
func (s *Server) taskAnswer(ctx context.Context, t *a2a.Task, gen int64) *a2a.Task {
	return version.Task(s.served(ctx), t, gen)
}

// answer returns the task t as the answer to the call on ctx: with the
// last hl of its history messages (withHistory) and the generation gen as
// taskAnswer shows it. t itself is not changed. The answer is a copy of
// t, whole for a caller of the Go API, who owns what it gets, and for a
// task that may still change (frozen false: a run's task before a
// terminal state); a call that came through a binding
// (a2a.CallInfo.Decoded) gets the top of a frozen task copied and the rest
// shared (the store's task: taskstore.Tasks.GetTask; a run's task in a
// terminal state, which no event changes any more, spec §3.1.5).
func (s *Server) answer(ctx context.Context, t *a2a.Task, hl *int32, gen int64, frozen bool) *a2a.Task {
	ci := a2a.CallInfoFrom(ctx)
	if frozen && ci != nil && ci.Decoded {
		t = shallowTask(t)
	} else {
		t = a2a.CloneTask(t)
	}
	return version.Task(s.servedIn(ci), withHistory(t, hl, true), gen)
}

// answerRun is answer for the run's task as it is now, with its
// generation; callers hold r.mu.
func (s *Server) answerRun(ctx context.Context, r *run, hl *int32) *a2a.Task {
	return s.answer(ctx, r.task, hl, taskstore.Generation(r.seq), a2a.IsTerminal(r.task.GetStatus().GetState()))
}

// shallowTask copies the top of t: the copy shares its status, artifacts,
// history, metadata and unknown fields, and may be given a shorter history
// or another generation without changing t.
func shallowTask(t *a2a.Task) *a2a.Task {
	c := &a2a.Task{Id: t.Id, ContextId: t.ContextId, Status: t.Status, Artifacts: t.Artifacts,
		History: t.History, Metadata: t.Metadata, Generation: t.Generation, Timeline: t.Timeline}
	if u := t.ProtoReflect().GetUnknown(); len(u) > 0 {
		c.ProtoReflect().SetUnknown(u)
	}
	return c
}

// viewStream returns the stream seq as the call on ctx sees it. Events
// carry no generation (spec §3.2.7) as the core shares them: a call served
// in a version that shows generations gets each event with its own, the
// generation of its sequence number (taskstore.Generation); any other
// call gets the events as they are, at no cost.
func (s *Server) viewStream(ctx context.Context, seq iter.Seq2[a2a.StreamEvent, error]) iter.Seq2[a2a.StreamEvent, error] {
	if !s.generations {
		return seq // no version served shows generations
	}
	return func(yield func(a2a.StreamEvent, error) bool) {
		decided, shows := false, false
		seq(func(ev a2a.StreamEvent, err error) bool {
			if err == nil && ev.Response != nil && ev.Seq != 0 {
				if !decided { // the stream's first item comes after begin chose the version
					decided, shows = true, version.ShowsGeneration(s.served(ctx))
				}
				if shows {
					ev = withGeneration(ev)
				}
			}
			return yield(ev, err)
		})
	}
}

// generationKey is the key of an event's view with its generation in the
// event's a2a.EventCache.
const generationKey = "parley.view.generation"

// withGeneration returns ev carrying its generation. The copy is made
// once for an event that several streams share, and shared by them with
// an encoding cache of its own: it is kept in the event's cache, as an
// encoding would be.
func withGeneration(ev a2a.StreamEvent) a2a.StreamEvent {
	gen := taskstore.Generation(ev.Seq)
	twin, _ := ev.Cache.Load(ev.Response, generationKey, func() (any, error) {
		r := version.WithGeneration(ev.Response, gen)
		return a2a.StreamEvent{Response: r, Cache: a2a.NewEventCache(r)}, nil
	})
	t := twin.(a2a.StreamEvent)
	if !ev.Cache.Holds(ev.Response) {
		t.Cache = nil // made for this stream alone
	}
	ev.Response, ev.Cache = t.Response, t.Cache
	return ev
}
