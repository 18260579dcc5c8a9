package client

import (
	"context"

	"parley.dev/parley/a2a"
)

// CardVerifier checks an agent card's signatures (spec §8.4) against keys
// its owner trusts. cardsign.Verifier is one: it trusts the keys or the
// key set URL it is given, and never a "jku" named by the card itself.
type CardVerifier interface {
	// VerifyCard returns nil when the card carries a signature it
	// accepts.
	VerifyCard(ctx context.Context, card *a2a.AgentCard) error
}

// verified returns card when v accepts it, else a *CardError saying why.
func verified(ctx context.Context, u string, card *a2a.AgentCard, v CardVerifier) (*a2a.AgentCard, error) {
	if err := v.VerifyCard(ctx, card); err != nil {
		cardURL, _ := CardURL(u)
		return nil, &CardError{URL: cardURL, msg: "its signature does not verify", Err: err}
	}
	return card, nil
}
