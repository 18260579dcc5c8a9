package jsonrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"strconv"
	"sync/atomic"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/httpx"
	"parley.dev/parley/internal/sse"
	"parley.dev/parley/internal/transport"
)

// Transport is the client half: every operation is a POST of
// {"jsonrpc":"2.0","id":N,"method":...,"params":...} to the interface URL
// exactly as the card gives it, with numeric ids counting up from 1. It
// implements transport.Transport and is safe for concurrent use.
type Transport struct {
	url string
	httpx.Caller
	lastID atomic.Int64
}

var _ transport.Transport = (*Transport)(nil)

// NewTransport returns a transport posting to url.
func NewTransport(url string, cfg transport.Config) (*Transport, error) {
	if _, err := httpx.CheckURL(url); err != nil {
		return nil, err
	}
	return &Transport{url: url, Caller: httpx.NewCaller(cfg)}, nil
}

// Factory is the transport.Factory of this binding.
func Factory() transport.Factory {
	return transport.Factory{Binding: a2a.BindingJSONRPC, New: func(iface *a2a.AgentInterface, cfg transport.Config) (transport.Transport, error) {
		return NewTransport(iface.GetUrl(), cfg)
	}}
}

// post sends one request envelope; id is the envelope's id.
func (t *Transport) post(ctx context.Context, m *a2a.Method, req proto.Message, accept string) (int64, *http.Response, error) {
	id := t.lastID.Add(1)
	body, err := appendRequest(make([]byte, 0, 256), id, m.Name, req)
	if err != nil {
		return 0, nil, fmt.Errorf("a2a client: encoding the %s request: %w", m.Name, err)
	}
	resp, err := t.Send(ctx, m.Name, http.MethodPost, t.url, body, httpx.ContentTypeJSON, accept)
	return id, resp, err
}

// Call implements a2a.Invoker.
func (t *Transport) Call(ctx context.Context, m *a2a.Method, req proto.Message) (proto.Message, error) {
	id, resp, err := t.post(ctx, m, req, httpx.ContentTypeJSON)
	if err != nil {
		return nil, err
	}
	out := m.NewResponse()
	result, err := t.readResult(ctx, m.Name, id, resp, httpx.NoContent(out, nil))
	if err != nil {
		return nil, err
	}
	if httpx.NoContent(out, result) {
		return out, nil
	}
	if err := a2a.Unmarshal(result, out); err != nil {
		return nil, &transport.Error{Op: m.Name, URL: t.url, Phase: transport.PhaseResponse, Err: err}
	}
	return out, nil
}

// readResult reads a whole (non-stream) response and returns its result,
// or the error it carries. noResult says the operation returns nothing
// (google.protobuf.Empty), so a response without a result is success.
func (t *Transport) readResult(ctx context.Context, op string, id int64, resp *http.Response, noResult bool) (json.RawMessage, error) {
	rb, err := httpx.ReadAll(ctx, op, t.url, resp)
	if err != nil {
		return nil, err
	}
	if !httpx.Success(resp) && !isEnvelope(rb) {
		return nil, httpx.Failure(op, t.url, resp, rb)
	}
	return t.parse(op, id, rb, noResult)
}

// parse reads a response envelope and checks its id. It returns the result
// or the error the envelope carries. A response with neither result nor
// error breaks JSON-RPC 2.0 (one of the two is REQUIRED); for an
// operation that returns nothing (noResult) it is read as success all the
// same, since there is nothing it could have carried (some SDKs answer
// DeleteTaskPushNotificationConfig so).
func (t *Transport) parse(op string, id int64, body []byte, noResult bool) (json.RawMessage, error) {
	var env response
	if err := json.Unmarshal(body, &env); err != nil {
		return nil, &transport.Error{Op: op, URL: t.url, Phase: transport.PhaseResponse, Err: fmt.Errorf("not a JSON-RPC response: %w", err)}
	}
	if env.Error != nil {
		return nil, env.Error.toError()
	}
	if env.JSONRPC != "2.0" || (env.Result == nil && !noResult) {
		return nil, &transport.Error{Op: op, URL: t.url, Phase: transport.PhaseResponse, Err: httpx.BodySnippet(body)}
	}
	if got := string(bytes.TrimSpace(env.ID)); got != strconv.FormatInt(id, 10) {
		return nil, &transport.Error{Op: op, URL: t.url, Phase: transport.PhaseResponse,
			Err: fmt.Errorf("response id %s does not match request id %d", got, id)}
	}
	return env.Result, nil
}

// Stream implements a2a.Invoker.
func (t *Transport) Stream(ctx context.Context, m *a2a.Method, req proto.Message) iter.Seq2[a2a.StreamEvent, error] {
	return func(yield func(a2a.StreamEvent, error) bool) {
		id, resp, err := t.post(ctx, m, req, httpx.ContentTypeSSE)
		if err != nil {
			yield(a2a.StreamEvent{}, err)
			return
		}
		if !httpx.IsEventStream(resp) {
			// An error before the stream started comes as an ordinary
			// JSON-RPC response; so may a server's single answer.
			yield(t.single(ctx, m.Name, id, resp))
			return
		}
		for ev, err := range httpx.ReadEvents(ctx, m.Name, t.url, resp, t.eventDecoder(m.Name, id)) {
			if !yield(ev, err) {
				return
			}
		}
	}
}

// single reads a stream answered with one JSON-RPC response: an error, or
// a lone event.
func (t *Transport) single(ctx context.Context, op string, id int64, resp *http.Response) (a2a.StreamEvent, error) {
	rb, err := httpx.ReadAll(ctx, op, t.url, resp)
	if err == nil && !httpx.Success(resp) && !isEnvelope(rb) {
		err = httpx.Failure(op, t.url, resp, rb)
	}
	var result json.RawMessage
	if err == nil {
		result, err = t.parse(op, id, rb, false)
	}
	if err != nil {
		return a2a.StreamEvent{}, err
	}
	sr := &a2a.StreamResponse{}
	if err := a2a.Unmarshal(result, sr); err != nil || sr.Payload == nil {
		return a2a.StreamEvent{}, &transport.Error{Op: op, URL: t.url, Phase: transport.PhaseResponse,
			Err: fmt.Errorf("expected %s, got %q: %s", httpx.ContentTypeSSE, resp.Header.Get("Content-Type"), httpx.BodySnippet(rb))}
	}
	return a2a.StreamEvent{Response: sr}, nil
}

// eventDecoder reads each event's data as a JSON-RPC response.
func (t *Transport) eventDecoder(op string, id int64) httpx.EventDecoder {
	return func(ev sse.Event) (*a2a.StreamResponse, error) {
		result, err := t.parse(op, id, ev.Data, false)
		if err != nil {
			if te, ok := err.(*transport.Error); ok {
				te.Phase = transport.PhaseStream
			}
			return nil, err
		}
		sr := &a2a.StreamResponse{}
		if err := a2a.Unmarshal(result, sr); err != nil {
			return nil, &transport.Error{Op: op, URL: t.url, Phase: transport.PhaseStream, Err: err}
		}
		return sr, nil
	}
}
