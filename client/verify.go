package client

import (
	"context"

	"parley.dev/parley/a2a"
)

// CardVerifier checks an agent card's signatures (spec §8.4) against keys
// its owner trusts. cardsign.Verifier is one: it trusts the keys or the
// key set URL it is given, and never a "jku" named by the card itself.
type CardVerifier interface {
	// VerifyCardJSON returns nil when the card document, the JSON bytes
	// received, carries a signature it accepts. A signature covers the
	// document as served (§8.4.1), so it is checked on those bytes and not
	// on a card decoded from them, which would drop what the decoder does
	// not know.
	VerifyCardJSON(ctx context.Context, card []byte) error
}

// verified returns card when v accepts body, the document it was read
// from, else a *CardError saying why.
func verified(ctx context.Context, u string, card *a2a.AgentCard, body []byte, v CardVerifier) (*a2a.AgentCard, error) {
	if err := v.VerifyCardJSON(ctx, body); err != nil {
		cardURL, _ := CardURL(u)
		return nil, &CardError{URL: cardURL, msg: "its signature does not verify", Err: err}
	}
	return card, nil
}
