package v03http

import (
	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/version"
)

// Admit marks a call decoded from a v0.3 operation as such (CallInfo.Wire),
// for the core, which decides the call's version once (spec §3.6.2): the
// translation to v1.0 types has already happened. With on false v0.3 is
// not served and the call is refused here with VersionNotSupportedError,
// by the same rule.
func Admit(ci *a2a.CallInfo, on bool) error {
	ci.Wire = version.V03
	if on {
		return nil
	}
	_, err := version.Choose(ci.Version, version.V03, []string{a2a.ProtocolVersion})
	return err
}
