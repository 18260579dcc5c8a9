package v03

import (
	"encoding/json"
	"fmt"

	"parley.dev/parley/a2a"
)

// legacyCard is what a v0.3 card has that a v1.0 card does not.
type legacyCard struct {
	URL                  string          `json:"url"`
	PreferredTransport   string          `json:"preferredTransport"`
	ProtocolVersion      string          `json:"protocolVersion"`
	AdditionalInterfaces []cardInterface `json:"additionalInterfaces"`
	SupportsExtended     bool            `json:"supportsAuthenticatedExtendedCard"`
}

// IsCard reports whether a card document is a v0.3 card: a top-level url
// or protocolVersion and no supportedInterfaces.
func IsCard(body []byte) bool {
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil {
		return false
	}
	_, ifaces := top["supportedInterfaces"]
	_, snake := top["supported_interfaces"]
	_, url := top["url"]
	_, pv := top["protocolVersion"]
	return !ifaces && !snake && (url || pv)
}

// CardToV1 reads a v0.3 card as a v1.0 card: the members both versions
// share as they are, url with preferredTransport (JSONRPC when absent)
// and additionalInterfaces as supportedInterfaces at protocol version 0.3,
// supportsAuthenticatedExtendedCard as capabilities.extendedAgentCard.
// Lossy: v0.3 securitySchemes and security, whose shapes differ from
// v1.0's, are dropped (the client learns how to authenticate elsewhere).
func CardToV1(body []byte) (*a2a.AgentCard, error) {
	var lc legacyCard
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(body, &lc); err != nil {
		return nil, err
	}
	delete(top, "securitySchemes")
	delete(top, "security")
	for _, k := range []string{"url", "preferredTransport", "protocolVersion", "additionalInterfaces", "supportsAuthenticatedExtendedCard"} {
		delete(top, k)
	}
	rest, _ := json.Marshal(top)
	card := &a2a.AgentCard{}
	if err := a2a.Unmarshal(rest, card); err != nil {
		return nil, err
	}
	if lc.URL == "" {
		return nil, fmt.Errorf("the v0.3 card has no url")
	}
	add := func(url, binding string) {
		if binding == "" {
			binding = a2a.BindingJSONRPC
		}
		for _, in := range card.SupportedInterfaces {
			if in.Url == url && in.ProtocolBinding == binding {
				return
			}
		}
		card.SupportedInterfaces = append(card.SupportedInterfaces, &a2a.AgentInterface{Url: url, ProtocolBinding: binding, ProtocolVersion: ProtocolVersion})
	}
	add(lc.URL, lc.PreferredTransport)
	for _, in := range lc.AdditionalInterfaces {
		if in.URL != "" {
			add(in.URL, in.Transport)
		}
	}
	if lc.SupportsExtended {
		if card.Capabilities == nil {
			card.Capabilities = &a2a.AgentCapabilities{}
		}
		t := true
		card.Capabilities.ExtendedAgentCard = &t
	}
	return card, nil
}
