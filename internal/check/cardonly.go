package check

import (
	"context"
	"errors"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
)

// CheckCard runs the checks of the agent card alone, the ones Run begins
// with, and returns their report and the card when it could be read (nil
// when a check stopped the others). parley inspect shows them next to the
// card. Like Run, it returns an error only when nothing could be checked.
func CheckCard(ctx context.Context, opts Options) (*Report, *a2a.AgentCard, error) {
	if opts.URL == "" {
		return nil, nil, errors.New("check: no URL")
	}
	cardURL, err := client.CardURL(opts.URL)
	if err != nil {
		return nil, nil, err
	}
	s := newSession(opts, cardURL)
	card, err := s.cardChecks(ctx)
	if err != nil {
		return nil, nil, err
	}
	if card != nil {
		s.rep.Agent = card.GetName()
	}
	s.finish()
	return s.rep, card, nil
}
