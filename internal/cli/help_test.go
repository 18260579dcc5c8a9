package cli_test

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"parley.dev/parley/internal/cli"
)

// runInProcess runs the parley command in this process and returns its
// stdout, stderr and exit code.
func runInProcess(args ...string) (string, string, int) {
	var out, errs bytes.Buffer
	code := cli.Run(context.Background(), args, &out, &errs)
	return out.String(), errs.String(), code
}

// TestHelpStyle: every command's help, asked for with -h, --help or
// `parley help COMMAND`, is the same shape on stdout with exit 0: a
// one-line summary, the usage, the flags written with two dashes, and
// examples.
func TestHelpStyle(t *testing.T) {
	t.Parallel()
	singleDash := regexp.MustCompile(`(?m)^\s+-[a-z]`)
	for _, cmd := range [][]string{{"serve"}, {"webhook"}, {"load"}, {"card"}, {"send"}, {"task"}, {"task", "list"},
		{"push"}, {"push", "create"}, {"check"}, {"inspect"}, {"mcp"}, {"version"}} {
		for _, args := range [][]string{append(cmd[:len(cmd):len(cmd)], "-h"), append(cmd[:len(cmd):len(cmd)], "--help"), append([]string{"help"}, cmd...)} {
			out, errs, code := runInProcess(args...)
			if code != cli.ExitOK || errs != "" {
				t.Errorf("parley %v: exit %d, stderr %q; want 0 and nothing", args, code, errs)
				continue
			}
			contains(t, strings.Join(args, " "), out, "parley "+cmd[0]+": ", "\nusage: parley "+cmd[0], "\nexamples:\n  parley ")
			if cmd[0] != "version" {
				contains(t, strings.Join(args, " "), out, "\n  --")
			}
			if m := singleDash.FindString(out); m != "" {
				t.Errorf("parley %v lists a flag with one dash (%q):\n%s", args, m, out)
			}
		}
	}
	// The log level's help names the levels; --task-rate's burst names it
	// with two dashes.
	out, _, _ := runInProcess("serve", "-h")
	contains(t, "serve -h", out, "--log-level LEVEL", "debug, info, warn or error", "burst of --task-rate",
		"a full AgentCard, as JSON", "--push-allow-private")
	// task list says that its ARTIFACTS column comes with --include-artifacts.
	out, _, _ = runInProcess("help", "task", "list")
	contains(t, "help task list", out, "--include-artifacts")

	// With no command, or `parley help`, the commands are listed.
	out, _, code := runInProcess("help")
	if code != cli.ExitOK {
		t.Errorf("parley help: exit %d", code)
	}
	contains(t, "help", out, "parley serve", "parley version", "parley help COMMAND")
	for _, h := range []string{"--help", "-h", "help"} { // help about help is the list
		if out, _, code := runInProcess("help", h); code != cli.ExitOK || !strings.Contains(out, "parley help COMMAND") {
			t.Errorf("parley help %s: exit %d\n%s", h, code, out)
		}
	}
	_, errs, code := runInProcess()
	if code != cli.ExitUsage {
		t.Errorf("parley: exit %d, want %d", code, cli.ExitUsage)
	}
	contains(t, "parley (stderr)", errs, "parley serve", "parley version")
	_, errs, code = runInProcess("help", "nosuch")
	if code != cli.ExitUsage || !strings.Contains(errs, `unknown command "nosuch"`) {
		t.Errorf("parley help nosuch: exit %d\n%s", code, errs)
	}

	// A bad flag names the flag with two dashes and points to the help.
	_, errs, code = runInProcess("serve", "--bogus")
	if code != cli.ExitUsage || !strings.Contains(errs, "--bogus (run 'parley serve -h'") {
		t.Errorf("parley serve --bogus: exit %d\n%s", code, errs)
	}
	_, errs, code = runInProcess("serve", "--log-level", "loud")
	if code != cli.ExitUsage || !strings.Contains(errs, `--log-level "loud": want debug, info, warn or error`) {
		t.Errorf("parley serve --log-level loud: exit %d\n%s", code, errs)
	}
}

// TestVersion: `parley version` and `parley --version` print the module
// version, the commit (or "unknown") and the Go version of the binary.
func TestVersion(t *testing.T) {
	t.Parallel()
	for _, arg := range []string{"version", "--version", "-v"} {
		out, _ := mustRun(t, 0, arg)
		if !regexp.MustCompile(`^parley \S+ commit \S+.* go1\.\d+\S* \w+/\w+\n$`).MatchString(out) {
			t.Errorf("parley %s = %q, want parley VERSION commit COMMIT … goX.Y OS/ARCH", arg, out)
		}
	}
	if _, _, code := parley(t, "version", "extra"); code != cli.ExitUsage {
		t.Errorf("parley version extra: exit %d, want %d", code, cli.ExitUsage)
	}
}
