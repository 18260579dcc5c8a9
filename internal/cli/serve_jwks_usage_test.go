package cli_test

import "testing"

// TestServeJWKSRefreshUsage: parley serve refuses a --jwks-refresh below
// 30 s before it serves anything, with exit 2 and the reason.
func TestServeJWKSRefreshUsage(t *testing.T) {
	t.Parallel()
	_, errs := mustRun(t, 2, "serve", "--store", "memory", "--jwks-refresh", "1s",
		"--jwt-jwks-url", "http://127.0.0.1:9/keys", "--jwt-audience", "https://agent.example")
	contains(t, "parley serve --jwks-refresh 1s", errs, "--jwks-refresh 1s: must be at least 30s")
}
