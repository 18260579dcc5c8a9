package cli_test

import "testing"

// TestServeACTSAgent: `parley serve --agent acts` serves the ACTS agent:
// its own card, the behaviours of ACTS's contract, and a rejection of the
// conformance agent's words.
func TestServeACTSAgent(t *testing.T) {
	t.Parallel()
	p := serve(t, "--agent", "acts", "--store", "memory")
	url := "http://" + p.addr
	out, _ := mustRun(t, 0, "card", url)
	contains(t, "card", out, "Parley ACTS agent", "streaming, push notifications", `"tck-multi-turn"`)
	out, _ = mustRun(t, 0, "send", url, "tck-artifact-text please")
	contains(t, "send tck-artifact-text", out, "COMPLETED", "Artifact ID: text", "Generated text content")
	out, _ = mustRun(t, 0, "send", url, "tck-message-response please")
	contains(t, "send tck-message-response", out, "Role: agent\n", "Message:\n  Direct message response")
	out, _ = mustRun(t, 0, "send", url, "stream 5")
	contains(t, "send stream 5", out, "REJECTED", "only the ACTS behaviour contract")
}
