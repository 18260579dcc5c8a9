package a2ahttp

import (
	"maps"
	"net/http"
	"slices"
	"sync/atomic"

	"parley.dev/parley/a2a"
)

// TokenSet is a BearerTokens authenticator whose tokens can be replaced
// while the handler serves (when a token file is re-read, say), and whose
// tokens may carry rights (a RightsAuthenticator). Replace swaps the whole
// set at once: a request is checked against the old set or the new one,
// never a mix of both. Put it in Options.Authenticators.
type TokenSet struct {
	tokens atomic.Pointer[tokenTable]
}

// tokenTable is one generation of a TokenSet.
type tokenTable struct {
	names  map[string]string     // token → principal
	rights map[string]a2a.Rights // token → its rights, for the tokens that declare some
}

// NewTokenSet returns a set holding a copy of tokens (bearer token to
// principal name), each with every right.
func NewTokenSet(tokens map[string]string) *TokenSet {
	s := &TokenSet{}
	s.Replace(tokens)
	return s
}

// Replace makes a copy of tokens the set every later request is checked
// against, each token with every right; the previous tokens stop working
// at once.
func (s *TokenSet) Replace(tokens map[string]string) { s.ReplaceWithRights(tokens, nil) }

// ReplaceWithRights is Replace, with the rights of some tokens (token to
// its rights; a token not in rights, or with nil rights, has every right).
func (s *TokenSet) ReplaceWithRights(tokens map[string]string, rights map[string]a2a.Rights) {
	t := &tokenTable{names: maps.Clone(tokens), rights: make(map[string]a2a.Rights, len(rights))}
	if t.names == nil {
		t.names = map[string]string{}
	}
	for tok, r := range rights {
		if r != nil {
			t.rights[tok] = slices.Clone(r)
		}
	}
	s.tokens.Store(t)
}

// Len is how many tokens the set holds.
func (s *TokenSet) Len() int { return len(s.tokens.Load().names) }

// Authenticate implements Authenticator as BearerTokens does: a request
// without a bearer token names nobody, and an unknown token is refused
// with ErrTokenRefused.
func (s *TokenSet) Authenticate(r *http.Request) (string, error) {
	p, _, err := s.AuthenticateRights(r)
	return p, err
}

// AuthenticateRights implements RightsAuthenticator: Authenticate, with
// the token's rights.
func (s *TokenSet) AuthenticateRights(r *http.Request) (string, a2a.Rights, error) {
	t := s.tokens.Load()
	tok, name, err := matchToken(t.names, r)
	if err != nil || name == "" {
		return "", nil, err
	}
	return name, slices.Clone(t.rights[tok]), nil
}
