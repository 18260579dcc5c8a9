package check

import (
	"context"
	"fmt"

	"parley.dev/parley/a2a"
)

// extendedCardSteps grade GetExtendedAgentCard (B13) when the card
// declares an extended card.
var extendedCardSteps = []step[*bindingRun]{
	{Result{ID: "B13.not-declared", Row: "B13", Operation: a2a.MethodGetExtendedAgentCard, Title: "GetExtendedAgentCard when the card does not declare it",
		Level: "MUST", Section: "§13.3", Requires: "UnsupportedOperationError when not declared"},
		func(_ *bindingRun, _ context.Context, r *rec) { r.na("the card declares an extended agent card") }},
	{Result{ID: "B13.anonymous", Row: "B13", Operation: a2a.MethodGetExtendedAgentCard, Title: "an anonymous caller does not get the extended card",
		Level: "MUST", Section: "§13.3, §3.1.11",
		Requires: "The Get Extended Agent Card operation MUST require authentication, with one of the schemes the public card declares"},
		(*bindingRun).extendedCardAnonymous},
	{Result{ID: "B13.authenticated", Row: "B13", Operation: a2a.MethodGetExtendedAgentCard, Title: "an authenticated caller gets the extended card",
		Level: "MUST", Section: "§3.1.11, §13.3",
		Requires: "declared and configured: the extended AgentCard; declared but not configured: ExtendedAgentCardNotConfiguredError"},
		(*bindingRun).extendedCardAuthenticated},
}

// undeclaredExtendedCardSteps grade GetExtendedAgentCard (B13) when the
// card does not declare an extended card.
var undeclaredExtendedCardSteps = []step[*bindingRun]{
	{Result{ID: "B13.not-declared", Row: "B13", Operation: a2a.MethodGetExtendedAgentCard, Title: "GetExtendedAgentCard when the card does not declare it",
		Level: "MUST", Section: "§3.1.11, §13.3",
		Requires: "When capabilities.extendedAgentCard is false or not present, the operation MUST return UnsupportedOperationError"},
		(*bindingRun).extendedCardUndeclared},
	{Result{ID: "B13.anonymous", Row: "B13", Operation: a2a.MethodGetExtendedAgentCard, Title: "extended card access", Level: "MUST", Section: "§13.3",
		Requires: "The Get Extended Agent Card operation MUST require authentication"},
		extendedCardNotDeclared},
	{Result{ID: "B13.authenticated", Row: "B13", Operation: a2a.MethodGetExtendedAgentCard, Title: "extended card access", Level: "MUST", Section: "§13.3",
		Requires: "The Get Extended Agent Card operation MUST require authentication"},
		extendedCardNotDeclared},
}

// extendedCardChecks grades GetExtendedAgentCard (B13).
func (b *bindingRun) extendedCardChecks(ctx context.Context) {
	if b.s.card.GetCapabilities().GetExtendedAgentCard() {
		runSteps(ctx, b, b, extendedCardSteps)
	} else {
		runSteps(ctx, b, b, undeclaredExtendedCardSteps)
	}
}

func extendedCardNotDeclared(_ *bindingRun, _ context.Context, r *rec) {
	r.na("the card does not declare an extended agent card")
}

func (b *bindingRun) extendedCardUndeclared(ctx context.Context, r *rec) {
	res := b.t.call(ctx, a2a.MethodGetExtendedAgentCard, &a2a.GetExtendedAgentCardRequest{}, callOpts{})
	r.expectSame(b.t.binding, res, a2a.CodeUnsupportedOperation)
	b.probes["GetExtendedAgentCard"] = outcomeKey(res)
}

func (b *bindingRun) extendedCardAnonymous(ctx context.Context, r *rec) {
	res := b.t.call(ctx, a2a.MethodGetExtendedAgentCard, &a2a.GetExtendedAgentCardRequest{}, callOpts{token: new("")})
	r.saw(res)
	b.probes["GetExtendedAgentCard without credentials"] = outcomeKey(res)
	if r.incomplete(res) {
		return
	}
	if finding, ok := anonymousRefused(res.err); ok {
		if res.err.is(a2a.CodeUnauthenticated) {
			r.same()
		} else {
			r.differs("Parley answers 401 with WWW-Authenticate")
		}
		r.pass("%s", finding)
		return
	}
	switch {
	case res.ok():
		got := &a2a.AgentCard{}
		_ = res.decode(got)
		note := ""
		if got.GetName() == b.s.card.GetName() {
			note = fmt.Sprintf(" (a card named %q like the public card: nothing extra leaked, but the operation did not require authentication)", got.GetName())
		}
		r.differs("Parley answers 401 with WWW-Authenticate").fail("an anonymous caller got a card%s", note)
	case res.err.is(a2a.CodeExtendedAgentCardNotConfigured):
		r.na("ExtendedAgentCardNotConfiguredError: nothing to protect, so whether authentication is required cannot be seen")
	default:
		r.warn("refused with %s rather than an authentication error", describeError(res.err))
	}
}

func (b *bindingRun) extendedCardAuthenticated(ctx context.Context, r *rec) {
	if !r.needs(b.t.token != "", "no --token given") {
		return
	}
	res := b.t.call(ctx, a2a.MethodGetExtendedAgentCard, &a2a.GetExtendedAgentCardRequest{}, callOpts{})
	if !r.gradable(res) {
		return
	}
	switch {
	case res.ok():
		got := &a2a.AgentCard{}
		if err := res.decode(got); err != nil {
			r.fail("the result is not an AgentCard: %v", err)
		} else if miss := firstMissing(got); miss != "" {
			r.fail("the extended card lacks REQUIRED members: %s", miss)
		} else {
			r.pass("card %q", got.GetName())
		}
	case res.err.is(a2a.CodeExtendedAgentCardNotConfigured):
		r.pass("%s", describeError(res.err))
	default:
		r.warn("the --token caller was refused: %s", describeError(res.err))
	}
}
