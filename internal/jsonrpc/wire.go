package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"
	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/httpx"
)

// This file is the one copy of the JSON-RPC wire format: request and
// response envelopes and error objects, in both directions.

var nullID = json.RawMessage("null")

// envelope is a JSON-RPC 2.0 request. id keeps its raw JSON so the reply
// echoes it exactly.
type envelope struct {
	JSONRPC string
	ID      json.RawMessage
	Method  *string
	Params  json.RawMessage
}

// decodeEnvelope reads the four members by their exact names: JSON-RPC
// member names are case-sensitive, so "ID" is not "id" (encoding/json's
// struct decoding would match it).
func decodeEnvelope(body []byte) (envelope, *a2a.Error) {
	var env envelope
	members, err := topMembers(body)
	if err != nil {
		return env, err
	}
	// The id is copied: a stream's events carry it after the request's
	// body has gone.
	env.ID, env.Params = bytes.Clone(members.id), members.params
	if v := members.jsonrpc; v != nil {
		env.JSONRPC, _ = jsonString(v)
	}
	if v := members.method; v != nil {
		m, ok := jsonString(v)
		if !ok {
			return env, a2a.NewError(a2a.CodeInvalidRequest, `"method" must be a string`)
		}
		env.Method = &m
	}
	return env, nil
}

// jsonString reads the raw JSON value v as a string, reporting false when
// it is not one (as json.Unmarshal into a string does). A string with no
// escapes and only UTF-8 text, such as "2.0" or a method name, is taken
// as it is.
func jsonString(v []byte) (string, bool) {
	if n := len(v); n >= 2 && v[0] == '"' && v[n-1] == '"' {
		body := v[1 : n-1]
		if bytes.IndexByte(body, '\\') < 0 && bytes.IndexByte(body, '"') < 0 && utf8.Valid(body) {
			return string(body), true
		}
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return "", false
	}
	return s, true
}

// requestMembers holds the raw values of a request object's members that
// JSON-RPC defines; nil for a member that is absent.
type requestMembers struct {
	jsonrpc, id, method, params []byte
}

// topMembers reads the members of a request object, refusing a member
// that appears twice: which of the two a server runs would be a guess
// that another reader of the same bytes (a proxy, a logger) may not share.
// The body is checked whole first (validJSON, json.Valid's answer without
// its cost), then split in one pass (splitMembers); its other members are
// ignored.
func topMembers(body []byte) (requestMembers, *a2a.Error) {
	if !validJSON(body) {
		var v any
		err := json.Unmarshal(body, &v)
		if err == nil {
			err = errors.New("not valid JSON")
		}
		return requestMembers{}, a2a.NewError(a2a.CodeParseError, "invalid JSON: %v", err)
	}
	if t := bytes.TrimLeft(body, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return requestMembers{}, a2a.NewError(a2a.CodeInvalidRequest, "the request is not a JSON-RPC request object")
	}
	members, key, dup := splitMembers(body)
	if dup {
		return requestMembers{}, a2a.NewError(a2a.CodeInvalidRequest, "member %q appears more than once", key)
	}
	return members, nil
}

// splitMembers scans a JSON object that is known to be valid, returns the
// raw values of its JSON-RPC members, and reports the first key that
// appears twice at its top level. It does not allocate unless a key is
// escaped or repeated, or the object has more than eight members.
func splitMembers(obj []byte) (m requestMembers, repeated string, dup bool) {
	var keys [8][]byte
	var more [][]byte
	var key []byte
	n, depth, inString, escaped, keyStart, expectKey, valueStart := 0, 0, false, false, -1, false, -1
	record := func(end int) {
		v := bytes.TrimSpace(obj[valueStart:end])
		switch string(key) {
		case "jsonrpc":
			m.jsonrpc = v
		case "id":
			m.id = v
		case "method":
			m.method = v
		case "params":
			m.params = v
		}
		valueStart = -1
	}
	for i, c := range obj {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
				if keyStart >= 0 {
					k := obj[keyStart:i]
					keyStart = -1
					if bytes.IndexByte(k, '\\') >= 0 {
						k = []byte(unquote(k)) // "\u006dethod" is "method"
					}
					if contains(keys[:min(n, len(keys))], k) || contains(more, k) {
						return requestMembers{}, unquote(k), true
					}
					if n < len(keys) {
						keys[n] = k
					} else {
						more = append(more, k)
					}
					n++
					key = k
				}
			}
			continue
		}
		switch c {
		case '"':
			inString = true
			if depth == 1 && expectKey {
				keyStart = i + 1
				expectKey = false
			}
		case ':':
			if depth == 1 && valueStart < 0 {
				valueStart = i + 1
			}
		case '{', '[':
			depth++
			expectKey = depth == 1 && c == '{'
		case '}', ']':
			if depth == 1 && valueStart >= 0 {
				record(i)
			}
			depth--
		case ',':
			if depth == 1 {
				if valueStart >= 0 {
					record(i)
				}
				expectKey = true
			}
		}
	}
	return m, "", false
}

// contains reports whether list holds k.
func contains(list [][]byte, k []byte) bool {
	for _, seen := range list {
		if bytes.Equal(seen, k) {
			return true
		}
	}
	return false
}

// unquote turns the raw bytes of a JSON string's contents into text.
func unquote(raw []byte) string {
	var s string
	if json.Unmarshal(append(append([]byte{'"'}, raw...), '"'), &s) != nil {
		return string(raw)
	}
	return s
}

// checkID accepts a string, number or null id and refuses a missing one
// (a notification: the spec is silent on them; Parley answers every
// request, so it refuses notifications) and any other JSON type.
func checkID(raw json.RawMessage) (json.RawMessage, *a2a.Error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, a2a.NewError(a2a.CodeInvalidRequest, `"id" is required: notifications (requests without an id) are not supported`)
	}
	switch c := raw[0]; {
	case c == '"', c == '-', c >= '0' && c <= '9', bytes.Equal(raw, nullID):
		return raw, nil
	}
	return nil, a2a.NewError(a2a.CodeInvalidRequest, `"id" must be a string, a number or null`)
}

// appendResult renders a success response carrying result.
func appendResult(b []byte, id json.RawMessage, result proto.Message) ([]byte, error) {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"result":`...)
	b, err := a2a.AppendJSON(b, result)
	return append(b, '}'), err
}

// appendEvent renders a JSON-RPC response whose result is a stream
// event's StreamResponse, as appendResult does: the result is the one
// encoding that every stream carrying the event shares
// (httpx.AppendEventJSON), the envelope around it this request's.
func appendEvent(b []byte, id json.RawMessage, ev a2a.StreamEvent) ([]byte, error) {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"result":`...)
	b, err := httpx.AppendEventJSON(b, ev)
	return append(b, '}'), err
}

// appendError renders a JSON-RPC error response: code, message and data,
// the array of error details (spec §9.5).
func appendError(b []byte, id json.RawMessage, e *a2a.Error) []byte {
	if id == nil {
		id = nullID
	}
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"error":{"code":`...)
	b = strconv.AppendInt(b, int64(e.Code.JSONRPC()), 10)
	b = append(b, `,"message":`...)
	msg, _ := json.Marshal(e.WireMessage())
	b = append(b, msg...)
	b = append(b, `,"data":`...)
	b = httpx.AppendDetails(b, e)
	return append(b, "}}"...)
}

// rpcError is a JSON-RPC error object.
type errorObject struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

// toError converts a JSON-RPC error object (httpx.RPCError): the
// ErrorInfo reason in its data, when there is a known one, says which
// error it is (spec §9.5, §5.4), before the code: the reason is the same
// on every binding, while codes outside the spec's table differ between
// SDKs (the official Go SDK's authentication error is -31401 with reason
// UNAUTHENTICATED).
func (r *errorObject) toError() *a2a.Error { return httpx.RPCError(r.Code, r.Message, r.Data, 0) }

// response is a JSON-RPC response envelope, as a client reads it.
type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *errorObject    `json:"error"`
}

// appendRequest renders a request envelope. GetExtendedAgentCard with
// nothing to say goes without params (spec §9.4.8).
func appendRequest(b []byte, id int64, method string, params proto.Message) ([]byte, error) {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `,"method":`...)
	b = strconv.AppendQuote(b, method)
	valid := params != nil && params.ProtoReflect().IsValid()
	switch {
	case valid && (method != a2a.MethodGetExtendedAgentCard || proto.Size(params) > 0):
		b = append(b, `,"params":`...)
		var err error
		if b, err = a2a.AppendJSON(b, params); err != nil {
			return nil, err
		}
	case method != a2a.MethodGetExtendedAgentCard:
		b = append(b, `,"params":{}`...)
	}
	return append(b, '}'), nil
}

// isEnvelope reports whether a body looks like a JSON-RPC response.
func isEnvelope(body []byte) bool {
	var probe struct {
		JSONRPC string `json:"jsonrpc"`
	}
	return json.Unmarshal(body, &probe) == nil && probe.JSONRPC != ""
}

// DecodeRequest reads a JSON-RPC request body as the server does (the
// same envelope reading, decodeEnvelope) and returns its id, its method
// ("" when absent) and its params, as raw JSON. It is for tools that
// measure the JSON work of a request apart from the server (the load
// generator's floor), which must read it exactly as the server does.
func DecodeRequest(body []byte) (id json.RawMessage, method string, params json.RawMessage, err error) {
	env, e := decodeEnvelope(body)
	if e != nil {
		return nil, "", nil, e
	}
	if env.Method != nil {
		method = *env.Method
	}
	return env.ID, method, env.Params, nil
}
