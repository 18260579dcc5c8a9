package testkit_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"parley.dev/parley/internal/testkit"
)

// TestMissingNodeSaysHowToInstall: a package missing from node_modules is
// named with the exact install command; nothing is reported once it is
// there.
func TestMissingNodeSaysHowToInstall(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("node"); err != nil {
		if why := testkit.MissingNode(t.TempDir()); !strings.Contains(why, testkit.NPMInstall) {
			t.Errorf("MissingNode without node = %q, want it to contain %q", why, testkit.NPMInstall)
		}
		return
	}
	dir := t.TempDir()
	why := testkit.MissingNode(dir, "@scope/pkg")
	if !strings.Contains(why, "@scope/pkg") || !strings.Contains(why, "`npm ci --prefix internal/interop/js --no-audit --no-fund`") {
		t.Errorf("MissingNode(empty dir) = %q, want the package and the install command", why)
	}
	pkgDir := filepath.Join(dir, "node_modules", "@scope", "pkg")
	if err := os.MkdirAll(pkgDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pkgDir, "package.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if why := testkit.MissingNode(dir, "@scope/pkg"); why != "" {
		t.Errorf("MissingNode(installed) = %q, want \"\"", why)
	}
}

// requireNodeDir, when set, makes TestRequireNodeChild call RequireNode on
// that directory (see TestRequireNodeSkipsOrFailsInCI).
const requireNodeDir = "TESTKIT_REQUIRE_NODE_DIR"

// TestRequireNodeChild is run by TestRequireNodeSkipsOrFailsInCI in a child
// process; on its own it does nothing.
func TestRequireNodeChild(t *testing.T) {
	dir := os.Getenv(requireNodeDir)
	if dir == "" {
		return
	}
	testkit.RequireNode(t, dir, "@scope/pkg")
	t.Log("RequireNode returned")
}

// TestRequireNodeSkipsOrFailsInCI runs a test whose npm package is missing
// in a child test process: it is skipped with the install command, and
// fails with CI=true.
func TestRequireNodeSkipsOrFailsInCI(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, ci := range []string{"", "true"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestRequireNodeChild$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), requireNodeDir+"="+dir, "CI="+ci)
		out, err := cmd.CombinedOutput()
		text := string(out)
		if !strings.Contains(text, testkit.NPMInstall) || strings.Contains(text, "RequireNode returned") {
			t.Errorf("CI=%q: the child test did not stop with the install command:\n%s", ci, text)
		}
		if ci == "" && (err != nil || !strings.Contains(text, "--- SKIP: TestRequireNodeChild")) {
			t.Errorf("CI unset: child = %v, want a skip:\n%s", err, text)
		}
		if ci == "true" && (err == nil || !strings.Contains(text, "--- FAIL: TestRequireNodeChild")) {
			t.Errorf("CI=true: child = %v, want a failure:\n%s", err, text)
		}
	}
}
