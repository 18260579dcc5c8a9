package testkit

import (
	"encoding/json"
	"fmt"

	"parley.dev/parley/a2a"
)

// The @type URLs of the google.rpc error details a JSON binding carries.
const (
	typeErrorInfo  = "type.googleapis.com/google.rpc.ErrorInfo"
	typeBadRequest = "type.googleapis.com/google.rpc.BadRequest"
)

// WireError is an error as a JSON binding puts it on the wire, read back
// by a test: a JSON-RPC error object (RPCWireError) or the google.rpc.Status
// body of an HTTP+JSON error (StatusWireError). It is decoded with
// encoding/json alone, not with the production decoders it checks.
type WireError struct {
	// Code is the error the wire names; zero when it names none known.
	Code a2a.Code
	// Message is the error's message.
	Message string
	// ErrorInfo says whether a google.rpc.ErrorInfo detail came;
	// Reason, Domain and Metadata are its own, empty without one.
	ErrorInfo bool
	Reason    string
	Domain    string
	Metadata  map[string]string
	// Fields are the fields of the google.rpc.BadRequest field
	// violations, in order; nil without that detail.
	Fields []string
}

// String describes w for failure messages.
func (w *WireError) String() string {
	return fmt.Sprintf("%s %q reason=%q domain=%q meta=%v fields=%v", w.Code.Name(), w.Message, w.Reason, w.Domain, w.Metadata, w.Fields)
}

// RPCWireError decodes a JSON-RPC error object: its numeric code names the
// error, and its data holds the google.rpc details. A member of the wrong
// JSON type is an error.
func RPCWireError(raw []byte) (*WireError, error) {
	var o struct {
		Code    *int            `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(raw, &o); err != nil {
		return nil, fmt.Errorf("JSON-RPC error object %s: %w", raw, err)
	}
	if o.Code == nil {
		return nil, fmt.Errorf("JSON-RPC error object without a code: %s", raw)
	}
	w := &WireError{Message: o.Message}
	w.Code, _ = a2a.CodeForJSONRPC(*o.Code)
	if err := w.details(o.Data); err != nil {
		return nil, fmt.Errorf("JSON-RPC error data: %w", err)
	}
	return w, nil
}

// StatusWireError decodes the google.rpc.Status error of an HTTP+JSON
// response of HTTP status httpStatus: the ErrorInfo reason names an A2A
// error; an error without one is known by the HTTP status (400
// InvalidParams, 401 Unauthenticated, 404 and 405 MethodNotFound, 413
// RequestTooLarge, anything else Internal). A member of the wrong JSON
// type is an error.
func StatusWireError(httpStatus int, raw []byte) (*WireError, error) {
	var o struct {
		Message string          `json:"message"`
		Details json.RawMessage `json:"details"`
	}
	if err := json.Unmarshal(raw, &o); err != nil {
		return nil, fmt.Errorf("google.rpc.Status %s: %w", raw, err)
	}
	w := &WireError{Message: o.Message}
	if err := w.details(o.Details); err != nil {
		return nil, fmt.Errorf("google.rpc.Status details: %w", err)
	}
	if c, ok := a2a.CodeForReason(w.Reason); ok {
		w.Code = c
		return w, nil
	}
	switch httpStatus {
	case 400:
		w.Code = a2a.CodeInvalidParams
	case 401:
		w.Code = a2a.CodeUnauthenticated
	case 404, 405:
		w.Code = a2a.CodeMethodNotFound
	case 413:
		w.Code = a2a.CodeRequestTooLarge
	default:
		w.Code = a2a.CodeInternal
	}
	return w, nil
}

// details decodes the JSON form of a list of google.rpc error details into
// w. Details of other types are ignored; an absent list is none.
func (w *WireError) details(raw json.RawMessage) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return fmt.Errorf("details %s: %w", raw, err)
	}
	for _, d := range list {
		var typ struct {
			Type string `json:"@type"`
		}
		if err := json.Unmarshal(d, &typ); err != nil {
			return fmt.Errorf("detail %s: %w", d, err)
		}
		switch typ.Type {
		case typeErrorInfo:
			var info struct {
				Reason   string            `json:"reason"`
				Domain   string            `json:"domain"`
				Metadata map[string]string `json:"metadata"`
			}
			if err := json.Unmarshal(d, &info); err != nil {
				return fmt.Errorf("ErrorInfo %s: %w", d, err)
			}
			w.ErrorInfo = true
			w.Reason, w.Domain, w.Metadata = info.Reason, info.Domain, info.Metadata
		case typeBadRequest:
			var br struct {
				FieldViolations []struct {
					Field string `json:"field"`
				} `json:"fieldViolations"`
			}
			if err := json.Unmarshal(d, &br); err != nil {
				return fmt.Errorf("BadRequest %s: %w", d, err)
			}
			for _, f := range br.FieldViolations {
				w.Fields = append(w.Fields, f.Field)
			}
		}
	}
	return nil
}
