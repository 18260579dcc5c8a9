package a2ahttp

import (
	"fmt"

	"parley.dev/parley/a2a"
	"parley.dev/parley/v03"
)

// Serving A2A v0.3 beside v1.0 (docs/versions.md): unless
// Options.DisableV03, the JSON-RPC URL also answers the v0.3 method names,
// the HTTP+JSON base also serves the v0.3 routes under /v1/, and the card
// carries the v0.3 interfaces and top-level members.

// encodeCard encodes the public card. With v0.3 on, an unsigned card
// gains a 0.3 interface beside each JSON-RPC and HTTP+JSON one (a signed
// card is served as signed: add them with v03.AddInterfaces before
// signing), and a card with 0.3 interfaces gains the v0.3 top-level
// members, which v1.0 readers ignore and signatures do not cover.
func (h *Handler) encodeCard() ([]byte, error) {
	if !h.opts.DisableV03 && len(h.opts.Card.GetSignatures()) == 0 {
		h.opts.Card = v03.AddInterfaces(h.opts.Card)
	}
	card, err := a2a.Marshal(h.opts.Card)
	if err != nil {
		return nil, fmt.Errorf("a2ahttp: encoding the card: %w", err)
	}
	if !h.opts.DisableV03 {
		card = v03.WithMembers(card, h.opts.Card)
	}
	return card, nil
}

// Card returns the public card as served (with the 0.3 interfaces added
// when v0.3 is on), without the v0.3 top-level members.
func (h *Handler) Card() *a2a.AgentCard { return h.opts.Card }
