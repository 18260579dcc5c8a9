package a2ahttp

import (
	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
)

// BearerSchemeName is the name under which a served card declares the
// bearer tokens of Options.Tokens or of a TokenSet: the key of its
// securitySchemes entry and of the securityRequirements that name it
// (spec §4.5).
const BearerSchemeName = "bearer"

// BearerScheme returns the security scheme of bearer tokens handed out by
// the server's operator: HTTP authentication with the scheme "Bearer"
// (spec §4.5.3), sent as "Authorization: Bearer TOKEN".
func BearerScheme() *a2a.SecurityScheme {
	return &a2a.SecurityScheme{Scheme: &a2a.SecurityScheme_HttpAuthSecurityScheme{
		HttpAuthSecurityScheme: &a2a.HTTPAuthSecurityScheme{Scheme: "Bearer", Description: "a token given by the server's operator"}}}
}

// bearerTokens reports whether the handler accepts bearer tokens it can
// name a scheme for: Options.Tokens, or a TokenSet among the
// Authenticators (whatever it holds now, since Replace may fill it later).
// Other authenticators are opaque: their schemes are the card's to
// declare.
func (h *Handler) bearerTokens() bool {
	if len(h.opts.Tokens) > 0 {
		return true
	}
	for _, a := range h.opts.Authenticators {
		if _, ok := a.(*TokenSet); ok {
			return true
		}
	}
	return false
}

// declareBearer returns card with the bearer tokens declared, so that a
// client learns from the card that it needs one (spec §4.5, §7.3): when
// the handler accepts bearer tokens and card declares neither security
// schemes nor security requirements, a copy of card gets the scheme
// BearerScheme under BearerSchemeName and a requirement naming it, and,
// with AllowAnonymous, an empty requirement (no credentials needed
// either). A card that declares any scheme or requirement is its author's
// declaration and is returned as it is, as is a card when no bearer tokens
// are accepted.
func (h *Handler) declareBearer(card *a2a.AgentCard) *a2a.AgentCard {
	if !h.bearerTokens() || len(card.GetSecuritySchemes()) > 0 || len(card.GetSecurityRequirements()) > 0 {
		return card
	}
	out := proto.Clone(card).(*a2a.AgentCard)
	out.SecuritySchemes = map[string]*a2a.SecurityScheme{BearerSchemeName: BearerScheme()}
	out.SecurityRequirements = []*a2a.SecurityRequirement{{Schemes: map[string]*a2a.StringList{BearerSchemeName: {}}}}
	if h.opts.AllowAnonymous {
		out.SecurityRequirements = append(out.SecurityRequirements, &a2a.SecurityRequirement{})
	}
	return out
}
