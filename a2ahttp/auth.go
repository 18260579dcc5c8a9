package a2ahttp

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/httpx"
)

// Authenticator finds who sent a request from its headers (it must not
// read the body: authentication happens before the body is read). It may
// be called concurrently.
type Authenticator interface {
	// Authenticate returns the principal the request's credentials name,
	// or "" when it finds no credentials it understands (the next
	// authenticator is asked). A non-nil error refuses the request: the
	// credentials were recognised and are not valid. The error's message
	// reaches the client, so it must not echo the credentials.
	Authenticate(r *http.Request) (principal string, err error)
}

// RightsAuthenticator is an Authenticator whose credentials may carry
// rights (a2a.Rights): the handler asks it through AuthenticateRights and
// gives the call the rights it returns, which the core checks against the
// right each operation needs (a2a.Method.Right; spec §3.3.2). The
// authenticators of package authn, and TokenSet, are ones.
type RightsAuthenticator interface {
	Authenticator
	// AuthenticateRights is Authenticate with the rights of the
	// credentials: nil when they declare none (every right).
	AuthenticateRights(r *http.Request) (principal string, rights a2a.Rights, err error)
}

// AuthenticatorFunc adapts a function to an Authenticator.
type AuthenticatorFunc func(r *http.Request) (string, error)

// Authenticate implements Authenticator.
func (f AuthenticatorFunc) Authenticate(r *http.Request) (string, error) { return f(r) }

// ErrTokenRefused is BearerTokens' answer to a bearer token it does not
// know.
var ErrTokenRefused = errors.New("the bearer token was refused")

// BearerTokens authenticates "Authorization: Bearer TOKEN" against a fixed
// map of tokens to principals, comparing in constant time. A request
// without a bearer token names nobody; an unknown token is refused
// (ErrTokenRefused).
func BearerTokens(tokens map[string]string) Authenticator {
	return AuthenticatorFunc(func(r *http.Request) (string, error) {
		_, name, err := matchToken(tokens, r)
		return name, err
	})
}

// matchToken finds the request's bearer token among tokens (token to
// principal), comparing with every one in constant time, and returns it
// with its principal: "" for both when the request has no bearer token,
// ErrTokenRefused for an unknown one.
func matchToken(tokens map[string]string, r *http.Request) (token, name string, err error) {
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", "", nil
	}
	tok = strings.TrimSpace(tok)
	if tok == "" {
		return "", "", ErrTokenRefused // a scheme without a token matches nothing
	}
	for t, n := range tokens {
		if subtle.ConstantTimeCompare([]byte(t), []byte(tok)) == 1 {
			token, name = t, n
		}
	}
	if name == "" {
		return "", "", ErrTokenRefused
	}
	return token, name, nil
}

// checkTokens refuses a token map that would let a caller in without a
// secret, or as nobody: an empty token, or an empty principal.
func checkTokens(tokens map[string]string) error {
	for tok, name := range tokens {
		if strings.TrimSpace(tok) == "" {
			return fmt.Errorf("a2ahttp: Options.Tokens: principal %q has an empty bearer token", name)
		}
		if name == "" {
			return errors.New("a2ahttp: Options.Tokens: a bearer token has an empty principal name")
		}
	}
	return nil
}

// authRequired reports whether a request without a principal is refused
// here, before its body is read: some credential is configured and
// anonymous callers are not explicitly allowed.
func (h *Handler) authRequired() bool { return len(h.auth) > 0 && !h.opts.AllowAnonymous }

// authenticate records the request's caller in a CallInfo of its own: the
// principal an outer middleware set, else the first one an authenticator
// names. It returns an error for a request to refuse: credentials an
// authenticator refused, more than one Authorization header (a proxy
// reading the other one would disagree about who is calling), or no
// principal where one is required.
func (h *Handler) authenticate(r *http.Request) (*http.Request, *a2a.Error) {
	ci := &a2a.CallInfo{Decoded: true} // every protocol decodes and encodes each call for itself
	ctx := r.Context()
	outer := a2a.CallInfoFrom(ctx)
	if outer != nil && outer.Principal != "" {
		ci.Principal, ci.Rights = outer.Principal, outer.Rights
		return r.WithContext(a2a.WithCallInfo(ctx, ci)), nil
	}
	if len(r.Header.Values("Authorization")) > 1 {
		return r, a2a.NewError(a2a.CodeUnauthenticated, "more than one Authorization header")
	}
	for _, a := range h.auth {
		p, rights, err := authenticateWith(a, r)
		if err != nil {
			return r, refused(r, err)
		}
		if p != "" {
			ci.Principal, ci.Rights = p, rights
			break
		}
	}
	if ci.Principal == "" && h.authRequired() {
		return r, a2a.NewError(a2a.CodeUnauthenticated, "authentication required: no credentials were sent")
	}
	if outer != nil {
		// An outer middleware that gave rights (a2a.WithRights) without
		// naming the caller narrows what this call may do whoever the
		// authenticators find: rights only ever narrow (spec §3.3.2).
		ci.Rights = narrow(outer.Rights, ci.Rights)
	}
	return r.WithContext(a2a.WithCallInfo(ctx, ci)), nil
}

// narrow is the rights both a and b allow (nil, every right, when both
// are nil).
func narrow(a, b a2a.Rights) a2a.Rights {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	out := a2a.Rights{}
	for _, r := range slices.Concat(a, b) {
		if a.Has(r) && b.Has(r) && !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

// authenticateWith asks a, through AuthenticateRights when it is a
// RightsAuthenticator (otherwise its principal has every right).
func authenticateWith(a Authenticator, r *http.Request) (string, a2a.Rights, error) {
	if ra, ok := a.(RightsAuthenticator); ok {
		return ra.AuthenticateRights(r)
	}
	p, err := a.Authenticate(r)
	return p, nil, err
}

// refused is the error for credentials an authenticator refused. When they
// were a bearer token, its challenge says error="invalid_token" (RFC 6750
// §3.1; httpx.SetResponseHeaders writes it), which tells a client to get
// another token rather than to add one.
func refused(r *http.Request, err error) *a2a.Error {
	e := a2a.NewError(a2a.CodeUnauthenticated, "%v", err)
	if scheme, _, _ := strings.Cut(r.Header.Get("Authorization"), " "); strings.EqualFold(scheme, "Bearer") {
		e = e.WithMeta(httpx.MetaBearerError, "invalid_token")
	}
	return e
}
