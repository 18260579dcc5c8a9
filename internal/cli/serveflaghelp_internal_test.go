package cli

import (
	"bytes"
	"context"
	"flag"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// helpFlagLine matches the line that starts a flag in a command's help.
var helpFlagLine = regexp.MustCompile(`^  --([a-z0-9][a-z0-9-]*)`)

// helpOf runs `parley ARGS --help` in this process and returns what it
// printed; the test fails unless it exits 0.
func helpOf(t *testing.T, args ...string) string {
	t.Helper()
	var out, errs bytes.Buffer
	if code := Run(context.Background(), append(append([]string{}, args...), "--help"), &out, &errs); code != ExitOK {
		t.Fatalf("parley %s --help: exit %d\n%s", strings.Join(args, " "), code, errs.String())
	}
	return out.String()
}

// helpFlagNames is the flag names, without dashes, that a help lists, in
// the order it lists them.
func helpFlagNames(help string) []string {
	var names []string
	for _, line := range strings.Split(help, "\n") {
		if m := helpFlagLine.FindStringSubmatch(line); m != nil {
			names = append(names, m[1])
		}
	}
	return names
}

// TestServeHelpFlagGroups: `parley serve --help` lists every flag under
// one heading of flagGroups, each group in name order, and no flag under
// the fallback heading: a serve flag added without a group fails here.
// Every name of the table is a serve flag, named once.
func TestServeHelpFlagGroups(t *testing.T) {
	help := helpOf(t, "serve")
	groups := flagGroups["serve"]
	if len(groups) == 0 {
		t.Fatal(`flagGroups["serve"] is empty`)
	}

	// Split the flag list at its headings.
	_, list, ok := strings.Cut(help, "\nflags:\n")
	if !ok {
		t.Fatalf("no flags: heading in\n%s", help)
	}
	list, _, _ = strings.Cut(list, "\nexamples:\n")
	listed := make(map[string][]string) // heading → flags under it
	var order []string
	heading := ""
	for _, line := range strings.Split(list, "\n") {
		if m := helpFlagLine.FindStringSubmatch(line); m != nil {
			if heading == "" {
				t.Errorf("--%s is listed before any group heading", m[1])
			}
			listed[heading] = append(listed[heading], m[1])
			continue
		}
		if line != "" && !strings.HasPrefix(line, " ") && strings.HasSuffix(line, ":") {
			heading = strings.TrimSuffix(line, ":")
			if heading != otherFlagsTitle { // reported below
				order = append(order, heading)
			}
		}
	}
	if other := listed[otherFlagsTitle]; len(other) > 0 {
		t.Errorf("serve flags without a group: --%s; add each to flagGroups in servehelp.go", strings.Join(other, ", --"))
	}

	var want []string
	for _, g := range groups {
		want = append(want, g.title)
	}
	if strings.Join(order, "|") != strings.Join(want, "|") {
		t.Errorf("headings %q, want %q", order, want)
	}

	inHelp := make(map[string]bool)
	for _, name := range helpFlagNames(help) {
		if inHelp[name] {
			t.Errorf("--%s is listed twice", name)
		}
		inHelp[name] = true
	}
	seen := make(map[string]string)
	for _, g := range groups {
		for _, name := range g.flags {
			if !inHelp[name] {
				t.Errorf("group %q names --%s, which parley serve does not have", g.title, name)
			}
			if prev, dup := seen[name]; dup {
				t.Errorf("--%s is in the groups %q and %q", name, prev, g.title)
			}
			seen[name] = g.title
		}
		if got := listed[g.title]; !sort.StringsAreSorted(got) {
			t.Errorf("group %q is not in name order: %v", g.title, got)
		}
	}
	if len(inHelp) < 60 {
		t.Errorf("serve --help lists %d flags; the parse of the help is wrong", len(inHelp))
	}
}

// TestWriteTimeoutHelp: --write-timeout's help says what the bound covers
// as the handler applies it (docs/security.md, "Every bound"): parked
// streams too, and 0 turns it off everywhere.
func TestWriteTimeoutHelp(t *testing.T) {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	addGuardFlags(fs)
	usage := fs.Lookup("write-timeout").Usage
	for _, want := range []string{"parked streams", "0: no bound anywhere"} {
		if !strings.Contains(usage, want) {
			t.Errorf("--write-timeout help %q does not say %q", usage, want)
		}
	}
}
