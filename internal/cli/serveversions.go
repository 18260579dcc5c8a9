package cli

import (
	"fmt"
	"strings"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/v03"
)

// protocolVersions is the value of `parley serve --protocol-versions`: the
// A2A versions served. v1.0 is always served; v0.3 is on unless the list
// leaves it out (docs/versions.md).
type protocolVersions struct {
	set   bool
	noV03 bool
}

func (p *protocolVersions) String() string {
	if p.set && p.noV03 {
		return a2a.ProtocolVersion
	}
	return a2a.ProtocolVersion + "," + v03.ProtocolVersion
}

// Set reads a comma-separated list of 1.0 and 0.3 (a patch is ignored).
func (p *protocolVersions) Set(s string) error {
	p.set, p.noV03 = true, true
	var v1 bool
	for _, v := range strings.Split(s, ",") {
		v = strings.TrimSpace(v)
		mm := v
		if parts := strings.Split(v, "."); len(parts) >= 2 {
			mm = parts[0] + "." + parts[1]
		}
		switch mm {
		case a2a.ProtocolVersion:
			v1 = true
		case v03.ProtocolVersion:
			p.noV03 = false
		default:
			return fmt.Errorf("unknown protocol version %q: Parley serves 1.0 and 0.3", v)
		}
	}
	if !v1 {
		return fmt.Errorf("1.0 must be among the versions (Parley always serves v1.0; v0.3 is served beside it)")
	}
	return nil
}

// v03 reports whether v0.3 is served.
func (p *protocolVersions) v03() bool { return !p.noV03 }

// extended adds the 0.3 interfaces to the extended card when v0.3 is
// served (a2ahttp adds them to the public card).
func (p *protocolVersions) extended(card *a2a.AgentCard) *a2a.AgentCard {
	if !p.v03() {
		return card
	}
	return v03.AddInterfaces(card)
}
