package interop_test

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"parley.dev/parley/client"
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

// previewFlags turn on the A2A 1.1 preview beside v1.0 and v0.3: the card
// lists a 1.1 interface after each v1.0 one, at the same URL (spec §8.3.1:
// an agent may list an interface per protocol version), and v1.0 and v0.3
// callers must be served exactly as without it.
var previewFlags = []string{"--protocol-versions", "1.1,1.0,0.3"}

// rounds starts the servers a client test runs against: `parley serve`
// with extra flags as it is by default, then with the 1.1 preview on
// (after checking that its card lists the 1.1 interfaces). An SDK client
// that reads a card listing 1.1 interfaces must still pick a v1.0 (or
// v0.3) one and get the same answers.
func rounds(t *testing.T, extra ...string) []struct{ name, base string } {
	t.Helper()
	def := startParleyWith(t, extra...)
	preview := startParleyWith(t, append(append([]string{}, extra...), previewFlags...)...)
	checkPreviewCard(t, preview)
	return []struct{ name, base string }{{"default", def}, {"preview", preview}}
}

// checkPreviewCard fails unless the card at base lists a 1.1 interface
// for each v1.0 one (same URL and binding), all of them after the v1.0
// interfaces (spec §8.3.1: clients prefer the earlier interfaces).
func checkPreviewCard(t *testing.T, base string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	card, err := client.Resolve(ctx, base, nil)
	if err != nil {
		t.Fatal(err)
	}
	lastV10, firstV11 := -1, -1
	v10, v11 := map[string]bool{}, map[string]bool{}
	for i, in := range card.GetSupportedInterfaces() {
		key := in.GetProtocolBinding() + " " + in.GetUrl()
		switch in.GetProtocolVersion() {
		case "1.0":
			lastV10, v10[key] = i, true
		case "1.1":
			if firstV11 < 0 {
				firstV11 = i
			}
			v11[key] = true
		}
	}
	if len(v10) != 3 || !maps.Equal(v10, v11) || firstV11 < lastV10 {
		t.Fatalf("the preview's card interfaces: %v; want a 1.1 interface for each of the three v1.0 ones, after them", card.GetSupportedInterfaces())
	}
}

// startParleyWith runs a freshly built `parley serve` with the conformance
// agent, an in-memory store and the extra flags, waits until its agent card
// is served, and returns the base URL. The server is stopped when the test
// ends.
func startParleyWith(t *testing.T, extra ...string) string {
	t.Helper()
	bin := testkit.ParleyBinary(t)
	return testkit.OnFreeAddr(t, "parley server", func(addr string) (string, error) {
		base := "http://" + addr
		args := append([]string{"serve", "--agent", "conformance", "--store", "memory", "--addr", addr}, extra...)
		p := testenv.StartProcess(t, exec.Command(bin, args...), &testenv.ProcessOptions{Name: "parley server"})
		hc := &http.Client{Timeout: 2 * time.Second}
		served := func() bool {
			resp, err := hc.Get(base + "/.well-known/agent-card.json")
			if err != nil {
				return false
			}
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK
		}
		if err := p.WaitUntil(served, 20*time.Second); err != nil {
			p.Stop()
			return "", err
		}
		return base, nil
	})
}

// parleyClient is Parley's client for the agent at base, resolved from its
// card within ctx and closed when the test ends.
func parleyClient(t *testing.T, ctx context.Context, base string) *client.Client {
	t.Helper()
	card, err := client.Resolve(ctx, base, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(card, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
