package a2ahttp

import (
	"maps"
	"net/http"
	"sync/atomic"
)

// TokenSet is a BearerTokens authenticator whose tokens can be replaced
// while the handler serves (when a token file is re-read, say). Replace
// swaps the whole set at once: a request is checked against the old set
// or the new one, never a mix of both. Put it in Options.Authenticators.
type TokenSet struct {
	tokens atomic.Pointer[map[string]string]
}

// NewTokenSet returns a set holding a copy of tokens (bearer token to
// principal name).
func NewTokenSet(tokens map[string]string) *TokenSet {
	s := &TokenSet{}
	s.Replace(tokens)
	return s
}

// Replace makes a copy of tokens the set every later request is checked
// against; the previous tokens stop working at once.
func (s *TokenSet) Replace(tokens map[string]string) {
	m := maps.Clone(tokens)
	if m == nil {
		m = map[string]string{}
	}
	s.tokens.Store(&m)
}

// Len is how many tokens the set holds.
func (s *TokenSet) Len() int { return len(*s.tokens.Load()) }

// Authenticate implements Authenticator as BearerTokens does: a request
// without a bearer token names nobody, and an unknown token is refused
// with ErrTokenRefused.
func (s *TokenSet) Authenticate(r *http.Request) (string, error) {
	return BearerTokens(*s.tokens.Load()).Authenticate(r)
}
