package deps

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestExamplesUsePublicAPI: the Examples of the public packages, which
// godoc shows to be copied, import no internal package: a user who copied
// one would get "use of internal package … not allowed".
func TestExamplesUsePublicAPI(t *testing.T) {
	fset := token.NewFileSet()
	examples := 0
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("../..", path)
		if d.IsDir() {
			if rel != "." && (d.Name() == "internal" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir // not public, or not Go of the module
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		var names []string
		for _, decl := range f.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Example") {
				names = append(names, fn.Name.Name)
			}
		}
		if len(names) == 0 {
			return nil
		}
		examples += len(names)
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); strings.Contains(p+"/", "/internal/") {
				t.Errorf("%s: the file of %s imports %s, which a program outside the module cannot", rel, strings.Join(names, ", "), p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if examples < 30 {
		t.Errorf("found %d Examples in the public packages, want more than 30: the walk is wrong", examples)
	}
}

// TestDocsGoUsesPublicAPI: the Go blocks of README.md and docs/, written
// to be copied, name no internal package (by import path or by a
// package name of one, such as agents.Card).
func TestDocsGoUsesPublicAPI(t *testing.T) {
	internal := map[string]bool{}
	filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && strings.Contains("/"+filepath.ToSlash(path)+"/", "/internal/") && !strings.Contains(path, "node_modules") {
			if base := d.Name(); base != "internal" && base != "testdata" {
				internal[base] = true
			}
		}
		return nil
	})
	if !internal["agents"] || !internal["jsonrpc"] {
		t.Fatalf("internal packages found: %v; the walk is wrong", internal)
	}
	pages, _ := filepath.Glob("../../docs/*.md")
	pages = append(pages, "../../README.md")
	block := regexp.MustCompile("(?s)```go\n(.*?)```")
	use := regexp.MustCompile(`\b([a-z][a-z0-9]*)\.[A-Z]`)
	for _, page := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range block.FindAllSubmatch(b, -1) {
			code := string(m[1])
			if strings.Contains(code, "/internal/") {
				t.Errorf("%s: a Go block imports an internal package:\n%s", strings.TrimPrefix(page, "../../"), code)
			}
			for _, u := range use.FindAllStringSubmatch(code, -1) {
				if internal[u[1]] {
					t.Errorf("%s: a Go block calls the internal package %s (%s…)", strings.TrimPrefix(page, "../../"), u[1], u[0])
				}
			}
		}
	}
}
