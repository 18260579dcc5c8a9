package testenv

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// GoSources calls each with every Go file of the module rooted at root
// that is neither a test nor generated code, parsed with its comments
// into fset, and its path relative to root (slash-separated). It passes
// over directories whose names begin with a dot, testdata and
// node_modules, other modules, and the directories skip reports true for
// (by their relative path; skip may be nil). The first error stops it.
func GoSources(root string, fset *token.FileSet, skip func(rel string) bool, each func(rel string, f *ast.File) error) error {
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		return err
	}
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == "." {
				return nil
			}
			if n := path.Base(rel); strings.HasPrefix(n, ".") || n == "testdata" || n == "node_modules" || (skip != nil && skip(rel)) {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
				return filepath.SkipDir // another module
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		if ast.IsGenerated(f) {
			return nil
		}
		return each(rel, f)
	})
}
