package version

import (
	"slices"

	"parley.dev/parley/a2a"
)

// V11 is the Major.Minor of the A2A 1.1 preview: the dev-1.1 branch of
// the specification, not released yet. Its operations are the v1.0 ones
// (the same JSON-RPC methods, HTTP+JSON routes and gRPC service), told
// apart by the A2A-Version service parameter alone (spec §3.6).
const V11 = "1.1"

// Protocol is one A2A version Parley knows: an entry of the table that
// the flag parser, the server's options, the card and the core all read,
// so that a version is added here and nowhere else.
type Protocol struct {
	// Version is the Major.Minor.
	Version string
	// Default: served unless the versions served are given.
	Default bool
	// Preview: served only when asked for by name; its rules follow an
	// unreleased specification and may change.
	Preview bool
	// SharesV1 is true for a version reached through the v1.0 bindings'
	// own operations: a card lists an interface of it beside each v1.0
	// one, at the same URL.
	SharesV1 bool
	// Generation is true for a version whose answers carry a task's
	// generation and timeline and whose requests may name them (spec
	// §3.2.2, §3.2.7, §3.2.8): Task.generation and timeline, artifacts'
	// start and end generations, the events' generation,
	// currentGeneration, ifGenerationMatch and timelineLength. Every other version's answers are cleared of
	// them, and its requests too (as it treats members it does not know).
	Generation bool
}

// protocols is the table, newest first.
var protocols = []Protocol{
	{Version: V11, Preview: true, SharesV1: true, Generation: true},
	{Version: a2a.ProtocolVersion, Default: true, SharesV1: true},
	{Version: V03, Default: true},
}

// Lookup returns the entry of a Major.Minor version.
func Lookup(mm string) (Protocol, bool) {
	i := slices.IndexFunc(protocols, func(p Protocol) bool { return p.Version == mm })
	if i < 0 {
		return Protocol{}, false
	}
	return protocols[i], true
}

// Known returns every version Parley can serve, newest first.
func Known() []string {
	out := make([]string, len(protocols))
	for i, p := range protocols {
		out[i] = p.Version
	}
	return out
}

// Defaults returns the versions served when none are given, newest first.
func Defaults() []string {
	var out []string
	for _, p := range protocols {
		if p.Default {
			out = append(out, p.Version)
		}
	}
	return out
}

// Sort orders versions as the table does, newest first; versions the
// table does not know go last.
func Sort(vs []string) {
	rank := func(v string) int {
		if i := slices.IndexFunc(protocols, func(p Protocol) bool { return p.Version == v }); i >= 0 {
			return i
		}
		return len(protocols)
	}
	slices.SortStableFunc(vs, func(a, b string) int { return rank(a) - rank(b) })
}

// ShowsGeneration reports whether a call served in version v (its
// a2a.CallInfo.Served) sees task generations (spec §3.2.7).
func ShowsGeneration(v string) bool {
	p, _ := Lookup(v)
	return p.Generation
}
