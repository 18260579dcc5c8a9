package cli_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRequiredExtensions: the client reads the extensions the card
// requires (A2A §4.6) and declares those --extension names in
// A2A-Extensions (A2A CLI SPEC §13.3, A2ACLI_VER_002): without it, the
// call is refused with ExtensionSupportRequiredError and a warning named
// the extension and the flag beforehand; with it, the call succeeds and
// nothing is warned.
func TestRequiredExtensions(t *testing.T) {
	t.Parallel()
	const ext = "https://example.com/extensions/x/v1"
	p := serve(t, "--agent", "conformance", "--store", "memory", "--require-extension", ext)
	url := "http://" + p.addr
	out, errs := mustRun(t, 1, "send", "-a", url, "hello", "-o", "json")
	contains(t, "send without --extension", out, `"code":"ExtensionSupportRequiredError"`)
	contains(t, "send without --extension (stderr)", errs, "requires the extension "+ext, "--extension "+ext)
	out, errs = mustRun(t, 0, "send", "-a", url, "hello", "--extension", ext)
	contains(t, "send --extension", out, "State: TASK_STATE_COMPLETED")
	if strings.Contains(errs, "requires the extension") {
		t.Errorf("a warning though the extension is declared: %s", errs)
	}
}

// TestNoCredentialToPublicCard: --bearer and --api-key are never sent
// with the request for the public card, whose endpoint has declared no
// scheme (A2A CLI SPEC §12.4, A2ACLI_AUTH_008); the calls after it carry
// the bearer token (redacted in the --debug log).
func TestNoCredentialToPublicCard(t *testing.T) {
	t.Parallel()
	p := serve(t, "--agent", "conformance", "--store", "memory", "--auth-token", "alice=tok-a")
	url := "http://" + p.addr
	_, errs := mustRun(t, 0, "send", "-a", url, "hello", "--bearer", "tok-a", "--debug")
	cardReq, rest, ok := strings.Cut(errs, "--> GET "+url+"/.well-known/agent-card.json")
	if !ok {
		t.Fatalf("no card request in the --debug log:\n%s", errs)
	}
	cardReq, rest, _ = strings.Cut(rest, "<--")
	if strings.Contains(cardReq, "Authorization") {
		t.Errorf("the public card's request carries a credential:\n%s", cardReq)
	}
	contains(t, "the call after the card", rest, "Authorization: [REDACTED]")
	if strings.Contains(errs, "tok-a") {
		t.Errorf("the token shows in the --debug log:\n%s", errs)
	}
}

// TestCatalog: a catalog entry, catalog:SOURCE#NAME, is accepted wherever
// --agent-card takes a reference and resolved to its card first (A2A CLI
// SPEC §10.1, A2ACLI_CARD_GET_005): an entry naming the agent's URL, an
// entry holding the whole card, from a catalog file or one served over
// HTTP; an unknown name is no card (exit 3), naming the entries.
func TestCatalog(t *testing.T) {
	t.Parallel()
	p := serve(t, "--agent", "conformance", "--store", "memory")
	url := "http://" + p.addr
	card, _ := mustRun(t, 0, "card", "get", "-a", url, "-o", "json")
	catalog := `{"agents":[{"name":"conformance","url":"` + url + `"},` + strings.TrimSpace(card) + `]}`
	file := filepath.Join(t.TempDir(), "agents.json")
	if err := os.WriteFile(file, []byte(catalog), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, catalog)
	}))
	defer srv.Close()
	for _, ref := range []string{"catalog:" + file + "#conformance", "catalog:" + file + "#Parley conformance agent",
		"catalog:" + srv.URL + "/agents.json#conformance"} {
		out, _ := mustRun(t, 0, "send", "-a", ref, "hello", "-o", "json")
		if field(jsonOf(t, out), "task", "status", "state") != "TASK_STATE_COMPLETED" {
			t.Errorf("send -a %s: %s", ref, out)
		}
	}
	out, _ := mustRun(t, 0, "card", "get", "-a", "catalog:"+file+"#Parley conformance agent", "-o", "json")
	if field(jsonOf(t, out), "name") != "Parley conformance agent" {
		t.Errorf("card get from a catalog's whole card: %s", out)
	}
	out, _ = mustRun(t, 3, "card", "get", "-a", "catalog:"+file+"#nobody", "-o", "json")
	contains(t, "an unknown entry", out, `"code":"A2ACLI_ERR_CARD_NOT_FOUND"`, "conformance")
	mustRun(t, 2, "card", "get", "-a", "catalog:"+file)
}

// TestProtectedPublicCard: a card endpoint that answers 401 with a Bearer
// challenge (RFC 6750; A2A's discovery guide lets an agent protect its
// card) has declared a scheme that takes --bearer: the card is asked for
// again with it, once. Without the challenge, or without --bearer, the
// 401 is an authentication failure (exit 4).
func TestProtectedPublicCard(t *testing.T) {
	t.Parallel()
	srv := httptest.NewUnstartedServer(nil)
	card := rawAgentCard("guarded", "http://"+srv.Listener.Addr().String())
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/challenge/.well-known/agent-card.json" && r.Header.Get("Authorization") != "Bearer tok":
			w.Header().Set("WWW-Authenticate", `Bearer realm="cards"`)
			w.WriteHeader(http.StatusUnauthorized)
		case r.URL.Path == "/silent/.well-known/agent-card.json" && r.Header.Get("Authorization") != "Bearer tok":
			w.WriteHeader(http.StatusUnauthorized)
		default:
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, card)
		}
	})
	srv.Start()
	defer srv.Close()
	_, errs := mustRun(t, 0, "card", "get", "-a", srv.URL+"/challenge", "--bearer", "tok", "--debug")
	if n := strings.Count(errs, "Authorization: [REDACTED]"); n != 1 {
		t.Errorf("the credential went %d times, want once, after the challenge:\n%s", n, errs)
	}
	mustRun(t, 4, "card", "get", "-a", srv.URL+"/challenge")
	mustRun(t, 4, "card", "get", "-a", srv.URL+"/silent", "--bearer", "tok")
}

// TestAuthLoginUsage: auth login's mistakes are usage errors (exit 2)
// that say what to give, before any sign-in: no --client-id, an unknown
// --flow, client-credentials without a secret, and an agent whose card
// declares no OAuth 2.0 or OpenID Connect scheme (the conformance agent).
// The sign-ins themselves are tested against a real OpenID provider in
// internal/interop/oidc.
func TestAuthLoginUsage(t *testing.T) {
	t.Parallel()
	p := serve(t, "--agent", "conformance", "--store", "memory")
	url := "http://" + p.addr
	for args, want := range map[string]string{
		"":                              "--client-id is required",
		"--client-id c --flow password": `--flow "password"`,
		"--client-id c --flow client-credentials": "needs --client-secret",
		"--client-id c": "declares no OAuth 2.0 or OpenID Connect security scheme",
		"--client-id c --client-secret s --flow x": `--flow "x"`,
	} {
		_, errs := mustRun(t, 2, append([]string{"auth", "login", "-a", url}, strings.Fields(args)...)...)
		contains(t, "auth login "+args, errs, want)
	}
	out, _ := mustRun(t, 0, "auth", "login", "-h")
	contains(t, "auth login -h", out, "--flow", "--client-id", "--scope", "~/.config/a2a-cli/tokens/")
}
