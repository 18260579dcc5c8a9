// Package version decides the A2A protocol version of a call, in one place,
// from what the request says: the A2A-Version service parameter (spec
// §3.6.2) and the version the operation's wire form implies. Every front
// (JSON-RPC, HTTP+JSON, gRPC, v1.x and v0.3) records the latter on the
// call's a2a.CallInfo (Wire) and the core calls Choose once per call; no
// front rewrites the version and none sniffs a body for it.
package version

import (
	"fmt"
	"slices"
	"strings"

	"parley.dev/parley/a2a"
)

// V03 is the Major.Minor of A2A v0.3, whose operations have names of their
// own (a JSON-RPC method "message/send", HTTP+JSON routes under /v1/, the
// gRPC service a2a.v1.A2AService).
const V03 = "0.3"

// Choose returns the version (Major.Minor) a call is served in.
//
// asked is the A2A-Version service parameter as received ("" if absent);
// wire is the version the operation's own name implies: V03 for a v0.3
// operation, "" for a v1.x one, whose version only the parameter can say.
// served lists the Major.Minor versions served, newest first.
//
// The rules (decision B7): a patch is ignored and an absent version means
// 0.3 (spec §3.6.2). A v0.3 operation is served as 0.3 when the parameter
// is absent, 0.3 or 1.0 (no v1.0 operation has a v0.3 operation's name, so
// 1.0 there is not ambiguous: Parley's own v0.3 clients and others send
// it). A v1.x operation is served in the version asked when that version
// is served and is not 0.3. Anything else, an unknown or unserved version
// or 0.3 on a v1.x operation, is refused with VersionNotSupportedError
// listing the versions served.
func Choose(asked, wire string, served []string) (string, error) {
	raw := strings.TrimSpace(asked)
	shown, mm := a2a.RequestedVersion(raw)
	if wire == V03 {
		if slices.Contains(served, V03) && (mm == V03 || mm == a2a.ProtocolVersion) {
			return V03, nil
		}
	} else if mm != V03 && slices.Contains(served, mm) {
		return mm, nil
	}
	list := strings.Join(served, ", ")
	msg := fmt.Sprintf("A2A protocol version %q is not supported here; supported versions: %s", shown, list)
	if raw == "" && wire != V03 {
		msg = fmt.Sprintf("no A2A-Version given, which means 0.3, and this is not a v0.3 operation; supported versions: %s: send the A2A-Version service parameter (an HTTP header or query parameter, or gRPC metadata a2a-version) naming one of them", list)
	}
	e := a2a.NewError(a2a.CodeVersionNotSupported, "%s", msg)
	return "", e.WithMeta("supportedVersions", strings.Join(served, ",")).WithMeta("requestedVersion", shown)
}
