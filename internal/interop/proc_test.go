package interop_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"parley.dev/parley/internal/testenv"
	"parley.dev/parley/internal/testkit"
)

// jsSDKVersion is the exact @a2a-js/sdk release the interop check is pinned to
// (see internal/interop/js/package.json).
const jsSDKVersion = "1.3.0"

// jsDir is the directory of the JavaScript side of the interop tests.
func jsDir(t *testing.T) string {
	t.Helper()
	return filepath.Join(testkit.ModuleRoot(t), "internal", "interop", "js")
}

// checkSDKInstalled verifies that npm dependencies are installed and that the
// installed SDK is the pinned version.
func checkSDKInstalled(t *testing.T, jsDir string) {
	t.Helper()
	pkgJSON := filepath.Join(jsDir, "node_modules", "@a2a-js", "sdk", "package.json")
	data, err := os.ReadFile(pkgJSON)
	if errors.Is(err, os.ErrNotExist) {
		testenv.SkipOrFailInCI(t, testkit.MissingNode(jsDir, "@a2a-js/sdk"))
	}
	if err != nil {
		t.Fatalf("reading %s: %v", pkgJSON, err)
	}
	var pkg struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(data, &pkg); err != nil {
		t.Fatalf("parsing %s: %v", pkgJSON, err)
	}
	if pkg.Version != jsSDKVersion {
		t.Fatalf("installed @a2a-js/sdk is %q, want %q: run `%s` in the module root", pkg.Version, jsSDKVersion, testkit.NPMInstall)
	}
}

// startParley runs a freshly built `parley serve` with the conformance agent
// and an in-memory store, waits until its agent card is served, and returns
// the base URL. The server is stopped when the test ends.
func startParley(t *testing.T) string {
	t.Helper()
	bin := testkit.ParleyBinary(t)
	return testkit.OnFreeAddr(t, "parley server", func(addr string) (string, error) {
		base := "http://" + addr
		cmd := exec.Command(bin, "serve", "--agent", "conformance", "--store", "memory", "--addr", addr)
		p := testenv.StartProcess(t, cmd, &testenv.ProcessOptions{Name: "parley server"})
		client := &http.Client{Timeout: 2 * time.Second}
		cardServed := func() bool {
			resp, err := client.Get(base + "/.well-known/agent-card.json")
			if err != nil {
				return false
			}
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK
		}
		if err := p.WaitUntil(cardServed, 20*time.Second); err != nil {
			p.Stop()
			return "", err
		}
		return base, nil
	})
}
