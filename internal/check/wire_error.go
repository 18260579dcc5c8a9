package check

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/httpx"
)

// Reading error responses is part of the grading: wireError keeps the
// shape the server sent (which envelope, which details) next to the error
// it was identified as, so that gradeError can judge both.

// wireError is a protocol error as the server sent it.
type wireError struct {
	Code        a2a.Code // identified code (Known)
	Known       bool
	JSONRPCCode int
	HTTPStatus  int
	Status      string // google.rpc status name (REST, gRPC)
	GRPCCode    int    // gRPC status code (gRPC)
	Message     string
	Reason      string
	Domain      string
	Metadata    map[string]string
	HasInfo     bool   // an ErrorInfo detail is present
	DetailsOK   bool   // details/data is absent or an array of objects with @type
	HasDetails  bool   // details/data is present
	Shape       string // "jsonrpc", "google.rpc.Status", "problem", "grpc", "other"
}

// name names the error for reports.
func (e *wireError) name() string {
	switch {
	case e == nil:
		return "none"
	case e.Known:
		return e.Code.Name()
	case e.JSONRPCCode != 0:
		return fmt.Sprintf("code %d", e.JSONRPCCode)
	case e.Shape == "grpc":
		return "gRPC " + e.Status
	}
	return fmt.Sprintf("HTTP %d", e.HTTPStatus)
}

// is reports whether the error was identified as c.
func (e *wireError) is(c a2a.Code) bool { return e != nil && e.Known && e.Code == c }

// identify sets the error's code.
func (e *wireError) identify(c a2a.Code) { e.Code, e.Known = c, true }

// refusal is the error an HTTP status that refuses the caller stands for
// by itself, read in the one error table (a2a.CodeFromWire, §3.3.2): 401
// is UnauthenticatedError, 403 PermissionDeniedError; ok is false for any
// other status.
func refusal(status int) (a2a.Code, bool) {
	if status != http.StatusUnauthorized && status != http.StatusForbidden {
		return 0, false
	}
	return a2a.CodeFromWire(a2a.Wire{HTTP: status})
}

// httpLevelError interprets an HTTP status without a protocol body (a 401
// before any method, say).
func httpLevelError(ex *exchange) *wireError {
	if c, ok := refusal(ex.Status); ok {
		return &wireError{Code: c, Known: true, HTTPStatus: ex.Status, Shape: "other", DetailsOK: true}
	}
	return nil
}

// parseRPCError reads a JSON-RPC error object.
func parseRPCError(raw json.RawMessage, ex *exchange) *wireError {
	var o struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	e := &wireError{Shape: "jsonrpc", HTTPStatus: ex.Status}
	if json.Unmarshal(raw, &o) != nil {
		e.Shape = "other"
		return e
	}
	e.JSONRPCCode, e.Message = o.Code, o.Message
	readDetails(e, o.Data)
	if c, ok := a2a.CodeForJSONRPC(o.Code); ok {
		e.identify(c)
	} else if c, ok := httpx.CodeForKnownReason(e.Reason); ok {
		// A code outside the spec's table with a reason that says it all
		// (the official Go SDK: -31401, UNAUTHENTICATED).
		e.identify(c)
	}
	if c, ok := refusal(ex.Status); ok {
		e.identify(c) // the status refuses the caller whatever the body says
	}
	return e
}

// parseRESTError reads an HTTP+JSON error response: a google.rpc.Status
// in {"error": ...} as §11.6 says, else a problem document or anything.
// The error is identified by its ErrorInfo reason, else (a grading
// choice: only where the status leaves no doubt) by its HTTP status.
func parseRESTError(ex *exchange) *wireError {
	e := &wireError{HTTPStatus: ex.Status, Shape: "other"}
	var top map[string]json.RawMessage
	if json.Unmarshal(ex.Body, &top) == nil {
		if inner, ok := top["error"]; ok {
			var s struct {
				Code    int             `json:"code"`
				Status  string          `json:"status"`
				Message string          `json:"message"`
				Details json.RawMessage `json:"details"`
			}
			if json.Unmarshal(inner, &s) == nil {
				e.Shape = "google.rpc.Status"
				e.Status, e.Message = s.Status, s.Message
				readDetails(e, s.Details)
			}
		} else if _, ok := top["title"]; ok {
			e.Shape = "problem"
		} else if _, ok := top["type"]; ok {
			e.Shape = "problem"
		}
	}
	if c, ok := a2a.CodeForReason(e.Reason); ok {
		e.identify(c)
		return e
	}
	if c, ok := refusal(ex.Status); ok {
		e.identify(c)
		return e
	}
	switch {
	case ex.Status == http.StatusNotFound && e.Status == "NOT_FOUND":
		e.identify(a2a.CodeTaskNotFound)
	case (ex.Status == http.StatusBadRequest || ex.Status == http.StatusUnprocessableEntity) &&
		(e.Status == "INVALID_ARGUMENT" || e.Shape != "google.rpc.Status"):
		e.identify(a2a.CodeInvalidParams)
	}
	return e
}

// readDetails reads error details (JSON-RPC data, rpc.Status details).
func readDetails(e *wireError, raw json.RawMessage) {
	raw = bytes.TrimSpace(raw)
	e.DetailsOK = true
	if len(raw) == 0 || string(raw) == "null" {
		return
	}
	e.HasDetails = true
	var list []map[string]json.RawMessage
	if raw[0] != '[' || json.Unmarshal(raw, &list) != nil {
		e.DetailsOK = false
		var one map[string]json.RawMessage
		if json.Unmarshal(raw, &one) == nil {
			list = append(list, one) // a v0.3-style object: read it anyway
		}
	}
	for _, d := range list {
		typ := jsonStr(d["@type"])
		if typ == "" {
			e.DetailsOK = false
		}
		if strings.HasSuffix(typ, "google.rpc.ErrorInfo") {
			readErrorInfo(e, d)
		}
	}
}

// readErrorInfo reads a google.rpc.ErrorInfo detail.
func readErrorInfo(e *wireError, d map[string]json.RawMessage) {
	e.HasInfo = true
	e.Reason, e.Domain = jsonStr(d["reason"]), jsonStr(d["domain"])
	var md map[string]any
	if json.Unmarshal(d["metadata"], &md) == nil {
		e.Metadata = map[string]string{}
		for k, v := range md {
			e.Metadata[k] = fmt.Sprint(v)
		}
	}
}

// jsonStr reads a JSON string, "" for anything else.
func jsonStr(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}
