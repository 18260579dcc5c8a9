package cli

import (
	"strings"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
)

// spoken reports whether this build has a transport for the interface's
// binding at its protocol version.
func spoken(in *a2a.AgentInterface) bool {
	mm := majorMinor(in.GetProtocolVersion())
	for _, f := range client.AllTransports() {
		if !strings.EqualFold(in.GetProtocolBinding(), f.Binding) {
			continue
		}
		if f.Version == mm || (f.Version == "" && strings.HasPrefix(mm, "1.")) || (f.Version == "" && mm == "") {
			return true
		}
	}
	return false
}

func majorMinor(v string) string {
	v = strings.TrimSpace(v)
	if parts := strings.Split(v, "."); len(parts) >= 2 {
		return parts[0] + "." + parts[1]
	}
	return v
}

// servedVersions says which A2A versions an agent's interfaces serve, in
// the card's order, and whether Parley will speak v0.3 to it.
func servedVersions(card *a2a.AgentCard) string {
	var vs []string
	v1 := false
	for _, in := range card.GetSupportedInterfaces() {
		mm := majorMinor(in.GetProtocolVersion())
		if mm == "" {
			mm = "unstated"
		}
		if strings.HasPrefix(mm, "1.") || mm == "unstated" {
			v1 = true
		}
		if !strings.Contains(","+strings.Join(vs, ",")+",", ","+mm+",") {
			vs = append(vs, mm)
		}
	}
	out := strings.Join(vs, ", ")
	if !v1 && len(vs) > 0 {
		out += " (no v1.0 interface: Parley speaks v0.3 to this agent)"
	}
	return out
}
