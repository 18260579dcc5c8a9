package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"parley.dev/parley/internal/testkit"
)

// docAgentURL is the address the README's tour and docs/commands.md call:
// the conformance agent of the tour, started by `parley serve --agent
// conformance`.
const docAgentURL = "http://127.0.0.1:8080"

// shBlocks are the ```sh blocks of a Markdown text, in order.
func shBlocks(t *testing.T, file string) []string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllSubmatch(b, -1) {
		out = append(out, string(m[1]))
	}
	return out
}

// docShell runs shell text the way a reader of the docs would, in a
// directory of its own with `parley` (this build) on PATH, against the
// conformance agent at base in place of docAgentURL. It returns the exit
// status and what the shell printed.
func docShell(t *testing.T, dir, base, script string) (int, string) {
	t.Helper()
	bin := filepath.Join(dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(testkit.ParleyBinary(t), filepath.Join(bin, "parley")); err != nil && !os.IsExist(err) {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-ec", strings.ReplaceAll(script, docAgentURL, base))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "NO_COLOR=1")
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), string(out)
	} else if err != nil {
		t.Fatal(err)
	}
	return 0, string(out)
}

// TestReadmeTourRuns: the README's tour works as written, against the
// conformance agent: each block after the one that starts the server
// runs through sh -e to its end (jq and curl as the README says).
func TestReadmeTourRuns(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"jq", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("the tour uses %s, which is not installed", tool)
		}
	}
	p := serve(t, "--agent", "conformance", "--store", "memory")
	base := "http://" + p.addr
	blocks := shBlocks(t, "../../README.md")
	ran := 0
	for _, block := range blocks {
		if !strings.Contains(block, docAgentURL) || strings.Contains(block, " serve") {
			continue // the commands that start servers, and the test command
		}
		ran++
		if code, out := docShell(t, t.TempDir(), base, block); code != 0 {
			t.Errorf("exit %d from the README's block\n%s\noutput:\n%s", code, block, out)
		}
	}
	if ran < 3 {
		t.Errorf("ran %d of the README's blocks, want the tour's 3", ran)
	}
}

// TestCommandsExamplesRun: every example of docs/commands.md shown against
// the tour's conformance agent (but parley inspect, which serves until
// stopped) works against it: it exits 0, a task's outcome included (the
// A2A CLI specification's exit codes; TASK_ID is a task waiting for input,
// made fresh for each line; notes.txt a small text file).
func TestCommandsExamplesRun(t *testing.T) {
	t.Parallel()
	p := serve(t, "--agent", "conformance", "--store", "memory")
	base := "http://" + p.addr
	ran := 0
	for _, block := range shBlocks(t, "../../docs/commands.md") {
		for _, line := range strings.Split(block, "\n") {
			if !strings.HasPrefix(line, "parley ") || !strings.Contains(line, docAgentURL) || strings.HasPrefix(line, "parley inspect ") {
				continue // inspect serves its page until stopped: TestInspect runs it
			}
			if i := strings.Index(line, "  #"); i > 0 {
				line = line[:i] // the comment
			}
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("three pages\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(line, "TASK_ID") {
				out, _ := mustRun(t, 0, "send", base, "input-required", "--json")
				line = strings.ReplaceAll(line, "TASK_ID", field(jsonOf(t, out), "task", "id").(string))
			}
			ran++
			if code, out := docShell(t, dir, base, line); code != 0 {
				t.Errorf("exit %d from docs/commands.md's %s\noutput:\n%s", code, line, out)
			}
		}
	}
	if ran < 8 {
		t.Errorf("ran %d of docs/commands.md's examples against the conformance agent, want 8 or more", ran)
	}
}
