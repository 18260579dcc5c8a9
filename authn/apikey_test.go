package authn_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"parley.dev/parley/authn"
)

func TestAPIKeysRightWrongRevoked(t *testing.T) {
	aliceKey, aliceLine, err := authn.NewAPIKey("alice")
	if err != nil {
		t.Fatal(err)
	}
	bobKey, bobLine, _ := authn.NewAPIKey("bob")
	if strings.Contains(aliceLine, aliceKey) || !strings.HasPrefix(aliceKey, "pk_") {
		t.Fatalf("key %q, line %q: the file line must hold the hash only", aliceKey, aliceLine)
	}
	file := filepath.Join(t.TempDir(), "keys")
	os.WriteFile(file, []byte("# team keys\n"+aliceLine+"\n\n"+bobLine+"  # bob's laptop\n"), 0o600)
	keys, err := authn.LoadAPIKeys(file)
	if err != nil {
		t.Fatal(err)
	}
	req := func(vals ...string) *http.Request {
		r, _ := http.NewRequest(http.MethodGet, "/", nil)
		for _, v := range vals {
			r.Header.Add(authn.APIKeyHeader, v)
		}
		return r
	}
	for key, want := range map[string]string{aliceKey: "alice", bobKey: "bob"} {
		if p, err := keys.Authenticate(req(key)); err != nil || p != want {
			t.Errorf("right key: %q, %v; want %s", p, err, want)
		}
	}
	if p, err := keys.Authenticate(req()); p != "" || err != nil {
		t.Errorf("no key: %q, %v", p, err)
	}
	for _, bad := range [][]string{{aliceKey + "x"}, {"pk_wrong"}, {strings.Repeat("k", 1000)}, {aliceKey, bobKey}} {
		if p, err := keys.Authenticate(req(bad...)); err == nil {
			t.Errorf("wrong key %.20q accepted as %q", bad, p)
		}
	}
	// Revoke bob: remove his line and reload.
	os.WriteFile(file, []byte(aliceLine+"\n"), 0o600)
	if err := keys.Reload(); err != nil {
		t.Fatal(err)
	}
	if p, err := keys.Authenticate(req(bobKey)); err == nil {
		t.Errorf("revoked key accepted as %q", p)
	}
	if p, _ := keys.Authenticate(req(aliceKey)); p != "alice" {
		t.Error("alice's key stopped working")
	}
	// A broken file keeps the keys in use.
	os.WriteFile(file, []byte("alice md5:00\n"), 0o600)
	if err := keys.Reload(); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("broken file: %v", err)
	}
	if p, _ := keys.Authenticate(req(aliceKey)); p != "alice" {
		t.Error("a failed reload dropped the keys")
	}
}

func TestNewAPIKeyNames(t *testing.T) {
	for _, name := range []string{"", "a b", "x#y"} {
		if _, _, err := authn.NewAPIKey(name); err == nil {
			t.Errorf("NewAPIKey(%q) accepted", name)
		}
	}
}
