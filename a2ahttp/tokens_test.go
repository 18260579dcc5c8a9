package a2ahttp_test

import (
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"parley.dev/parley/a2ahttp"
)

// TestEmptyTokensRefused: a token map that would let a caller in without
// a secret (an empty token) or as nobody (an empty principal) is refused
// when the server is configured, not met at the first request; and
// BearerTokens never matches an Authorization header that carries the
// scheme alone.
func TestEmptyTokensRefused(t *testing.T) {
	t.Parallel()
	for _, tokens := range []map[string]string{
		{"": "alice"},
		{"  ": "alice"},
		{"s3cret": ""},
		{"s3cret": "bob", "": "alice"},
	} {
		s, err := a2ahttp.Start(serveConfig(func(c *a2ahttp.ServeConfig) { c.Tokens = tokens }))
		if err == nil {
			s.Close()
			t.Errorf("Start with Tokens %q: no error", tokens)
		} else if !strings.Contains(err.Error(), "Options.Tokens") {
			t.Errorf("Start with Tokens %q: %v; want an error naming Options.Tokens", tokens, err)
		}
	}
	s, err := a2ahttp.Start(serveConfig(func(c *a2ahttp.ServeConfig) { c.Tokens = map[string]string{"s3cret": "bob"} }))
	if err != nil {
		t.Fatalf("Start with a sound token: %v", err)
	}
	s.Close()

	auth := a2ahttp.BearerTokens(map[string]string{"": "alice"})
	for _, header := range []string{"Bearer ", "Bearer   ", "bearer \t"} {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("Authorization", header)
		if who, err := auth.Authenticate(r); who != "" || !errors.Is(err, a2ahttp.ErrTokenRefused) {
			t.Errorf("Authorization %q = %q, %v; want ErrTokenRefused", header, who, err)
		}
	}
}
