package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"parley.dev/parley/taskstore/pgstore"
	"parley.dev/parley/taskstore/sqlitestore"
)

// helpCommands is every command and subcommand whose help lists flags.
// TestDocsFlagsExist fails when a command of helps is missing here.
var helpCommands = [][]string{
	{"serve"}, {"webhook"}, {"load"}, {"inspect"}, {"card"}, {"send"}, {"check"}, {"version"},
	{"task", "get"}, {"task", "list"}, {"task", "cancel"}, {"task", "subscribe"}, {"task", "wait"}, {"task", "download"},
	{"push", "create"}, {"push", "get"}, {"push", "list"}, {"push", "delete"},
	{"key", "new"}, {"key", "jwks"}, {"apikey", "new"}, {"config", "show"}, {"completion"}, {"card", "get"}, {"mcp"},
}

// docsForeignFlags are the flags the docs show on commands other than
// parley's, each with where it comes from. Add one only for a command
// that is not parley.
var docsForeignFlags = map[string]string{
	"cert":     "curl: the client certificate (security.md, mutual TLS)",
	"key":      "curl: the client certificate's key (security.md, mutual TLS)",
	"prefix":   "npm ci: the internal/interop/js directory (README, interoperability.md)",
	"no-audit": "npm ci (README)",
	"no-fund":  "npm ci (README)",
	"rm":       "docker run (observability.md, Jaeger)",
}

// parleyTopFlags are what parley accepts in place of a command (Run):
// they are in no command's flag set.
var parleyTopFlags = map[string]bool{
	"help":    true, // parley --help, and every command's --help
	"version": true, // parley --version
}

// docFlag is a --flag token in Markdown: two dashes that do not continue
// a word or a longer run of dashes, then a lower-case name.
var docFlag = regexp.MustCompile(`(?:^|[^\w-])--([a-z][a-z0-9-]*[a-z0-9])`)

// TestDocsFlagsExist: every --flag that README.md or a page of docs/
// names is a flag of some parley command (as its --help lists it), or a
// flag of another tool the docs show, listed in docsForeignFlags. A flag
// renamed or removed in the binary and left in the docs fails here, with
// the page and line.
func TestDocsFlagsExist(t *testing.T) {
	covered := make(map[string]bool)
	known := make(map[string]bool)
	for _, cmd := range helpCommands {
		covered[cmd[0]] = true
		for _, name := range helpFlagNames(helpOf(t, cmd...)) {
			known[name] = true
		}
	}
	for name := range helps {
		if !covered[name] {
			t.Errorf("command %q is not in helpCommands: its flags are not checked against the docs", name)
		}
	}
	for name, from := range docsForeignFlags {
		if known[name] {
			t.Errorf("docsForeignFlags lists --%s (%s), but a parley command has it now: drop the entry", name, from)
		}
	}

	used := make(map[string]bool)
	for _, page := range docPages(t) {
		text, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(text), "\n") {
			for _, m := range docFlag.FindAllStringSubmatch(line, -1) {
				name := m[1]
				switch {
				case known[name] || parleyTopFlags[name]:
				case docsForeignFlags[name] != "":
					used[name] = true
				default:
					t.Errorf("%s:%d names --%s, which no parley command has", strings.TrimPrefix(page, "../../"), i+1, name)
				}
			}
		}
	}
	var stale []string
	for name := range docsForeignFlags {
		if !used[name] {
			stale = append(stale, name)
		}
	}
	sort.Strings(stale)
	if len(stale) > 0 {
		t.Errorf("docsForeignFlags lists flags no page names any more: --%s", strings.Join(stale, ", --"))
	}
	if len(known) < 100 {
		t.Errorf("the helps list %d flags in all; the parse of the help is wrong", len(known))
	}
}

// docPages are README.md and the pages of docs/, as paths from here.
func docPages(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob("../../docs/*.md")
	if err != nil || len(pages) == 0 {
		t.Fatalf("no docs/*.md pages (%v)", err)
	}
	return append(pages, "../../README.md")
}

// fence is a code fence line: up to three spaces or a list's indentation,
// then three or more backticks or tildes, then the info string.
var fence = regexp.MustCompile("^\\s*(`{3,}|~{3,})(.*)$")

// TestDocsFencesClosed: every code block of README.md and docs/ is
// closed (CommonMark: a fence of the same character, at least as long,
// with no info string), and before the next one opens: a fence with an
// info string ("```sh") inside a block is a block that was not closed,
// which turns the prose after it into code.
func TestDocsFencesClosed(t *testing.T) {
	for _, page := range docPages(t) {
		text, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		open, openLine := "", 0
		for i, line := range strings.Split(string(text), "\n") {
			m := fence.FindStringSubmatch(line)
			switch {
			case m == nil:
			case open == "":
				open, openLine = m[1], i+1
			case m[1][0] == open[0] && len(m[1]) >= len(open) && strings.TrimSpace(m[2]) == "":
				open = ""
			case m[1][0] == open[0] && strings.TrimSpace(m[2]) != "":
				t.Errorf("%s:%d: a code block opens inside the one opened at line %d, which is not closed", strings.TrimPrefix(page, "../../"), i+1, openLine)
				openLine = i + 1
			}
		}
		if open != "" {
			t.Errorf("%s:%d: the code block opened here is never closed", strings.TrimPrefix(page, "../../"), openLine)
		}
	}
}

// TestDocsSchemaVersions: docs/operations.md says the schema version each
// SQL store is at now.
func TestDocsSchemaVersions(t *testing.T) {
	text, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		fmt.Sprintf("(`PRAGMA user_version`, now %d)", sqlitestore.SchemaVersion),
		fmt.Sprintf("the table `parley_schema` (now %d)", pgstore.SchemaVersion),
	} {
		if !strings.Contains(string(text), want) {
			t.Errorf("docs/operations.md does not say %q", want)
		}
	}
}
