// Command oidcop runs the OpenID provider of the zitadel/oidc module's
// example (github.com/zitadel/oidc/v3/example/server: its storage, login
// and device pages, and the library's provider), as it is, with the
// clients the tests of `parley auth login` sign in as. It listens on
// 127.0.0.1:$PORT with the issuer http://localhost:$PORT/.
//
// The example's own main registers no client that may use the device
// flow, and issues opaque access tokens; Parley's agent verifies JWTs
// (serve --jwt-issuer). So the clients registered here are the example's
// own constructors, wrapped to allow the device grant and to be issued
// JWT access tokens: that is all this command adds, besides
// $ACCESS_TOKEN_LIFETIME (a Go duration, say 12s), which shortens the
// lifetime of the access tokens issued (the example's is 5 minutes), so
// that a test can see a token expire during one command.
package main

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"time"

	"github.com/zitadel/oidc/v3/example/server/exampleop"
	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// The clients of the tests.
const (
	// NativeClient is a public client (PKCE, loopback redirect, RFC 8252)
	// that may also use the device flow.
	NativeClient = "parley-cli"
	// ServiceClient is the example's service user (client credentials).
	ServiceClient = "sid1"
)

func main() {
	port := os.Getenv("PORT")
	if port == "" {
		port = "9998"
	}
	issuer := "http://localhost:" + port + "/"
	storage.RegisterClients(storage.NativeClient(NativeClient, "http://127.0.0.1/callback"))
	store := &jwtStorage{Storage: storage.NewStorage(storage.NewUserStore(issuer))}
	if v := os.Getenv("ACCESS_TOKEN_LIFETIME"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			slog.Error("ACCESS_TOKEN_LIFETIME: want a positive duration", "value", v)
			os.Exit(2)
		}
		store.lifetime = d
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	router := exampleop.SetupServer(issuer, store, logger, false)
	ln := "127.0.0.1:" + port
	logger.Warn("listening", "addr", ln, "issuer", issuer)
	if err := http.ListenAndServe(ln, router); err != nil {
		logger.Error("serve", "error", err)
		os.Exit(1)
	}
}

// jwtStorage is the example's storage, its clients issued JWT access
// tokens, the native one also allowed the device grant, the tokens living
// at most lifetime when it is set.
type jwtStorage struct {
	*storage.Storage
	lifetime time.Duration
}

// expiry shortens exp to the configured lifetime.
func (s *jwtStorage) expiry(exp time.Time) time.Time {
	if short := time.Now().Add(s.lifetime); s.lifetime > 0 && short.Before(exp) {
		return short
	}
	return exp
}

func (s *jwtStorage) CreateAccessToken(ctx context.Context, req op.TokenRequest) (string, time.Time, error) {
	id, exp, err := s.Storage.CreateAccessToken(ctx, req)
	return id, s.expiry(exp), err
}

func (s *jwtStorage) CreateAccessAndRefreshTokens(ctx context.Context, req op.TokenRequest, refresh string) (string, string, time.Time, error) {
	id, next, exp, err := s.Storage.CreateAccessAndRefreshTokens(ctx, req, refresh)
	return id, next, s.expiry(exp), err
}

func (s *jwtStorage) GetClientByClientID(ctx context.Context, id string) (op.Client, error) {
	c, err := s.Storage.GetClientByClientID(ctx, id)
	if err != nil {
		return nil, err
	}
	return jwtClient{c}, nil
}

func (s *jwtStorage) ClientCredentials(ctx context.Context, id, secret string) (op.Client, error) {
	c, err := s.Storage.ClientCredentials(ctx, id, secret)
	if err != nil {
		return nil, err
	}
	return jwtClient{c}, nil
}

// jwtClient is a client issued JWT access tokens; a client that may use
// the authorization code may use the device grant too.
type jwtClient struct{ op.Client }

func (jwtClient) AccessTokenType() op.AccessTokenType { return op.AccessTokenTypeJWT }

func (c jwtClient) GrantTypes() []oidc.GrantType {
	g := c.Client.GrantTypes()
	if slices.Contains(g, oidc.GrantTypeCode) {
		g = append(slices.Clone(g), oidc.GrantTypeDeviceCode)
	}
	return g
}
