package httpx

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"

	"parley.dev/parley/a2a"
)

// Error details travel as the same JSON array on both HTTP bindings: in a
// JSON-RPC error's data and in a google.rpc.Status body's details (spec
// §9.5, §11.6). This file writes them (server) and reads them (client).

// AppendDetails appends the JSON array of an error's details: a
// google.rpc.ErrorInfo for A2A errors (reason, domain a2a-protocol.org,
// metadata; spec §9.5, §11.6) and other errors with metadata (a2a.Error.Info),
// and a google.rpc.BadRequest when there are field
// violations.
func AppendDetails(b []byte, e *a2a.Error) []byte {
	b = append(b, '[')
	n := 0
	if reason, domain, ok := e.Info(); ok {
		b = append(b, `{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":`...)
		b = strconv.AppendQuote(b, reason)
		b = append(b, `,"domain":`...)
		b = strconv.AppendQuote(b, domain)
		if len(e.Metadata) > 0 {
			b = append(b, `,"metadata":{`...)
			for i, k := range slices.Sorted(maps.Keys(e.Metadata)) {
				if i > 0 {
					b = append(b, ',')
				}
				b = appendString(b, k)
				b = append(b, ':')
				b = appendString(b, e.Metadata[k])
			}
			b = append(b, '}')
		}
		b = append(b, '}')
		n++
	}
	if len(e.Violations) > 0 {
		if n > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[`...)
		for i, v := range e.Violations {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"field":`...)
			b = appendString(b, v.Field)
			b = append(b, `,"description":`...)
			b = appendString(b, v.Description)
			b = append(b, '}')
		}
		b = append(b, "]}"...)
	}
	return append(b, ']')
}

// appendString appends s as a JSON string.
func appendString(b []byte, s string) []byte {
	out, err := json.Marshal(s)
	if err != nil {
		return append(b, `""`...)
	}
	return append(b, out...)
}

// ApplyDetails reads error details (an array of typed objects, or one
// object such as A2A v0.3's data) into e: ErrorInfo metadata into e.Metadata, BadRequest field
// violations into e.Violations. It returns the ErrorInfo reason.
func ApplyDetails(e *a2a.Error, raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	var list []map[string]json.RawMessage
	switch raw[0] {
	case '[':
		if json.Unmarshal(raw, &list) != nil {
			return ""
		}
	case '{':
		var one map[string]json.RawMessage
		if json.Unmarshal(raw, &one) != nil {
			return ""
		}
		list = append(list, one)
	default:
		return ""
	}
	reason := ""
	for _, d := range list {
		typ := JSONString(d["@type"])
		if r := JSONString(d["reason"]); r != "" && (reason == "" || strings.HasSuffix(typ, "ErrorInfo")) {
			reason = r
			for k, v := range jsonStringMap(d["metadata"]) {
				if e.Metadata == nil {
					e.Metadata = map[string]string{}
				}
				e.Metadata[k] = v
			}
		}
		fv := d["fieldViolations"]
		if fv == nil {
			fv = d["field_violations"]
		}
		if fv == nil {
			fv = d["violations"] // A2A v0.3's data (package v03)
		}
		var vs []map[string]json.RawMessage
		if json.Unmarshal(fv, &vs) == nil {
			for _, v := range vs {
				e.Violations = append(e.Violations, a2a.FieldViolation{
					Field: JSONString(v["field"]), Description: JSONString(v["description"]),
				})
			}
		}
	}
	return reason
}
