package cli

import (
	"errors"
	"flag"
	"io"
	"strings"
	"testing"
	"time"
)

// TestServeJWKSRefreshFlag: --jwks-refresh defaults to five minutes,
// reaches the JWT authenticator, and is refused below the 30 s floor
// between two key set fetches (a usage error).
func TestServeJWKSRefreshFlag(t *testing.T) {
	t.Parallel()
	load := func(args ...string) (*identityFlags, *identity, error) {
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		f := addIdentityFlags(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		id, err := f.load(false)
		return f, id, err
	}
	jwt := []string{"--jwt-jwks-url", "http://127.0.0.1:9/keys", "--jwt-audience", "https://agent.example"}

	f, id, err := load(jwt...)
	if err != nil || id.jwt == nil {
		t.Fatalf("JWT flags: %v", err)
	}
	if f.jwksRefresh != 5*time.Minute {
		t.Errorf("--jwks-refresh defaults to %v; want 5m", f.jwksRefresh)
	}
	if f, id, err = load(append(jwt, "--jwks-refresh", "45s")...); err != nil || id.jwt == nil || f.jwksRefresh != 45*time.Second {
		t.Fatalf("--jwks-refresh 45s: %v %v", f.jwksRefresh, err)
	}
	_, _, err = load(append(jwt, "--jwks-refresh", "10s")...)
	var usage usageError
	if !errors.As(err, &usage) || !strings.Contains(err.Error(), "--jwks-refresh") || !strings.Contains(err.Error(), "at least 30s") {
		t.Fatalf("--jwks-refresh 10s: %v; want a usage error naming the floor", err)
	}
}
