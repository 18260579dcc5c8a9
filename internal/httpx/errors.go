package httpx

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"unicode"

	"parley.dev/parley/a2a"
)

// This file is the client half of error mapping on the HTTP bindings: it
// turns the error bodies servers actually send into *a2a.Error values, by
// shape rather than by content type (spec §9.5, §11.6; docs/decisions.md#b8):
//
//   - a JSON-RPC error object {code, message, data}, where data is the v1.0
//     array of typed details or a v0.3 object;
//   - the HTTP+JSON body {"error":{code, status, message, details}}
//     (google.rpc.Status);
//   - an RFC 9457 problem document {type, title, status, detail, ...}
//     (application/problem+json, still shown by the spec's §6.4 samples and
//     sent by some SDKs);
//   - a flat {code, message} object, or a bare JSON string.
//
// The code is the one an ErrorInfo reason names (or a reason found in a
// problem's type, title or extension members); otherwise the JSON-RPC
// code, the google.rpc status name and the HTTP status decide together
// (a2a.CodeFromWire, the error table read backwards).

// ErrorBody is the union of the error shapes above.
type ErrorBody struct {
	// google.rpc.Status, or a JSON-RPC error object.
	Code    json.RawMessage   `json:"code"`
	Status  json.RawMessage   `json:"status"` // a string (rpc.Status) or a number (problem)
	Message string            `json:"message"`
	Details json.RawMessage   `json:"details"`
	Data    json.RawMessage   `json:"data"`
	Reason  string            `json:"reason"`
	Type    string            `json:"type"`
	Title   string            `json:"title"`
	Detail  string            `json:"detail"`
	Extra   map[string]string `json:"-"` // problem extension members
}

// HTTPError interprets a non-2xx HTTP response. It returns the *a2a.Error
// the body (or, for 401 and 403, the status alone) carries, or nil when
// the response is not a protocol error: then the caller reports a
// *TransportError with the status (a proxy's 502, an HTML error page).
func HTTPError(status int, header http.Header, body []byte) *a2a.Error {
	b, ok := ParseErrorBody(body)
	if !ok {
		switch status {
		case http.StatusUnauthorized, http.StatusForbidden:
			code, _ := a2a.CodeFromWire(a2a.Wire{HTTP: status}) // UnauthenticatedError, PermissionDeniedError
			e := &a2a.Error{Code: code, Message: http.StatusText(status)}
			if ch := header.Get("WWW-Authenticate"); ch != "" {
				e.Message += " (WWW-Authenticate: " + ch + ")"
			}
			return e
		}
		return nil
	}
	e := &a2a.Error{Message: b.Message}
	if e.Message == "" {
		e.Message = b.Detail
	}
	if e.Message == "" {
		e.Message = b.Title
	}
	reason := ApplyDetails(e, b.Details)
	if reason == "" {
		reason = ApplyDetails(e, b.Data)
	}
	if reason == "" {
		reason = b.Reason
	}
	for k, v := range b.Extra {
		if e.Metadata == nil {
			e.Metadata = map[string]string{}
		}
		e.Metadata[k] = v
	}
	// A problem document may name the error in its type URI or title.
	for _, r := range []string{reason, b.Type, b.Title} {
		if c, ok := CodeForReason(r); ok {
			e.Code = c
			return e
		}
	}
	w := a2a.Wire{HTTP: status}
	if n, err := strconv.Atoi(string(b.Code)); err == nil && n < 0 {
		w.JSONRPC = n
	}
	if n, ok := a2a.GRPCCodeNumber(JSONString(b.Status)); ok {
		w.GRPC = n
	}
	if c, ok := a2a.CodeFromWire(w); ok {
		e.Code = c
		return e
	}
	return nil
}

// RPCError is the *a2a.Error of a JSON-RPC error object (v1.0's, or
// v0.3's) that came in an HTTP response of the given status (0 when it
// does not matter): the code its data's reason names, else the one its
// code and the status name together (a2a.CodeFromWire). A code no error has
// becomes an InternalError with the metadata jsonrpcCode.
func RPCError(code int, message string, data json.RawMessage, status int) *a2a.Error {
	e := &a2a.Error{Message: message}
	reason := ApplyDetails(e, data)
	if c, ok := CodeForReason(reason); ok {
		e.Code = c
		return e
	}
	if c, ok := a2a.CodeForJSONRPC(code); ok {
		e.Code = c
		if c, ok := a2a.CodeFromWire(a2a.Wire{JSONRPC: code, HTTP: status}); ok {
			e.Code = c // the status tells apart errors that share the code
		}
		return e
	}
	e.Code = a2a.CodeInternal
	return e.WithMeta("jsonrpcCode", strconv.Itoa(code))
}

// ParseErrorBody reads any of the error shapes. ok is false when the body
// is not JSON or has none of them.
func ParseErrorBody(body []byte) (ErrorBody, bool) {
	var b ErrorBody
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return b, false
	}
	if body[0] == '"' {
		var s string
		if json.Unmarshal(body, &s) != nil {
			return b, false
		}
		b.Message = s
		return b, true
	}
	var top map[string]json.RawMessage
	if body[0] != '{' || json.Unmarshal(body, &top) != nil {
		return b, false
	}
	if inner, ok := top["error"]; ok {
		inner = bytes.TrimSpace(inner)
		if len(inner) > 0 && inner[0] == '"' {
			b.Message = JSONString(inner)
			return b, true
		}
		var in ErrorBody
		if json.Unmarshal(inner, &in) != nil {
			return b, false
		}
		return in, true
	}
	if _, ok := top["jsonrpc"]; ok {
		return b, false // a JSON-RPC envelope without an error
	}
	_, hasCode := top["code"]
	_, hasMsg := top["message"]
	_, hasTitle := top["title"]
	_, hasDetail := top["detail"]
	_, hasType := top["type"]
	if !(hasCode && hasMsg) && !hasTitle && !hasDetail && !hasType {
		return b, false
	}
	if json.Unmarshal(body, &b) != nil {
		return b, false
	}
	if hasTitle || hasDetail || hasType {
		// Extension members of a problem document become metadata.
		for k, v := range top {
			switch k {
			case "type", "title", "status", "detail", "instance", "code", "message", "details", "data", "reason":
				continue
			}
			if s, ok := jsonScalar(v); ok {
				if b.Extra == nil {
					b.Extra = map[string]string{}
				}
				b.Extra[k] = s
			}
		}
	}
	return b, true
}

// CodeForKnownReason maps an ErrorInfo reason spelled exactly
// (a2a.CodeForReason).
func CodeForKnownReason(s string) (a2a.Code, bool) { return a2a.CodeForReason(s) }

// CodeForReason maps an ErrorInfo reason to a code. It also accepts the
// forms other SDKs use: the error's name ("TaskNotFoundError"), kebab or
// lower case, or a URI whose last segment is one of those.
func CodeForReason(s string) (a2a.Code, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, false
	}
	if c, ok := CodeForKnownReason(s); ok {
		return c, true
	}
	if i := strings.LastIndexAny(s, "/#:"); i >= 0 {
		s = s[i+1:]
	}
	var b strings.Builder
	prevLower := false
	for _, r := range s {
		switch {
		case r == '-' || r == '.' || r == ' ' || r == '_':
			b.WriteByte('_')
			prevLower = false
		case unicode.IsUpper(r):
			if prevLower {
				b.WriteByte('_')
			}
			b.WriteRune(r)
			prevLower = false
		default:
			b.WriteRune(unicode.ToUpper(r))
			prevLower = unicode.IsLower(r) || unicode.IsDigit(r)
		}
	}
	norm := strings.TrimSuffix(b.String(), "_ERROR")
	return a2a.CodeForReason(norm)
}

// JSONString returns raw as a string if it is a JSON string, else "".
func JSONString(raw json.RawMessage) string {
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// jsonScalar renders a JSON value as metadata text: strings as they are,
// arrays of strings joined by commas, anything else as its JSON.
func jsonScalar(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", false
	}
	if raw[0] == '"' {
		return JSONString(raw), true
	}
	var list []string
	if raw[0] == '[' && json.Unmarshal(raw, &list) == nil {
		return strings.Join(list, ","), true
	}
	return string(raw), true
}

// jsonStringMap reads an ErrorInfo metadata object.
func jsonStringMap(raw json.RawMessage) map[string]string {
	var m map[string]json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &m) != nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		if s, ok := jsonScalar(v); ok {
			out[k] = s
		}
	}
	return out
}
