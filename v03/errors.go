package v03

import (
	"encoding/json"

	"parley.dev/parley/a2a"
)

// ErrorFromV1 is the v0.3 error object of e. v0.3 shares the JSON-RPC codes
// -32001…-32007 with v1.0; v1.0's ExtensionSupportRequired (-32008) and
// VersionNotSupported (-32009) did not exist in v0.3 and keep their v1.0
// codes (a v0.3 client sees an error it does not know by number, with a
// message that says what is wrong). Field violations travel in
// data.violations.
func ErrorFromV1(e *a2a.Error) ErrorObject {
	out := ErrorObject{Code: e.Code.JSONRPC(), Message: e.WireMessage()}
	if len(e.Violations) > 0 {
		type violation struct {
			Field       string `json:"field"`
			Description string `json:"description"`
		}
		vs := make([]violation, 0, len(e.Violations))
		for _, v := range e.Violations {
			vs = append(vs, violation{v.Field, v.Description})
		}
		out.Data, _ = json.Marshal(map[string]any{"violations": vs})
	}
	return out
}

// ErrorToV1 is the a2a.Error of a v0.3 error object (for clients): the
// same code where v1.0 knows it, otherwise an internal error carrying the
// message.
func ErrorToV1(o ErrorObject) *a2a.Error {
	code, ok := a2a.CodeForJSONRPC(o.Code)
	if !ok {
		code = a2a.CodeInternal
	}
	return &a2a.Error{Code: code, Message: o.Message}
}
