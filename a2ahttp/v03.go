package a2ahttp

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/v03"
	"parley.dev/parley/internal/version"
)

// Serving A2A v0.3 beside v1.0: unless Options.DisableV03, the JSON-RPC
// URL also answers the v0.3 method names, the HTTP+JSON base also serves
// the v0.3 routes under /v1/, and the card carries the v0.3 interfaces and
// top-level members.

// encodeCard encodes the public card document. The card first gets the
// bearer tokens' security scheme and requirement when it declares none
// (declareBearer). With the 1.1 preview on, it gains a 1.1 interface
// beside each v1.0 one (spec §3.6). With v0.3 on, the card then gains a 0.3 interface beside each JSON-RPC, HTTP+JSON and gRPC one and,
// having 0.3 interfaces, the v0.3 top-level members, which v1.0 readers
// ignore; then Options.CardSigner, when set, signs the whole document, so
// its signatures cover every member served. A card that comes signed
// without a CardSigner is served as it is encoded, nothing added: a
// member added would not be covered by its signatures, and a verifier
// that checks the document received (§8.4.3) would refuse the card.
func (h *Handler) encodeCard() ([]byte, error) {
	presigned := len(h.opts.Card.GetSignatures()) > 0 && h.opts.CardSigner == nil
	if !presigned {
		h.opts.Card = h.declareBearer(h.opts.Card)
	}
	if !presigned { // the newer versions served on the v1.0 bindings (the 1.1 preview)
		h.opts.Card = version.AddInterfaces(h.opts.Card, h.served)
	}
	if !h.opts.DisableV03 && !presigned {
		h.opts.Card = v03.AddInterfaces(h.opts.Card)
	}
	if h.opts.CardSigner != nil && len(h.opts.Card.GetSignatures()) > 0 {
		h.opts.Card = proto.Clone(h.opts.Card).(*a2a.AgentCard)
		h.opts.Card.Signatures = nil
	}
	card, err := a2a.Marshal(h.opts.Card)
	if err != nil {
		return nil, fmt.Errorf("a2ahttp: encoding the card: %w", err)
	}
	if !h.opts.DisableV03 && !presigned {
		card = v03.WithMembers(card, h.opts.Card)
	}
	if h.opts.CardSigner != nil {
		if card, err = h.opts.CardSigner(card); err != nil {
			return nil, fmt.Errorf("a2ahttp: signing the card: %w", err)
		}
	}
	return card, nil
}

// Card returns the public card as served (with the bearer tokens' security
// scheme added when the card declared none, and the 0.3 interfaces added
// when v0.3 is on), without the v0.3 top-level members and the
// signatures of Options.CardSigner.
func (h *Handler) Card() *a2a.AgentCard { return h.opts.Card }
