package client

// Long polls (A2A 1.1, spec §3.2.7 "Long-Polling", §3.5.1): GetTask with
// currentGeneration set is held by the server until the task's
// generation passes it. currentGeneration exists in 1.1 only, and this
// client speaks 1.0 (A2A-Version: 1.0), so a GetTask that sets it is sent
// as a 1.1 call to an interface the card declares at 1.1 (the preview's
// twin of a 1.0 interface: same binding, URL and tenant); elsewhere it is
// sent as it is, and a 1.0 server answers at once.

import (
	"context"
	"errors"
	"iter"
	"time"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/streamctx"
	"parley.dev/parley/internal/version"
)

// ErrNoGeneration is WaitForChange's error when the agent reports no task
// generation: it does not serve A2A 1.1, or not to this client (spec
// §3.2.7: a generation of 0 means the field is not implemented, and must
// not be used for long polls). WaitForCompletion follows a task without
// it.
var ErrNoGeneration = errors.New("a2a client: the agent reports no task generation (it does not serve A2A 1.1, whose GetTask long-polls)")

// WaitForChange returns the task req names once it has changed: a long
// poll (spec §3.2.7, §3.5.1). With req.CurrentGeneration unset it reads
// the task's generation first, and waits for the next change after it;
// set, it waits for a generation above it (a task already past it is
// returned at once). A task that is terminal is returned as it is, since
// it will not change again.
//
// The server holds each GetTask until the task changes, or answers the
// task unchanged at a timeout of its own (Parley's default is 30 s);
// WaitForChange then asks again, pacing itself by Options.PollInterval
// when the server answers unchanged tasks at once. Nothing times the
// call out but ctx (and a Timeout set on Options.HTTPClient, which must
// then be longer than the server's hold). Against an agent whose card
// declares no 1.1 interface, or whose answers carry no generation, it
// returns ErrNoGeneration.
func (c *Client) WaitForChange(ctx context.Context, req *a2a.GetTaskRequest) (*a2a.Task, error) {
	if !c.speaksPreview() {
		return nil, ErrNoGeneration
	}
	r := proto.Clone(req).(*a2a.GetTaskRequest)
	if r.CurrentGeneration == nil {
		// Every task's generation is 1 or more: a poll from 0 is answered
		// at once, with the generation.
		r.CurrentGeneration = proto.Int64(0)
		t, err := c.GetTask(ctx, r)
		if err != nil {
			return nil, err
		}
		if t.GetGeneration() == 0 {
			return nil, ErrNoGeneration
		}
		if a2a.IsTerminal(t.GetStatus().GetState()) {
			return t, nil
		}
		r.CurrentGeneration = proto.Int64(t.GetGeneration())
	}
	poll := c.poll
	for {
		start := time.Now()
		t, err := c.GetTask(ctx, r)
		switch {
		case err != nil:
			return nil, err
		case t.GetGeneration() == 0:
			return nil, ErrNoGeneration
		case t.GetGeneration() > r.GetCurrentGeneration(), a2a.IsTerminal(t.GetStatus().GetState()):
			return t, nil
		}
		if time.Since(start) >= poll {
			poll = c.poll // held: the server long-polls
			continue
		}
		// Answered unchanged at once: a server that does not hold, or
		// will not now (it is shutting down). Poll gently instead.
		if err := sleep(ctx, jitter(poll)); err != nil {
			return nil, err
		}
		poll = min(2*poll, maxPollInterval)
	}
}

// speaksPreview reports whether one of the client's interfaces takes the
// 1.1 preview's requests, long polls among them (the card declares it at
// 1.1).
func (c *Client) speaksPreview() bool {
	for _, cd := range c.cands {
		if _, ok := cd.t.(previewTransport); ok {
			return true
		}
	}
	return false
}

// withPreview returns t, for the interface in of card, sending the
// requests that set a member only 1.1 has (a long poll, a conditional
// send) as 1.1 calls when the card declares in's twin at 1.1.
func withPreview(card *a2a.AgentCard, in *a2a.AgentInterface, t Transport) Transport {
	if !versionOK(in.GetProtocolVersion()) {
		return t // a v0.3 interface
	}
	if version.HasTwin(card.GetSupportedInterfaces(), in, version.V11) {
		return previewTransport{t}
	}
	return t
}

// previewTransport sends the requests that set a member only 1.1 has as 1.1
// calls: a GetTask that sets currentGeneration (a long poll), a
// SendMessage or SendStreamingMessage whose configuration sets
// ifGenerationMatch (a conditional send).
type previewTransport struct{ Transport }

// Call implements a2a.Invoker.
func (l previewTransport) Call(ctx context.Context, m *a2a.Method, req proto.Message) (proto.Message, error) {
	return l.Transport.Call(asked11(ctx, req), m, req)
}

// Stream implements a2a.Invoker.
func (l previewTransport) Stream(ctx context.Context, m *a2a.Method, req proto.Message) iter.Seq2[a2a.StreamEvent, error] {
	return l.Transport.Stream(asked11(ctx, req), m, req)
}

// asked11 returns ctx asking for a 1.1 call when req sets a member only
// 1.1 has.
func asked11(ctx context.Context, req proto.Message) context.Context {
	if version.UsesGeneration(req) {
		return streamctx.WithVersion(ctx, version.V11)
	}
	return ctx
}
