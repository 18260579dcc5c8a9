package godocrefs_test

import (
	"go/ast"
	"go/token"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"parley.dev/parley/internal/testenv"
)

// repoRef matches what names a file of the repository (or the project's
// design notes) rather than something a user of the module can read: a Go
// file, a path under docs/, proto/ or .ci/, a .proto or Markdown file, and
// DESIGN. A name like pkg.go.dev, where ".go" goes on with ".word", is
// matched with that tail and then dropped by matches.
var repoRef = regexp.MustCompile(`(?:^|[^\w/.-])(?:docs/|proto/|\.ci/)[\w./#-]*|[\w-]+\.go\b(?:\.\w)?|[\w-]+\.(?:proto|md)\b|\bDESIGN\b`)

// skipDirs are not scanned: internal/ (no user reads it) and generated
// code (a2aconnect); testenv.GoSources passes over other modules, test
// data and files marked generated.
var skipDirs = map[string]bool{
	"internal":            true,
	"internal/a2aconnect": true,
}

// TestNoRepositoryFilesInComments: no comment of a public package (every
// package outside internal/, _test.go files excluded) points at a file of
// the repository, which a user of the module never sees. Cite the spec by
// section, a decision by its name with its rule, a Go identifier by name.
func TestNoRepositoryFilesInComments(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var found int
	skip := func(rel string) bool { return skipDirs[rel] || skipDirs[path.Base(rel)] }
	err = testenv.GoSources(root, fset, skip, func(rel string, f *ast.File) error {
		for _, g := range f.Comments {
			for _, c := range g.List {
				if strings.HasPrefix(c.Text, "//go:") {
					continue // a directive, such as go:generate, is for the tools
				}
				for _, line := range strings.Split(c.Text, "\n") {
					refs := matches(line)
					if len(refs) == 0 {
						continue
					}
					found++
					t.Errorf("%s:%d: comment names %s: %s", rel, fset.Position(c.Pos()).Line, strings.Join(refs, ", "), strings.TrimSpace(line))
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found > 0 {
		t.Logf("%d comment lines name repository files; name the spec section (§3.1.6), the decision with its rule (decision B12: tasks belong to the principal that created them) or the Go identifier instead", found)
	}
}

// matches returns the repository references in one line of a comment.
func matches(line string) []string {
	var refs []string
	for _, m := range repoRef.FindAllString(line, -1) {
		m = strings.TrimLeft(m, " \t`'\"(*[")
		if strings.HasSuffix(m, ".go") || strings.Contains(m, "/") || strings.HasSuffix(m, ".proto") || strings.HasSuffix(m, ".md") || m == "DESIGN" {
			refs = append(refs, m)
		}
	}
	return refs
}

// TestMatches: what matches counts as a reference to a repository file.
func TestMatches(t *testing.T) {
	for line, want := range map[string]string{
		"// see pipe.go.":                                               "pipe.go",
		"// (docs/decisions.md#b12).":                                   "docs/decisions.md#b12",
		"// from proto/a2a.proto, their codec":                          "proto/a2a.proto",
		"// where they fail (.ci/run sets it).":                         ".ci/run",
		"// as README.md says":                                          "README.md",
		"// (DESIGN \"The event log\")":                                 "DESIGN",
		"// documented on pkg.go.dev":                                   "",
		"// google.golang.org/protobuf/proto decodes":                   "",
		"// /.well-known/agent-card.json":                               "",
		"// decision B12: tasks belong to their principal, spec §3.1.6": "",
	} {
		if got := strings.Join(matches(line), ", "); got != want {
			t.Errorf("matches(%q) = %q, want %q", line, got, want)
		}
	}
}
