package push

import "net/netip"

// What the guard refuses by default. Brief §13.2 asks for the private
// ranges, loopback and link-local to be refused; the tables below go
// further and refuse every range of the IANA special-purpose registries
// (IPv4 and IPv6) that is not a public unicast destination, since a webhook
// has no business there either (documentation, benchmarking, reserved,
// multicast...). For IPv6 the rule is an allowlist: only global unicast
// (2000::/3) is acceptable, so space IANA has never allocated is refused
// without being listed.
//
// Addresses that embed an IPv4 address (decided here, as the spec is
// silent):
//   - IPv4-mapped ::ffff:0:0/96 is the IPv4 address itself (Go dials it
//     over IPv4): judged as that IPv4 address.
//   - NAT64 64:ff9b::/96 (RFC 6052) is how an IPv6-only network reaches
//     IPv4 hosts through DNS64, so it must work for public hosts: judged
//     by the embedded IPv4 address, refused when that one is.
//   - 6to4 2002::/16 is global unicast: judged by the embedded IPv4
//     address, refused when that one is.
//   - IPv4-translated ::ffff:0:0:0/96 (RFC 2765, SIIT), IPv4-compatible
//     ::/96 and local-use NAT64 64:ff9b:1::/48 are not globally routable
//     and are refused whatever they embed.
//   - Teredo 2001::/32 tunnels to an IPv4 host named inside the address;
//     no webhook needs it, so the whole range is refused.

// span is a refused range and the reason given for it.
type span struct {
	prefix netip.Prefix
	reason string
}

func spans(rows ...[2]string) []span {
	out := make([]span, len(rows))
	for i, r := range rows {
		out[i] = span{netip.MustParsePrefix(r[0]), r[1]}
	}
	return out
}

// refusedV4 is searched in order; the first match gives the reason.
var refusedV4 = spans(
	[2]string{"0.0.0.0/32", "unspecified"},
	[2]string{"0.0.0.0/8", "this network"},
	[2]string{"10.0.0.0/8", "private"},
	[2]string{"100.64.0.0/10", "shared address space (carrier-grade NAT)"},
	[2]string{"127.0.0.0/8", "loopback"},
	[2]string{"169.254.0.0/16", "link-local"},
	[2]string{"172.16.0.0/12", "private"},
	[2]string{"192.0.0.0/24", "IETF protocol assignments"},
	[2]string{"192.0.2.0/24", "documentation"},
	[2]string{"192.88.99.0/24", "6to4 relay anycast (deprecated)"},
	[2]string{"192.168.0.0/16", "private"},
	[2]string{"198.18.0.0/15", "benchmarking"},
	[2]string{"198.51.100.0/24", "documentation"},
	[2]string{"203.0.113.0/24", "documentation"},
	[2]string{"224.0.0.0/4", "multicast"},
	[2]string{"255.255.255.255/32", "broadcast"},
	[2]string{"240.0.0.0/4", "reserved"},
)

// refusedV6 is searched in order, after the ranges that embed an IPv4
// address; the first match gives the reason. Ranges outside 2000::/3 are
// listed only to give a precise reason: globalV6 refuses them anyway.
var refusedV6 = spans(
	[2]string{"::/128", "unspecified"},
	[2]string{"::1/128", "loopback"},
	[2]string{"::/96", "IPv4-compatible (deprecated)"},
	[2]string{"::ffff:0:0:0/96", "IPv4-translated"},
	[2]string{"64:ff9b:1::/48", "local-use NAT64"},
	[2]string{"100::/64", "discard-only"},
	[2]string{"2001::/32", "Teredo"},
	[2]string{"2001:2::/48", "benchmarking"},
	[2]string{"2001::/23", "IETF protocol assignments"},
	[2]string{"2001:db8::/32", "documentation"},
	[2]string{"3fff::/20", "documentation"},
	[2]string{"fc00::/7", "private (unique local)"},
	[2]string{"fe80::/10", "link-local"},
	[2]string{"fec0::/10", "site-local (deprecated)"},
	[2]string{"ff00::/8", "multicast"},
)

var (
	globalV6  = netip.MustParsePrefix("2000::/3")     // IPv6 global unicast
	nat64     = netip.MustParsePrefix("64:ff9b::/96") // NAT64 well-known prefix, IPv4 in the last 32 bits
	sixToFour = netip.MustParsePrefix("2002::/16")    // 6to4, IPv4 in bits 16-47
)

// Forbidden reports whether the guard refuses an address by default, and
// why. Refused: loopback, private (10/8, 172.16/12, 192.168/16, fc00::/7),
// link-local (169.254/16, fe80::/10), unspecified, "this network" 0/8,
// shared address space 100.64/10, multicast, broadcast and reserved
// 240/4, the documentation and benchmarking ranges, the IETF protocol
// assignments (192.0.0/24, 2001::/23, Teredo among them), discard-only
// 100::/64, and every IPv6 address outside global unicast 2000::/3. An
// IPv4-mapped address is judged as its IPv4 address; NAT64 (64:ff9b::/96)
// and 6to4 (2002::/16) addresses are refused when the IPv4 address they
// embed is. An IPv6 zone is ignored. The reason never holds the address.
func Forbidden(a netip.Addr) (reason string, forbidden bool) {
	return forbiddenNormal(a.Unmap().WithZone(""))
}

// forbiddenNormal is Forbidden of an address already unmapped and without
// its zone.
func forbiddenNormal(a netip.Addr) (string, bool) {
	if !a.IsValid() {
		return "invalid", true
	}
	if a.Is4() {
		for _, s := range refusedV4 {
			if s.prefix.Contains(a) {
				return s.reason, true
			}
		}
		return "", false
	}
	b := a.As16()
	switch {
	case nat64.Contains(a):
		return embedded("NAT64", netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}))
	case sixToFour.Contains(a):
		return embedded("6to4", netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}))
	}
	for _, s := range refusedV6 {
		if s.prefix.Contains(a) {
			return s.reason, true
		}
	}
	if !globalV6.Contains(a) {
		return "not global unicast", true
	}
	return "", false
}

// embedded judges an address that embeds v4 by v4.
func embedded(kind string, v4 netip.Addr) (string, bool) {
	if r, bad := forbiddenNormal(v4); bad {
		return kind + " (embedded IPv4: " + r + ")", true
	}
	return "", false
}
