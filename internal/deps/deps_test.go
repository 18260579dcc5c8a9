// Package deps holds a test of what a program built with Parley links:
// pay for what you use. Its testdata holds the programs it checks.
package deps

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestMinimalServerLinksLittle: a program that serves the echo agent on
// the memory store over every binding (testdata/minimal) links, besides
// the standard library and Parley, only connect-go (with its health and
// reflection services), protobuf, the google.rpc error details and the
// rate limiter: no database driver, no telemetry, no JOSE, no Prometheus,
// and none of Parley's stores, authenticators or tools it does not use.
func TestMinimalServerLinksLittle(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{if .Module}}{{.Module.Path}}{{end}}", "./testdata/minimal").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	modules := []string{"parley.dev/parley", "connectrpc.com/connect", "connectrpc.com/grpchealth", "connectrpc.com/grpcreflect",
		"google.golang.org/protobuf", "google.golang.org/genproto/googleapis/rpc", "golang.org/x/time"}
	unused := []string{"parley.dev/parley/taskstore/sqlitestore", "parley.dev/parley/taskstore/pgstore", "parley.dev/parley/telemetry",
		"parley.dev/parley/authn", "parley.dev/parley/cardsign", "parley.dev/parley/internal/jwks", "parley.dev/parley/push",
		"parley.dev/parley/client", "parley.dev/parley/internal/agents/execagent", "parley.dev/parley/internal/agents/proxyagent"}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, module, _ := strings.Cut(line, " ")
		if module != "" && !slices.Contains(modules, module) {
			t.Errorf("links %s (module %s)", pkg, module)
		}
		for _, u := range unused {
			if pkg == u || strings.HasPrefix(pkg, u+"/") {
				t.Errorf("links %s, which it does not use", pkg)
			}
		}
	}
}

// TestWireModelLinksNoTransport: package a2a is the wire model only. It
// links neither net nor net/http (nor crypto/tls), no other Parley
// package, and besides the standard library only protobuf (not even the
// google.rpc error details, nor connect-go or gRPC): transport
// plumbing (a stream's idle wait, a client's resume position) lives in
// server, client and the bindings.
func TestWireModelLinksNoTransport(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{if .Module}}{{.Module.Path}}{{end}}", "parley.dev/parley/a2a").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	modules := []string{"parley.dev/parley", "google.golang.org/protobuf"}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, module, _ := strings.Cut(line, " ")
		if module != "" && !slices.Contains(modules, module) {
			t.Errorf("a2a links %s (module %s)", pkg, module)
		}
		if pkg == "net" || pkg == "net/http" || strings.HasPrefix(pkg, "net/http/") || pkg == "crypto/tls" {
			t.Errorf("a2a links %s", pkg)
		}
		if module == "parley.dev/parley" && pkg != "parley.dev/parley/a2a" {
			t.Errorf("a2a links %s", pkg)
		}
	}
}

// TestYAMLOnlyForACTS: the YAML module (go.yaml.in/yaml/v3) is linked
// for ACTS files only: internal/acts is the one package importing it, so
// only the programs that run ACTS (conformance, through internal/check,
// and the parley command) link it; package a2a and the minimal server do
// not (the tests above).
func TestYAMLOnlyForACTS(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "parley.dev/parley/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	var importers []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, imports, _ := strings.Cut(line, " ")
		for _, imp := range strings.Fields(imports) {
			if strings.HasPrefix(imp, "go.yaml.in/yaml") {
				importers = append(importers, pkg)
			}
		}
	}
	if !slices.Equal(importers, []string{"parley.dev/parley/internal/acts"}) {
		t.Errorf("packages importing YAML: %v, want only parley.dev/parley/internal/acts", importers)
	}
	deps, err := exec.Command("go", "list", "-deps", "parley.dev/parley/cmd/parley", "parley.dev/parley/conformance").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, deps)
	}
	if !strings.Contains(string(deps), "go.yaml.in/yaml/v3\n") {
		t.Error("parley and conformance do not link the YAML module: is the test above still about anything?")
	}
}
