package rest

import (
	"bytes"
	"context"
	"fmt"
	"iter"
	"net/http"
	"strings"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/httpx"
	"parley.dev/parley/internal/sse"
	"parley.dev/parley/internal/transport"
)

// Transport is the client half: one request per operation on its route
// below the interface URL (EncodeRequest). SubscribeToTask is sent as POST
// (decision B1: the spec's prose says POST). Bodies are
// application/a2a+json; error bodies are read by shape, whatever their
// content type. It implements transport.Transport and is safe for
// concurrent use.
type Transport struct {
	base string // interface URL without a trailing slash
	httpx.Caller
}

var _ transport.Transport = (*Transport)(nil)

// NewTransport returns a transport for the interface URL base.
func NewTransport(base string, cfg transport.Config) (*Transport, error) {
	if _, err := httpx.CheckURL(base); err != nil {
		return nil, err
	}
	return &Transport{base: strings.TrimRight(base, "/"), Caller: httpx.NewCaller(cfg)}, nil
}

// Factory is the transport.Factory of this binding.
func Factory() transport.Factory {
	return transport.Factory{Binding: a2a.BindingHTTPJSON, New: func(iface *a2a.AgentInterface, cfg transport.Config) (transport.Transport, error) {
		return NewTransport(iface.GetUrl(), cfg)
	}}
}

// send encodes and sends one operation; it returns the response and the
// URL it went to.
func (t *Transport) send(ctx context.Context, m *a2a.Method, req proto.Message, accept string) (*http.Response, string, error) {
	verb := ""
	if m.Name == a2a.MethodSubscribeToTask {
		verb = http.MethodPost // decision B1: the prose's verb, served by every SDK
	}
	r, err := EncodeRequest(m, req, verb)
	if err != nil {
		return nil, "", err
	}
	u := t.base + r.Path
	if r.Query != "" {
		u += "?" + r.Query
	}
	resp, err := t.Send(ctx, m.Name, r.Verb, u, r.Body, ContentType, accept)
	return resp, u, err
}

// Call implements a2a.Invoker.
func (t *Transport) Call(ctx context.Context, m *a2a.Method, req proto.Message) (proto.Message, error) {
	resp, u, err := t.send(ctx, m, req, ContentType+", "+httpx.ContentTypeJSON)
	if err != nil {
		return nil, err
	}
	rb, err := httpx.ReadAll(ctx, m.Name, u, resp)
	if err != nil {
		return nil, err
	}
	if !httpx.Success(resp) {
		return nil, httpx.Failure(m.Name, u, resp, rb)
	}
	out := m.NewResponse()
	if httpx.NoContent(out, rb) {
		return out, nil
	}
	if err := a2a.Unmarshal(rb, out); err != nil {
		return nil, &transport.Error{Op: m.Name, URL: u, Phase: transport.PhaseResponse, StatusCode: resp.StatusCode, Err: err}
	}
	return out, nil
}

// Stream implements a2a.Invoker.
func (t *Transport) Stream(ctx context.Context, m *a2a.Method, req proto.Message) iter.Seq2[a2a.StreamEvent, error] {
	return func(yield func(a2a.StreamEvent, error) bool) {
		resp, u, err := t.send(ctx, m, req, httpx.ContentTypeSSE)
		if err != nil {
			yield(a2a.StreamEvent{}, err)
			return
		}
		if !httpx.Success(resp) || !httpx.IsEventStream(resp) {
			yield(a2a.StreamEvent{}, notAStream(ctx, m.Name, u, resp))
			return
		}
		for ev, err := range httpx.ReadEvents(ctx, m.Name, u, resp, eventDecoder(m.Name, u)) {
			if !yield(ev, err) {
				return
			}
		}
	}
}

// notAStream is the error of a stream answered without SSE: the error the
// response carries, or a *transport.Error.
func notAStream(ctx context.Context, op, u string, resp *http.Response) error {
	rb, err := httpx.ReadAll(ctx, op, u, resp)
	switch {
	case err != nil:
		return err
	case !httpx.Success(resp):
		return httpx.Failure(op, u, resp, rb)
	}
	return &transport.Error{Op: op, URL: u, Phase: transport.PhaseResponse, StatusCode: resp.StatusCode,
		Err: fmt.Errorf("expected %s, got %q", httpx.ContentTypeSSE, resp.Header.Get("Content-Type"))}
}

// eventDecoder reads each event's data as a StreamResponse; an event named
// "error", or one whose data is an error body, ends the stream with that
// error.
func eventDecoder(op, u string) httpx.EventDecoder {
	return func(ev sse.Event) (*a2a.StreamResponse, error) {
		if ev.Name != "error" {
			sr := &a2a.StreamResponse{}
			if err := a2a.Unmarshal(ev.Data, sr); err == nil && sr.Payload != nil {
				return sr, nil
			} else if ev.Name == "" && !bytes.Contains(ev.Data, []byte(`"error"`)) {
				if err == nil {
					err = fmt.Errorf("event without a payload: %s", httpx.BodySnippet(ev.Data))
				}
				return nil, &transport.Error{Op: op, URL: u, Phase: transport.PhaseStream, Err: err}
			}
		}
		return nil, streamError(op, u, ev.Data)
	}
}
