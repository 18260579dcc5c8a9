package a2ahttp

import (
	"context"
	"crypto/subtle"
	"iter"
	"net/http"
	"strings"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
)

// Authenticator finds who sent a request from its credentials. It may be
// called concurrently.
type Authenticator interface {
	// Authenticate returns the principal the request's credentials name,
	// or "" when it finds no credentials it understands (the next
	// authenticator is asked). A non-nil error refuses the request: the
	// credentials were recognised and are not valid. The error's message
	// reaches the client, so it must not echo the credentials.
	Authenticate(r *http.Request) (principal string, err error)
}

// AuthenticatorFunc adapts a function to an Authenticator.
type AuthenticatorFunc func(r *http.Request) (string, error)

// Authenticate implements Authenticator.
func (f AuthenticatorFunc) Authenticate(r *http.Request) (string, error) { return f(r) }

// BearerTokens authenticates "Authorization: Bearer TOKEN" against a fixed
// map of tokens to principals, comparing in constant time. An unknown token
// names nobody (the request goes on as anonymous, and the core refuses it
// when authentication is required).
func BearerTokens(tokens map[string]string) Authenticator {
	return AuthenticatorFunc(func(r *http.Request) (string, error) {
		scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") {
			return "", nil
		}
		tok = strings.TrimSpace(tok)
		name := ""
		for t, n := range tokens {
			if subtle.ConstantTimeCompare([]byte(t), []byte(tok)) == 1 {
				name = n
			}
		}
		return name, nil
	})
}

// authenticate records the request's caller in a CallInfo of its own: the
// principal an outer middleware set, else the first one an authenticator
// names. A refusal is kept in the context for refuseUnauthenticated, so
// that it is answered in the caller's binding like any other error.
func (h *Handler) authenticate(r *http.Request) *http.Request {
	ci := &a2a.CallInfo{}
	ctx := r.Context()
	if outer := a2a.CallInfoFrom(ctx); outer != nil && outer.Principal != "" {
		ci.Principal = outer.Principal
		return r.WithContext(a2a.WithCallInfo(ctx, ci))
	}
	for _, a := range h.auth {
		p, err := a.Authenticate(r)
		if err != nil {
			ctx = context.WithValue(ctx, refusedKey{}, a2a.NewError(a2a.CodeUnauthenticated, "%v", err))
			break
		}
		if p != "" {
			ci.Principal = p
			break
		}
	}
	return r.WithContext(a2a.WithCallInfo(ctx, ci))
}

type refusedKey struct{}

// refuseUnauthenticated is the outermost middleware of every
// binding: it ends a call whose credentials an Authenticator refused.
func refuseUnauthenticated(next a2a.Invoker) a2a.Invoker {
	return a2a.InvokerFuncs{
		Next: next,
		CallFunc: func(ctx context.Context, m *a2a.Method, req proto.Message) (proto.Message, error) {
			if err, ok := ctx.Value(refusedKey{}).(*a2a.Error); ok {
				return nil, err
			}
			return next.Call(ctx, m, req)
		},
		StreamFunc: func(ctx context.Context, m *a2a.Method, req proto.Message) iter.Seq2[a2a.StreamEvent, error] {
			if err, ok := ctx.Value(refusedKey{}).(*a2a.Error); ok {
				return func(yield func(a2a.StreamEvent, error) bool) { yield(a2a.StreamEvent{}, err) }
			}
			return next.Stream(ctx, m, req)
		},
	}
}
