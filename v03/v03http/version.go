package v03http

import (
	"strings"

	"parley.dev/parley/a2a"
	"parley.dev/parley/v03"
)

// Versions lists the protocol versions served when v0.3 is on.
const Versions = a2a.ProtocolVersion + ", " + v03.ProtocolVersion

// Admit checks the A2A-Version of a request on a v0.3 route and, when it
// is served, marks the call for the core, which speaks v1.0 only: the
// translation to v1.0 has already happened.
func Admit(ci *a2a.CallInfo, on bool) error {
	asked := strings.TrimSpace(ci.Version)
	mm := asked
	if parts := strings.Split(asked, "."); len(parts) >= 2 {
		mm = parts[0] + "." + parts[1]
	}
	if on && (mm == "" || mm == v03.ProtocolVersion || mm == a2a.ProtocolVersion) {
		ci.Version = a2a.ProtocolVersion
		return nil
	}
	if asked == "" {
		asked = v03.ProtocolVersion
	}
	supported := Versions
	if !on {
		supported = a2a.ProtocolVersion
	}
	e := a2a.NewError(a2a.CodeVersionNotSupported, "A2A protocol version %q is not supported on this route; supported versions: %s", asked, supported)
	return e.WithMeta("supportedVersions", strings.ReplaceAll(supported, " ", "")).WithMeta("requestedVersion", asked)
}
