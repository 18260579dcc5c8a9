package cli_test

import (
	"os"
	"path/filepath"
	"strings"
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

// TestAPIKeyNewRights: `parley apikey new --rights` writes the rights as
// the key line's third field, and parley serve --api-keys gives that key
// only them (a send with a tasks:read key is refused, naming tasks:write,
// while a key made without --rights is served); an unknown right is a
// usage error.
func TestAPIKeyNewRights(t *testing.T) {
	readerOut, _ := mustRun(t, 0, "apikey", "new", "carol", "--rights", "tasks:read,card:extended")
	fullOut, _ := mustRun(t, 0, "apikey", "new", "alice")
	reader, full := strings.Split(strings.TrimSpace(readerOut), "\n"), strings.Split(strings.TrimSpace(fullOut), "\n")
	if f := strings.Fields(reader[1]); len(f) != 3 || f[2] != "tasks:read,card:extended" {
		t.Fatalf("key line with rights: %q, want NAME sha256:HEX tasks:read,card:extended", reader[1])
	}
	if f := strings.Fields(full[1]); len(f) != 2 {
		t.Fatalf("key line without rights: %q, want two fields", full[1])
	}
	keys := filepath.Join(t.TempDir(), "api-keys")
	if err := os.WriteFile(keys, []byte(reader[1]+"\n"+full[1]+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := serve(t, "--agent", "conformance", "--store", "memory", "--api-keys", keys)
	url := "http://" + p.addr
	out, _ := mustRun(t, 4, "send", "-a", url, "hello", "--api-key", reader[0], "-o", "json")
	if e, _ := jsonOf(t, out)["error"].(map[string]any); e["a2aCode"] != float64(403) {
		t.Errorf("send with a tasks:read key: %v, want a2aCode 403", e)
	}
	contains(t, "refusal", out, "tasks:write")
	mustRun(t, 0, "send", "-a", url, "hello", "--api-key", full[0])

	_, errOut := mustRun(t, 2, "apikey", "new", "dave", "--rights", "tasks:admin")
	contains(t, "unknown right", errOut, "tasks:admin")
	mustRun(t, 2, "apikey", "new", "dave", "--rights", ",")
}
