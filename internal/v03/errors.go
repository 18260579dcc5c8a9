package v03

import (
	"encoding/json"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/httpx"
)

// ErrorFromV1 is the v0.3 error object of e, by a2a's error table (its
// JSON-RPC code; v0.3 numbers -32001…-32007 as v1.0 does). v1.0's
// ExtensionSupportRequired (-32008) and VersionNotSupported (-32009) did
// not exist in v0.3 and keep their v1.0 codes (a v0.3 client sees an error
// it does not know by number, with a message that says what is wrong). So
// would the A2A 1.1 preview's TaskGenerationMismatch (-32010, with its
// metadata in data), but no v0.3 call meets it: a v0.3 request has no
// ifGenerationMatch (the core clears it for calls served in 0.3).
//
// v0.3 has no google.rpc details: data is an object holding field
// violations in data.violations and, for an error that has metadata or
// whose v1.0 form has an ErrorInfo in Parley's domain (a rate limit, whose
// -32603 is InternalError's), the ErrorInfo's reason in data.reason and
// the metadata in data.metadata.
func ErrorFromV1(e *a2a.Error) ErrorObject {
	out := ErrorObject{Code: e.Code.JSONRPC(), Message: e.WireMessage()}
	type violation struct {
		Field       string `json:"field"`
		Description string `json:"description"`
	}
	var data struct {
		Reason     string            `json:"reason,omitempty"`
		Metadata   map[string]string `json:"metadata,omitempty"`
		Violations []violation       `json:"violations,omitempty"`
	}
	if reason, domain, ok := e.Info(); ok && (domain == a2a.DomainParley || len(e.Metadata) > 0) {
		data.Reason, data.Metadata = reason, e.Metadata
	}
	for _, v := range e.Violations {
		data.Violations = append(data.Violations, violation{v.Field, v.Description})
	}
	if data.Reason != "" || len(data.Violations) > 0 {
		out.Data, _ = json.Marshal(data)
	}
	return out
}

// ErrorToV1 is the a2a.Error of a v0.3 error object (for clients).
func ErrorToV1(o ErrorObject) *a2a.Error { return ErrorToV1Status(o, 0) }

// ErrorToV1Status is the a2a.Error of a v0.3 error object that came with
// an HTTP status (0 when it does not matter), read as ErrorFromV1 writes
// it: the code data.reason names, else the code's (the status telling
// apart errors that share it); violations and metadata kept. A code v1.0
// does not know is an InternalError carrying the message and the metadata
// jsonrpcCode.
func ErrorToV1Status(o ErrorObject, status int) *a2a.Error {
	return httpx.RPCError(o.Code, o.Message, o.Data, status)
}
