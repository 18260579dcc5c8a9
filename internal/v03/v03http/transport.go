package v03http

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
	"parley.dev/parley/internal/v03"
)

// The client halves: a v1.0 call (method table, v1.0 request) sent to a
// v0.3 agent and its answer read back as v1.0, so Parley's client offers
// the same Go API and typed errors (*a2a.Error) whatever the version.

// v03Config copies cfg with A2A-Version 0.3 (spec §3.6.2).
func v03Config(cfg transport.Config) transport.Config {
	h := cfg.Header.Clone()
	if h == nil {
		h = http.Header{}
	}
	h.Set(httpx.HeaderVersion, v03.ProtocolVersion)
	cfg.Header = h
	return cfg
}

// JSONRPCTransport speaks v0.3 JSON-RPC to one URL.
type JSONRPCTransport struct {
	url string
	httpx.Caller
	lastID atomic.Int64
}

var _ transport.Transport = (*JSONRPCTransport)(nil)

// NewJSONRPCTransport returns a v0.3 JSON-RPC transport posting to url.
func NewJSONRPCTransport(url string, cfg transport.Config) (*JSONRPCTransport, error) {
	if _, err := httpx.CheckURL(url); err != nil {
		return nil, err
	}
	return &JSONRPCTransport{url: url, Caller: httpx.NewCaller(v03Config(cfg))}, nil
}

// JSONRPCFactory is the factory of the v0.3 JSON-RPC transport, for
// interfaces at protocol version 0.3.
func JSONRPCFactory() transport.Factory {
	return transport.Factory{Binding: a2a.BindingJSONRPC, Version: v03.ProtocolVersion,
		New: func(in *a2a.AgentInterface, cfg transport.Config) (transport.Transport, error) {
			return NewJSONRPCTransport(in.GetUrl(), cfg)
		}}
}

func (t *JSONRPCTransport) post(ctx context.Context, m *a2a.Method, req proto.Message, accept string) (int64, *http.Response, error) {
	method, params, err := v03.EncodeRequest(m, req)
	if err != nil {
		return 0, nil, err
	}
	id := t.lastID.Add(1)
	env := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		env["params"] = params
	}
	body, err := json.Marshal(env)
	if err != nil {
		return 0, nil, fmt.Errorf("a2a client: encoding the %s request: %w", method, err)
	}
	resp, err := t.Send(ctx, m.Name, http.MethodPost, t.url, body, httpx.ContentTypeJSON, accept)
	return id, resp, err
}

// rpcResponse is a v0.3 JSON-RPC response.
type rpcResponse struct {
	JSONRPC string           `json:"jsonrpc"`
	ID      json.RawMessage  `json:"id"`
	Result  json.RawMessage  `json:"result"`
	Error   *v03.ErrorObject `json:"error"`
}

// parse reads a response envelope: the result, or the error it carries.
func (t *JSONRPCTransport) parse(op string, id int64, body []byte, phase transport.Phase) (json.RawMessage, error) {
	var env rpcResponse
	if err := json.Unmarshal(body, &env); err != nil {
		return nil, &transport.Error{Op: op, URL: t.url, Phase: phase, Err: fmt.Errorf("not a JSON-RPC response: %w", err)}
	}
	if env.Error != nil {
		return nil, v03.ErrorToV1(*env.Error)
	}
	if got := string(bytes.TrimSpace(env.ID)); got != strconv.FormatInt(id, 10) && got != `"`+strconv.FormatInt(id, 10)+`"` {
		return nil, &transport.Error{Op: op, URL: t.url, Phase: phase, Err: fmt.Errorf("response id %s does not match request id %d", got, id)}
	}
	return env.Result, nil
}

// Call implements a2a.Invoker.
func (t *JSONRPCTransport) Call(ctx context.Context, m *a2a.Method, req proto.Message) (proto.Message, error) {
	id, resp, err := t.post(ctx, m, req, httpx.ContentTypeJSON)
	if err != nil {
		return nil, err
	}
	rb, err := httpx.ReadAll(ctx, m.Name, t.url, resp)
	if err != nil {
		return nil, err
	}
	result, err := t.parse(m.Name, id, rb, transport.PhaseResponse)
	if err != nil {
		if _, ok := err.(*transport.Error); ok && !httpx.Success(resp) {
			return nil, httpx.Failure(m.Name, t.url, resp, rb)
		}
		return nil, err
	}
	return v03.DecodeResult(m, result)
}

// Stream implements a2a.Invoker.
func (t *JSONRPCTransport) Stream(ctx context.Context, m *a2a.Method, req proto.Message) iter.Seq2[a2a.StreamEvent, error] {
	return func(yield func(a2a.StreamEvent, error) bool) {
		id, resp, err := t.post(ctx, m, req, httpx.ContentTypeSSE)
		if err != nil {
			yield(a2a.StreamEvent{}, err)
			return
		}
		if !httpx.IsEventStream(resp) {
			rb, err := httpx.ReadAll(ctx, m.Name, t.url, resp)
			if err == nil {
				var result json.RawMessage
				if result, err = t.parse(m.Name, id, rb, transport.PhaseResponse); err == nil {
					var sr *a2a.StreamResponse
					if sr, err = v03.DecodeEvent(result, false); err == nil {
						yield(a2a.StreamEvent{Response: sr}, nil)
						return
					}
				}
			}
			yield(a2a.StreamEvent{}, err)
			return
		}
		decode := func(ev sse.Event) (*a2a.StreamResponse, error) {
			result, err := t.parse(m.Name, id, ev.Data, transport.PhaseStream)
			if err != nil {
				return nil, err
			}
			return v03.DecodeEvent(result, false)
		}
		for ev, err := range httpx.ReadEvents(ctx, m.Name, t.url, resp, decode) {
			ev.Seq = 0 // v0.3 has no resumable event numbers
			if !yield(ev, err) {
				return
			}
		}
	}
}
