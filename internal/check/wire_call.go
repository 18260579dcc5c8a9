package check

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
)

// maxBody bounds what the checker reads of one response or message.
const maxBody = 8 << 20

// callTimeout bounds one unary request.
const callTimeout = 20 * time.Second

// call performs a unary operation.
func (t *target) call(ctx context.Context, method string, req proto.Message, o callOpts) *result {
	if t.binding == a2a.BindingGRPC {
		return t.grpcCall(ctx, method, req, o)
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	ex, resp, rpcID, start, failed := t.do(ctx, method, req, o, false)
	if failed != nil {
		return failed
	}
	defer resp.Body.Close()
	var err error
	ex.Body, err = io.ReadAll(io.LimitReader(resp.Body, maxBody))
	ex.Elapsed = time.Since(start)
	if err != nil {
		ex.Err = fmt.Errorf("reading the response: %w", err)
		return &result{ex: ex, rpcID: rpcID}
	}
	return t.parse(ex, rpcID)
}

// rawPost sends a JSON-RPC body as it is (envelope checks).
func (t *target) rawPost(ctx context.Context, body []byte, o callOpts) *result {
	o.rawBody = body
	return t.call(ctx, "", nil, o)
}

// buildFailure is the result of a request the checker could not build.
func buildFailure(err error) *result {
	return &result{ex: &exchange{Method: "?", Err: fmt.Errorf("checker: building the request: %w", err)}}
}

// parse interprets a unary response.
func (t *target) parse(ex *exchange, rpcID string) *result {
	if t.binding == a2a.BindingJSONRPC {
		return parseJSONRPC(ex, rpcID)
	}
	r := &result{ex: ex, rpcID: rpcID}
	if ex.Status >= 200 && ex.Status < 300 {
		r.raw = ex.Body
		if len(bytes.TrimSpace(r.raw)) == 0 {
			r.raw = json.RawMessage("{}")
		}
		return r
	}
	r.err = parseRESTError(ex)
	return r
}

// parseJSONRPC interprets a JSON-RPC response.
func parseJSONRPC(ex *exchange, rpcID string) *result {
	r := &result{ex: ex, rpcID: rpcID}
	var env struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  json.RawMessage `json:"result"`
		Error   json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(ex.Body, &env); err != nil || (env.Result == nil && env.Error == nil) {
		if e := httpLevelError(ex); e != nil {
			r.err = e
			return r
		}
		r.broken = "not a JSON-RPC response"
		return r
	}
	r.idOK = rpcID == "" || string(bytes.TrimSpace(env.ID)) == rpcID
	if env.Error != nil && string(env.Error) != "null" {
		r.err = parseRPCError(env.Error, ex)
		return r
	}
	r.raw = env.Result
	return r
}
