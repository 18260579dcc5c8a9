package cli_test

import (
	"testing"
)

// TestServeTokenRights: parley serve gives a token only the rights after
// its colon; a client command refused for want of one exits 4 with
// A2ACLI_ERR_AUTH_FAILED, a2aCode 403 and the right named, on every
// binding, while the full token is served.
func TestServeTokenRights(t *testing.T) {
	p := serve(t, "--agent", "conformance", "--store", "memory", "--auth-token", "alice=tok-a",
		"--auth-token", "carol=tok-c:tasks:read", "--capabilities", "extended-card")
	url := "http://" + p.addr
	for _, binding := range []string{"jsonrpc", "rest", "grpc"} {
		out, _ := mustRun(t, 4, "send", "-a", url, "hello", "--bearer", "tok-c", "--transport", binding, "-o", "json")
		e := jsonOf(t, out)["error"].(map[string]any)
		if e["code"] != "A2ACLI_ERR_AUTH_FAILED" || e["a2aCode"] != float64(403) {
			t.Errorf("%s: send with a tasks:read token: %v, want A2ACLI_ERR_AUTH_FAILED and a2aCode 403", binding, e)
		}
		contains(t, binding+" refusal", out, "tasks:write")
		mustRun(t, 0, "send", "-a", url, "hello", "--bearer", "tok-a", "--transport", binding)
	}
	out, _ := mustRun(t, 4, "card", "get", "-a", url, "--extended", "--bearer", "tok-c", "-o", "json")
	contains(t, "extended card refusal", out, "card:extended", "A2ACLI_ERR_AUTH_FAILED")
	mustRun(t, 0, "card", "get", "-a", url, "--extended", "--bearer", "tok-a")
	// An unknown right is a usage error at start.
	mustRun(t, 2, "serve", "--store", "memory", "--auth-token", "carol=tok-c:tasks:admin")
}
