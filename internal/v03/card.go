package v03

import (
	"bytes"
	"encoding/json"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
)

// CardProtocolVersion is the protocolVersion a v0.3 card member states.
const CardProtocolVersion = "0.3.0"

// AddInterfaces returns a copy of card that also lists, for each of its
// v1.0 interfaces, the same URL with protocol version 0.3: Parley serves
// v0.3 at the same URLs (JSON-RPC by its method names, HTTP+JSON under
// /v1/, gRPC as the service a2a.v1.A2AService). The v1.0 interfaces stay
// first, so a v1.0 client keeps preferring them.
func AddInterfaces(card *a2a.AgentCard) *a2a.AgentCard {
	out := proto.Clone(card).(*a2a.AgentCard)
	for _, in := range card.GetSupportedInterfaces() {
		b := in.GetProtocolBinding()
		if (b != a2a.BindingJSONRPC && b != a2a.BindingHTTPJSON && b != a2a.BindingGRPC) || isV03(in.GetProtocolVersion()) {
			continue
		}
		if hasInterface(out, b, in.GetUrl()) {
			continue
		}
		out.SupportedInterfaces = append(out.SupportedInterfaces, &a2a.AgentInterface{
			Url: in.GetUrl(), ProtocolBinding: b, Tenant: in.GetTenant(), ProtocolVersion: ProtocolVersion})
	}
	return out
}

func hasInterface(card *a2a.AgentCard, binding, url string) bool {
	for _, in := range card.GetSupportedInterfaces() {
		if in.GetProtocolBinding() == binding && in.GetUrl() == url && isV03(in.GetProtocolVersion()) {
			return true
		}
	}
	return false
}

// isV03 reports whether a version string is 0.3 (any patch).
func isV03(v string) bool { return v == "0.3" || len(v) > 4 && v[:4] == "0.3." }

// cardMembers are the top-level members of a v0.3 card that a v1.0 card
// does not have.
type cardMembers struct {
	URL                  string                `json:"url"`
	PreferredTransport   string                `json:"preferredTransport"`
	ProtocolVersion      string                `json:"protocolVersion"`
	AdditionalInterfaces []cardInterface       `json:"additionalInterfaces,omitempty"`
	SupportsExtended     bool                  `json:"supportsAuthenticatedExtendedCard,omitempty"`
	Security             []map[string][]string `json:"security,omitempty"`
}

type cardInterface struct {
	URL       string `json:"url"`
	Transport string `json:"transport"`
}

// members works out the v0.3 members of card from its 0.3 interfaces
// (none: the card gets no v0.3 members).
func members(card *a2a.AgentCard) (cardMembers, bool) {
	var m cardMembers
	for _, in := range card.GetSupportedInterfaces() {
		if !isV03(in.GetProtocolVersion()) {
			continue
		}
		if m.URL == "" {
			m.URL, m.PreferredTransport = in.GetUrl(), in.GetProtocolBinding()
		}
		m.AdditionalInterfaces = append(m.AdditionalInterfaces, cardInterface{URL: in.GetUrl(), Transport: in.GetProtocolBinding()})
	}
	if m.URL == "" {
		return m, false
	}
	m.ProtocolVersion = CardProtocolVersion
	m.SupportsExtended = card.GetCapabilities().GetExtendedAgentCard()
	for _, req := range card.GetSecurityRequirements() {
		s := map[string][]string{}
		for name, scopes := range req.GetSchemes() {
			s[name] = append([]string{}, scopes.GetList()...)
		}
		m.Security = append(m.Security, s)
	}
	return m, true
}

// WithMembers adds the v0.3 top-level members of card (url,
// preferredTransport, protocolVersion, additionalInterfaces,
// supportsAuthenticatedExtendedCard, security) to v1json, the card's v1.0
// encoding, so that one document serves both generations. Members both
// versions name alike (name, skills, capabilities, …) are the v1.0 ones;
// securitySchemes keeps its v1.0 shape (lossy for v0.3 readers). A card
// without 0.3 interfaces is returned unchanged.
func WithMembers(v1json []byte, card *a2a.AgentCard) []byte {
	m, ok := members(card)
	if !ok {
		return v1json
	}
	extra, err := json.Marshal(m)
	body := bytes.TrimSpace(v1json)
	if err != nil || len(body) < 2 || body[len(body)-1] != '}' || len(extra) < 2 {
		return v1json
	}
	out := make([]byte, 0, len(body)+len(extra))
	out = append(out, body[:len(body)-1]...)
	if len(bytes.TrimSpace(body[1:len(body)-1])) > 0 {
		out = append(out, ',')
	}
	out = append(out, extra[1:]...)
	return out
}

// CardJSON is card as a v0.3 reader wants it: the v1.0 encoding with the
// v0.3 members (see WithMembers), the card's interfaces completed with
// their 0.3 twins (AddInterfaces).
func CardJSON(card *a2a.AgentCard) []byte {
	full := AddInterfaces(card)
	b, err := a2a.Marshal(full)
	if err != nil {
		return []byte("{}")
	}
	return WithMembers(b, full)
}
