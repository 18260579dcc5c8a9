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
)

// served returns the version the call on ctx is served in, once begin
// chose it; a call with no CallInfo (the Go API in process) is served in
// the newest version served.
func (s *Server) served(ctx context.Context) string {
	if ci := a2a.CallInfoFrom(ctx); ci != nil && ci.Served != "" {
		return ci.Served
	}
	return s.opts.ProtocolVersions[0]
}

// taskAnswer returns t, the caller's own copy, as the call on ctx sees it.
func (s *Server) taskAnswer(ctx context.Context, t *a2a.Task) *a2a.Task {
	return version.Task(s.served(ctx), t)
}

// viewStream returns the stream seq as the call on ctx sees it: each
// event as its version has it (version.Event).
func (s *Server) viewStream(ctx context.Context, seq iter.Seq2[a2a.StreamEvent, error]) iter.Seq2[a2a.StreamEvent, error] {
	return func(yield func(a2a.StreamEvent, error) bool) {
		var v string
		seq(func(ev a2a.StreamEvent, err error) bool {
			if err == nil && ev.Response != nil {
				if v == "" {
					v = s.served(ctx) // chosen by now: the stream's first item comes after begin
				}
				ev = viewEvent(v, ev)
			}
			return yield(ev, err)
		})
	}
}

// plainKey is the key of an event's view without its generation in the
// event's a2a.EventCache.
const plainKey = "parley.view.plain"

// viewEvent returns ev as a call served in v sees it. The copy an older
// version needs of an event that several streams share is made once, and
// shared by those streams with an encoding cache of its own: it is kept
// in the event's cache, as an encoding would be.
func viewEvent(v string, ev a2a.StreamEvent) a2a.StreamEvent {
	if version.Event(v, ev.Response) == ev.Response {
		return ev
	}
	twin, _ := ev.Cache.Load(ev.Response, plainKey, func() (any, error) {
		r := version.Plain(ev.Response)
		return a2a.StreamEvent{Response: r, Cache: a2a.NewEventCache(r)}, nil
	})
	t := twin.(a2a.StreamEvent)
	if !ev.Cache.Holds(ev.Response) {
		t.Cache = nil // made for this stream alone
	}
	ev.Response, ev.Cache = t.Response, t.Cache
	return ev
}
