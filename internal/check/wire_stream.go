package check

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/sse"
)

// streamCtl says how long to read a stream.
type streamCtl struct {
	// settle reports whether the stream has reached the point after which
	// it must close (nil: read until the server closes or max elapses).
	settle func(evs []*event) bool
	// after is how long to wait for the server to close the stream once
	// settle said so.
	after time.Duration
	// stop reports whether to stop reading (and close) at once.
	stop func(evs []*event) bool
	// max bounds the whole read (default 10 s).
	max time.Duration
}

// stream performs a streaming operation and reads its events as ctl says.
// The connection is closed when it returns.
func (t *target) stream(ctx context.Context, method string, req proto.Message, o callOpts, ctl streamCtl) *result {
	if t.binding == a2a.BindingGRPC {
		return t.grpcStream(ctx, method, req, o, ctl)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ex, resp, rpcID, start, failed := t.do(ctx, method, req, o, true)
	if failed != nil {
		return failed
	}
	defer resp.Body.Close()
	if ex.contentType() != "text/event-stream" {
		ex.Body, _ = io.ReadAll(io.LimitReader(resp.Body, maxBody))
		ex.Elapsed = time.Since(start)
		pr := t.parse(ex, rpcID)
		if pr.ok() {
			pr.broken = "a streaming operation answered " + ex.contentType() + " instead of text/event-stream"
		}
		return pr
	}
	r := &result{ex: ex, rpcID: rpcID, idOK: true}
	take := func(ev *event) bool {
		t.decodeEvent(ev, r)
		return true
	}
	return readEvents(ctx, ex, r, start, sseEvents(resp.Body), take, ctl)
}

// sseEvents returns a function that reads the next event of an SSE body,
// io.EOF at its clean end.
func sseEvents(body io.Reader) func() (*event, error) {
	ids := &sseIDTap{r: body}
	rd := sse.NewReader(ids, maxBody)
	return func() (*event, error) {
		e, err := rd.Next()
		if err != nil {
			return nil, err
		}
		ev := &event{Data: e.Data}
		if id := ids.next(); id != nil {
			ev.ID, ev.HasID = *id, true
		}
		return ev, nil
	}
}

// readEvents reads a stream's events from next (io.EOF: the server ended
// the stream) until ctl says to stop, the server ends it, or ctx is done.
// take finishes an event and says whether it belongs in ex.Events. The
// caller closes the stream (cancels ctx) when it returns.
func readEvents(ctx context.Context, ex *exchange, r *result, start time.Time, next func() (*event, error),
	take func(*event) bool, ctl streamCtl) *result {
	type item struct {
		ev  *event
		err error
	}
	ch := make(chan item)
	go func() {
		for {
			ev, err := next()
			select {
			case ch <- item{ev, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	if ctl.max == 0 {
		ctl.max = 10 * time.Second
	}
	deadline := time.NewTimer(ctl.max)
	defer deadline.Stop()
	var settled <-chan time.Time
	defer func() { ex.Elapsed = time.Since(start) }()
	for {
		select {
		case it := <-ch:
			if it.err != nil {
				if it.err == io.EOF {
					ex.Closed = true
				} else if ctx.Err() == nil {
					ex.Err = fmt.Errorf("stream broken: %w", it.err)
				}
				return r
			}
			it.ev.At = time.Since(start)
			if !take(it.ev) {
				continue
			}
			ex.Events = append(ex.Events, it.ev)
			if ctl.stop != nil && ctl.stop(ex.Events) {
				return r
			}
			if settled == nil && ctl.settle != nil && ctl.settle(ex.Events) {
				settled = time.After(ctl.after)
			}
		case <-settled:
			return r
		case <-deadline.C:
			return r
		case <-ctx.Done():
			if ex.Err == nil {
				ex.Err = ctx.Err()
			}
			return r
		}
	}
}

// decodeEvent decodes one SSE event's data: on JSON-RPC a response
// envelope (whose id must be the request's), on HTTP+JSON a bare
// StreamResponse or an error object.
func (t *target) decodeEvent(ev *event, r *result) {
	data := ev.Data
	if t.binding == a2a.BindingJSONRPC {
		var env struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(data, &env); err != nil {
			ev.DecodeErr = err
			return
		}
		if r.rpcID != "" && string(bytes.TrimSpace(env.ID)) != r.rpcID {
			r.idOK = false
		}
		if env.Error != nil && string(env.Error) != "null" {
			ev.Err = parseRPCError(env.Error, &exchange{Status: 200, Header: http.Header{}})
			return
		}
		data = env.Result
	} else if e := restEventError(data); e != nil {
		ev.Err = e
		return
	}
	sr := &a2a.StreamResponse{}
	if err := a2a.Unmarshal(data, sr); err != nil {
		ev.DecodeErr = err
		return
	}
	ev.Resp = sr
}

// restEventError reads an HTTP+JSON event that is an error object
// ({"error": {...}}), nil for any other event.
func restEventError(data []byte) *wireError {
	var probe map[string]json.RawMessage
	if json.Unmarshal(data, &probe) != nil {
		return nil
	}
	inner, ok := probe["error"]
	if !ok {
		return nil
	}
	var s struct {
		Code int `json:"code"`
	}
	_ = json.Unmarshal(inner, &s)
	return parseRESTError(&exchange{Status: s.Code, Header: http.Header{}, Body: data})
}
