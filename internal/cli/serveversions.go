package cli

import (
	"fmt"
	"slices"
	"strings"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/v03"
	"parley.dev/parley/internal/version"
)

// protocolVersions is the value of `parley serve --protocol-versions`: the
// A2A versions served, as the version table knows them. v1.0 is always
// served; v0.3 is on unless the list leaves it out; the 1.1 preview is on
// only when the list names it (docs/versions.md).
type protocolVersions struct {
	list []string // nil: the defaults
}

// served returns the versions served, newest first.
func (p *protocolVersions) served() []string {
	if p.list == nil {
		return version.Defaults()
	}
	return slices.Clone(p.list)
}

func (p *protocolVersions) String() string { return strings.Join(p.served(), ",") }

// Set reads a comma-separated list of versions of the table (a patch is
// ignored).
func (p *protocolVersions) Set(s string) error {
	var list []string
	for _, v := range strings.Split(s, ",") {
		v = strings.TrimSpace(v)
		_, mm := a2a.RequestedVersion(v)
		if _, ok := version.Lookup(mm); !ok || v == "" {
			return fmt.Errorf("unknown protocol version %q: Parley serves %s", v, strings.Join(version.Known(), ", "))
		}
		if !slices.Contains(list, mm) {
			list = append(list, mm)
		}
	}
	if !slices.Contains(list, a2a.ProtocolVersion) {
		return fmt.Errorf("1.0 must be among the versions (Parley always serves v1.0; v0.3 and the 1.1 preview are served beside it)")
	}
	version.Sort(list)
	p.list = list
	return nil
}

// v03 reports whether v0.3 is served.
func (p *protocolVersions) v03() bool { return slices.Contains(p.served(), v03.ProtocolVersion) }

// extended adds to the extended card the interfaces of the other versions
// served at the v1.0 URLs: the 1.1 preview's when it is on, and v0.3's
// when v0.3 is served (a2ahttp adds them to the public card).
func (p *protocolVersions) extended(card *a2a.AgentCard) *a2a.AgentCard {
	card = version.AddInterfaces(card, p.served())
	if !p.v03() {
		return card
	}
	return v03.AddInterfaces(card)
}
