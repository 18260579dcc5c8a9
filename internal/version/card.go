package version

import (
	"strings"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
)

// AddInterfaces returns card with, for each version served that is
// reached through the v1.0 bindings (Protocol.SharesV1) other than v1.0
// itself, an interface of that version beside each v1.0 interface: the
// same URL, binding and tenant (spec §3.6: an agent may list one
// interface per version at one URL). The v1.0 interfaces stay first, so
// a v1.0 client keeps preferring them; the newer ones follow them, newest
// first. card is returned as it is when nothing is added, else a copy.
func AddInterfaces(card *a2a.AgentCard, served []string) *a2a.AgentCard {
	var add []string
	for _, v := range served {
		if p, ok := Lookup(v); ok && p.SharesV1 && v != a2a.ProtocolVersion {
			add = append(add, v)
		}
	}
	if len(add) == 0 {
		return card
	}
	out := proto.Clone(card).(*a2a.AgentCard)
	ins := out.SupportedInterfaces
	out.SupportedInterfaces = nil
	var twins []*a2a.AgentInterface
	for _, in := range ins {
		out.SupportedInterfaces = append(out.SupportedInterfaces, in)
		if in.GetProtocolVersion() != a2a.ProtocolVersion {
			continue
		}
		for _, v := range add {
			if !HasTwin(ins, in, v) {
				twins = append(twins, &a2a.AgentInterface{Url: in.GetUrl(), ProtocolBinding: in.GetProtocolBinding(),
					Tenant: in.GetTenant(), ProtocolVersion: v})
			}
		}
	}
	// The v1.0 interfaces first, in their order, then the twins: a v1.0
	// client that takes the first interface it can speak is unchanged.
	out.SupportedInterfaces = insertAfterV1(out.SupportedInterfaces, twins)
	return out
}

// HasTwin reports whether ins lists in's twin in version v: an interface
// of that version at in's URL, binding (named in any case) and tenant
// (spec §3.6: an agent may list one interface per version at one URL).
func HasTwin(ins []*a2a.AgentInterface, in *a2a.AgentInterface, v string) bool {
	for _, o := range ins {
		if strings.TrimSpace(o.GetProtocolVersion()) == v && strings.EqualFold(o.GetProtocolBinding(), in.GetProtocolBinding()) &&
			o.GetUrl() == in.GetUrl() && o.GetTenant() == in.GetTenant() {
			return true
		}
	}
	return false
}

// insertAfterV1 puts twins right after the last v1.0 interface of ins.
func insertAfterV1(ins, twins []*a2a.AgentInterface) []*a2a.AgentInterface {
	at := len(ins)
	for i, in := range ins {
		if in.GetProtocolVersion() == a2a.ProtocolVersion {
			at = i + 1
		}
	}
	out := make([]*a2a.AgentInterface, 0, len(ins)+len(twins))
	out = append(out, ins[:at]...)
	out = append(out, twins...)
	return append(out, ins[at:]...)
}
