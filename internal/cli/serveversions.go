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

// cards adds the 0.3 interfaces to the cards when v0.3 is served: the
// extended card is signed as it is, while a2ahttp completes the public
// card (again, to no effect) before it signs it.
func (p *protocolVersions) cards(card, extended *a2a.AgentCard) (*a2a.AgentCard, *a2a.AgentCard) {
	if !p.v03() {
		return card, extended
	}
	card = v03.AddInterfaces(card)
	if extended != nil {
		extended = v03.AddInterfaces(extended)
	}
	return card, extended
}

// list is the versions served, newest first, for server.Options.
func (p *protocolVersions) list() []string {
	if p.v03() {
		return []string{a2a.ProtocolVersion, v03.ProtocolVersion}
	}
	return []string{a2a.ProtocolVersion}
}
