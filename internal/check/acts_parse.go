package check

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"time"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
	"parley.dev/parley/internal/grpcbind"
	"parley.dev/parley/internal/httpx"
	"parley.dev/parley/internal/jsonrpc"
	"parley.dev/parley/internal/rest"
	"parley.dev/parley/internal/transport"
)

// cannedTransport answers every request with one canned response: the
// client transports read an ACTS client payload (§10) as they read a
// server's answer.
type cannedTransport func(*http.Request) *http.Response

func (c cannedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		defer r.Body.Close()
	}
	resp := c(r)
	resp.Request = r
	return resp, nil
}

func canned(status int, ct string, body []byte, trailer http.Header) *http.Response {
	h := http.Header{"Content-Type": {ct}}
	return &http.Response{StatusCode: status, Status: http.StatusText(status), Header: h, Body: io.NopCloser(bytes.NewReader(body)),
		Trailer: trailer, ProtoMajor: 2, Proto: "HTTP/2.0", ContentLength: -1}
}

// parseWithClient feeds payload, a canonical wire payload of method ("":
// the public card), to Parley's client for binding and returns what it
// read, in the JSON model.
func parseWithClient(binding, method string, payload []byte) (any, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var top map[string]json.RawMessage
	result := payload
	envelope := false
	if json.Unmarshal(payload, &top) == nil && top["jsonrpc"] != nil {
		envelope, result = true, top["result"]
	}
	if method == "" {
		return parseCard(ctx, result)
	}
	m := a2a.MethodByName(method)
	if m == nil {
		return nil, fmt.Errorf("unknown operation %s", method)
	}
	if m.Streaming {
		return parseEvent(result)
	}
	wireErr, isErr := envelopeError(top)
	var (
		tr  transport.Transport
		err error
	)
	switch binding {
	case a2a.BindingJSONRPC:
		tr, err = cannedJSONRPC(payload, envelope)
	case a2a.BindingGRPC:
		tr, err = cannedGRPC(m, result, wireErr)
	default:
		tr, err = cannedREST(result, wireErr)
	}
	if err != nil {
		return nil, err
	}
	defer tr.Close()
	return callCanned(ctx, tr, m, isErr)
}

// parseCard reads a public card payload as the client resolves one.
func parseCard(ctx context.Context, result []byte) (any, error) {
	hc := &http.Client{Transport: cannedTransport(func(*http.Request) *http.Response {
		return canned(http.StatusOK, "application/json", result, nil)
	})}
	card, err := client.Resolve(ctx, "http://acts.invalid", &client.ResolveOptions{HTTPClient: hc})
	if err != nil {
		return nil, err
	}
	return protoJSON(card)
}

// parseEvent reads a stream's payload, one StreamResponse, as the
// transports read each event: with a2a.Unmarshal.
func parseEvent(result []byte) (any, error) {
	sr := &a2a.StreamResponse{}
	if err := a2a.Unmarshal(result, sr); err != nil {
		return nil, err
	}
	return protoJSON(sr)
}

// cannedJSONRPC is a JSON-RPC client transport whose server answers with
// payload, wrapped in an envelope when it is a bare result, under the id
// of the request.
func cannedJSONRPC(payload []byte, envelope bool) (transport.Transport, error) {
	env := payload
	if !envelope {
		env = []byte(`{"jsonrpc":"2.0","id":1,"result":` + string(payload) + `}`)
	}
	hc := &http.Client{Transport: cannedTransport(func(r *http.Request) *http.Response {
		var req struct {
			ID json.RawMessage `json:"id"`
		}
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &req)
		var e map[string]json.RawMessage
		out := env
		if json.Unmarshal(env, &e) == nil && req.ID != nil {
			e["id"] = req.ID // the client checks the id it sent
			out, _ = json.Marshal(e)
		}
		return canned(http.StatusOK, "application/json", out, nil)
	})}
	return jsonrpc.NewTransport("http://acts.invalid/", transport.Config{HTTPClient: hc})
}

// cannedGRPC is a gRPC client transport whose server answers with wireErr
// as a gRPC status when it is set, else with result, a response of m, in
// its binary form.
func cannedGRPC(m *a2a.Method, result []byte, wireErr *a2a.Error) (transport.Transport, error) {
	if wireErr != nil {
		n, _ := wireErr.Code.GRPCStatus()
		hc := &http.Client{Transport: cannedTransport(func(*http.Request) *http.Response {
			r := canned(http.StatusOK, "application/grpc", nil, nil)
			r.Header.Set("Grpc-Status", strconv.Itoa(n))
			r.Header.Set("Grpc-Message", wireErr.Message)
			return r
		})}
		return grpcbind.NewTransport("http://acts.invalid", transport.Config{HTTPClient: hc})
	}
	msg := m.NewResponse()
	if err := a2a.Unmarshal(result, msg); err != nil {
		return nil, err
	}
	bin, err := proto.Marshal(msg)
	if err != nil {
		return nil, err
	}
	hc := &http.Client{Transport: cannedTransport(func(*http.Request) *http.Response {
		return canned(http.StatusOK, "application/grpc", grpcbind.AppendFrame(nil, bin), http.Header{"Grpc-Status": {"0"}})
	})}
	return grpcbind.NewTransport("http://acts.invalid", transport.Config{HTTPClient: hc})
}

// cannedREST is an HTTP+JSON client transport whose server answers with
// wireErr when it is set, else with result.
func cannedREST(result []byte, wireErr *a2a.Error) (transport.Transport, error) {
	hc := &http.Client{Transport: cannedTransport(func(r *http.Request) *http.Response {
		if wireErr != nil {
			// The error as the HTTP+JSON binding sends it (spec §11.6).
			rec := httptest.NewRecorder()
			rest.WriteError(rec, r, wireErr)
			resp := rec.Result()
			resp.Request = r
			return resp
		}
		return canned(http.StatusOK, "application/a2a+json", result, nil)
	})}
	return rest.NewTransport("http://acts.invalid", transport.Config{HTTPClient: hc})
}

// callCanned calls m through tr and returns what the client read, in the
// JSON model; isErr: the payload is an error.
func callCanned(ctx context.Context, tr transport.Transport, m *a2a.Method, isErr bool) (any, error) {
	req := m.NewRequest()
	_ = a2a.Unmarshal([]byte(`{"id":"acts","taskId":"acts"}`), req)
	resp, err := tr.Call(ctx, m, req)
	if e, ok := errors.AsType[*a2a.Error](err); ok && isErr {
		// An error payload parses to the error the client read: its
		// JSON-RPC code whatever the binding, the draft's one numbering.
		return map[string]any{"error": map[string]any{"code": float64(e.Code.JSONRPC()), "message": e.Message, "type": e.Code.Name()}}, nil
	}
	if err != nil {
		return nil, err
	}
	return protoJSON(resp)
}

// envelopeError reads the error of a JSON-RPC error envelope as the
// *a2a.Error it stands for.
func envelopeError(top map[string]json.RawMessage) (*a2a.Error, bool) {
	raw, ok := top["error"]
	if !ok || top["jsonrpc"] == nil {
		return nil, false
	}
	var o struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	if json.Unmarshal(raw, &o) != nil {
		return nil, false
	}
	return httpx.RPCError(o.Code, o.Message, o.Data, 0), true
}

func protoJSON(m proto.Message) (any, error) {
	b, err := a2a.Marshal(m)
	if err != nil {
		return nil, err
	}
	var v any
	return v, json.Unmarshal(b, &v)
}
