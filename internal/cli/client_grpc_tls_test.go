package cli_test

import (
	"encoding/json"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestClientGRPCOverTLS: against parley serve --tls-cert, the card's GRPC
// url (host:port) is dialled over TLS because the agent URL is https, by
// the client commands and by parley check. The test CA is trusted through
// SSL_CERT_FILE.
func TestClientGRPCOverTLS(t *testing.T) {
	t.Parallel()
	p, ca, dir := serveTLS(t)
	caFile := filepath.Join(dir, "ca.crt")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.cert.Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(want int, args ...string) string {
		t.Helper()
		out, errs, code := parleyWithEnv(t, []string{"SSL_CERT_FILE=" + caFile}, args...)
		if code != want {
			t.Fatalf("parley %s: exit %d, want %d\n%s%s", strings.Join(args, " "), code, want, out, errs)
		}
		return out
	}
	url := "https://" + p.addr
	out := run(0, "send", url, "stream 2", "--stream", "--binding", "grpc")
	contains(t, "send --stream over gRPC and TLS", out, "Artifact ID: stream\nArtifact:\n  chunk 0chunk 1\n\n", "State: TASK_STATE_COMPLETED")

	var rep checkReport
	if err := json.Unmarshal([]byte(run(0, "check", url, "--binding", "grpc", "--json")), &rep); err != nil {
		t.Fatal(err)
	}
	if got := rep.verdicts("FAIL", "WARN"); len(got) > 0 {
		rep.dump(t)
		t.Fatalf("check over gRPC and TLS: %v", got)
	}
	if r, ok := rep.result("GRPC", "grpc.protocol"); !ok || r.Verdict != "PASS" || !strings.Contains(r.Finding, "over TLS") {
		t.Fatalf("grpc.protocol: %+v", r)
	}
}
