package cli_test

import (
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
