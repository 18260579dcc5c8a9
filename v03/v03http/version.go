package v03http

import (
	"strings"

	"parley.dev/parley/a2a"
	v03 "parley.dev/parley/v03"
)

// Versions lists the protocol versions served when v0.3 is on.
const Versions = a2a.ProtocolVersion + ", " + v03.ProtocolVersion

// Admit checks the A2A-Version of a request on a v0.3 route and, when it
// is served, marks the call for the core, which speaks v1.0 only: the
// translation to v1.0 has already happened.
func Admit(ci *a2a.CallInfo, on bool) error {
	asked, mm := a2a.RequestedVersion(ci.Version)
	if on && (mm == v03.ProtocolVersion || mm == a2a.ProtocolVersion) {
		ci.Version = a2a.ProtocolVersion
		return nil
	}
	supported := Versions
	if !on {
		supported = a2a.ProtocolVersion
	}
	e := a2a.NewError(a2a.CodeVersionNotSupported, "A2A protocol version %q is not supported on this route; supported versions: %s", asked, supported)
	return e.WithMeta("supportedVersions", strings.ReplaceAll(supported, " ", "")).WithMeta("requestedVersion", asked)
}
