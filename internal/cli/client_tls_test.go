package cli_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// issueClient writes a client certificate for cn signed by ca, and its
// key, into dir as NAME.crt and NAME.key; it returns the two paths.
func (ca *testCA) issueClient(t *testing.T, dir, name, cn string, serial int64) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	pk, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	writeFileAtomic(t, certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	writeFileAtomic(t, keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pk}))
	return certFile, keyFile
}

// writeCA writes ca's certificate as PEM into dir/name and returns the path.
func (ca *testCA) writeCA(t *testing.T, dir, name string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	writeFileAtomic(t, path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.cert.Raw}))
	return path
}

// TestClientTLSFlags: against `parley serve` over TLS with a private CA
// that requires client certificates, card, send (every binding) and check
// succeed with --ca-cert, --client-cert and --client-key, and fail with
// advice without them; bad flag values are usage errors naming the file.
func TestClientTLSFlags(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ca := newTestCA(t)
	caFile := ca.writeCA(t, dir, "ca.crt")
	srvCert, srvKey := ca.issue(t, dir, "parley-1", 2)
	cliCert, cliKey := ca.issueClient(t, dir, "alice", "alice", 3)
	other := newTestCA(t) // a CA the server does not trust
	strangerCert, strangerKey := other.issueClient(t, dir, "mallory", "mallory", 4)
	_, otherKey := ca.issueClient(t, dir, "bob", "bob", 5) // a key that is not alice's
	p := serve(t, "--store", "memory", "--agent", "conformance", "--tls-cert", srvCert, "--tls-key", srvKey,
		"--tls-client-ca", caFile, "--tls-client-auth", "require")
	url := "https://" + p.addr
	tlsArgs := []string{"--ca-cert", caFile, "--client-cert", cliCert, "--client-key", cliKey}

	run := func(want int, args ...string) (string, string) {
		t.Helper()
		out, errs, code := parley(t, args...)
		if code != want {
			t.Fatalf("parley %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, want, out, errs)
		}
		return out, errs
	}

	// Success with the flags: the card, a send on each binding, check.
	out, _ := run(0, append([]string{"card", url}, tlsArgs...)...)
	contains(t, "card", out, "Parley")
	for _, b := range []string{"jsonrpc", "rest", "grpc"} {
		out, _ = run(0, append([]string{"send", url, "stream 2", "--binding", b}, tlsArgs...)...)
		contains(t, "send --binding "+b, out, "COMPLETED")
	}
	out, _ = run(0, append([]string{"send", url, "stream 2", "--stream", "--binding", "grpc"}, tlsArgs...)...)
	contains(t, "send --stream over gRPC", out, "State: TASK_STATE_COMPLETED")
	// check reaches and grades the agent (its verdict on an agent whose
	// card asks for mutual TLS is check's business: exit 0 or 1, not 3).
	out, errs, code := parley(t, append([]string{"check", url, "--binding", "jsonrpc", "--json"}, tlsArgs...)...)
	if code > 1 || !strings.Contains(out, `"conformanceAgent":true`) {
		t.Fatalf("check with the TLS flags: exit %d\n%s%s", code, out, errs)
	}
	// Its anonymous probe presents no client certificate, so the server
	// authenticating callers by certificate refuses it at the handshake.
	var rep struct {
		Results []struct{ ID, Verdict, Finding string }
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("check --json: %v\n%s", err, out)
	}
	graded := 0
	for _, r := range rep.Results {
		if r.ID == "auth.anonymous" {
			graded++
			if r.Verdict != "PASS" || !strings.Contains(r.Finding, "handshake") {
				t.Errorf("auth.anonymous with a client certificate: %s %s", r.Verdict, r.Finding)
			}
		}
	}
	if graded == 0 {
		t.Errorf("check graded no auth.anonymous:\n%s", out)
	}

	// Without --ca-cert: the certificate is not trusted, and the advice
	// says what to give (not "is the agent running?").
	_, errs = run(3, "card", url)
	contains(t, "card without --ca-cert", errs, "not trusted", "--ca-cert")
	if strings.Contains(errs, "is the agent running") {
		t.Errorf("card without --ca-cert blames the agent being down:\n%s", errs)
	}
	_, errs = run(3, "check", url)
	contains(t, "check without --ca-cert", errs, "not trusted", "--ca-cert")

	// Trusted, but no client certificate: the agent requires one.
	_, errs = run(3, "send", url, "hello", "--ca-cert", caFile)
	contains(t, "send without a client certificate", errs, "--client-cert")
	// A certificate from a CA the agent does not trust.
	_, errs = run(3, "card", url, "--ca-cert", caFile, "--client-cert", strangerCert, "--client-key", strangerKey)
	contains(t, "card with a stranger's certificate", errs, "did not accept the client certificate", strangerCert)

	// Usage errors, exit 2, naming the flag and the file.
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--client-cert", cliCert}, []string{"--client-cert and --client-key go together"}},
		{[]string{"--client-key", cliKey}, []string{"--client-cert and --client-key go together"}},
		{[]string{"--client-cert", cliCert, "--client-key", otherKey}, []string{"--client-key " + otherKey, "does not match"}},
		{[]string{"--ca-cert", filepath.Join(dir, "missing.crt")}, []string{"--ca-cert", "missing.crt"}},
		{[]string{"--ca-cert", cliKey}, []string{"--ca-cert " + cliKey, "no PEM certificate"}},
		{[]string{"--client-cert", caFile + ".none", "--client-key", cliKey}, []string{"--client-cert " + caFile + ".none"}},
	} {
		for _, cmd := range [][]string{{"card", url}, {"task", "get", url, "t-1"}} {
			_, errs := run(2, append(cmd, c.args...)...)
			contains(t, strings.Join(c.args, " "), errs, c.want...)
		}
	}
}

// TestClientTLSCAInAdditionToSystem: --ca-cert adds to the system's roots
// instead of replacing them: an agent whose CA is trusted through the
// system (here SSL_CERT_FILE) is still reached when --ca-cert names
// another CA.
func TestClientTLSCAInAdditionToSystem(t *testing.T) {
	t.Parallel()
	p, ca, dir := serveTLS(t)
	sysCA := ca.writeCA(t, dir, "system.crt")
	extra := newTestCA(t).writeCA(t, dir, "extra.crt")
	out, errs, code := parleyWithEnv(t, []string{"SSL_CERT_FILE=" + sysCA}, "card", "https://"+p.addr, "--ca-cert", extra)
	if code != 0 {
		t.Fatalf("card with system CA and an extra --ca-cert: exit %d\n%s%s", code, out, errs)
	}
}

// TestSendPushURL: `parley send --push-url URL --push-token T` registers
// the webhook with the message, and a real receiver (parley webhook)
// gets the task's notifications with the token; a URL that is not an
// absolute http(s) URL is a usage error.
func TestSendPushURL(t *testing.T) {
	t.Parallel()
	wh := startWebhook(t, "--addr", "127.0.0.1:0", "--token", "tk-9")
	p := serve(t, "--agent", "conformance", "--store", "memory", "--push-allow-private")
	url := "http://" + p.addr
	tokenFile := filepath.Join(t.TempDir(), "push-token")
	if err := os.WriteFile(tokenFile, []byte("tk-9\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	out, errs, code := parley(t, "send", url, "stream 2", "--push-url", wh.url+"hook", "--push-token", "tk-9", "--json")
	if code != 0 {
		t.Fatalf("send --push-url: exit %d\n%s%s", code, out, errs)
	}
	id, _ := field(jsonOf(t, out), "task", "id").(string)
	if id == "" {
		t.Fatalf("send --push-url: no task id in\n%s", out)
	}
	lines := wh.waitLines(t, "the task's notifications up to COMPLETED", func(l []string) bool {
		return len(l) > 0 && strings.Contains(l[len(l)-1], "status "+id+" COMPLETED")
	})
	contains(t, "webhook output", strings.Join(lines, "\n"), "artifact "+id+" stream")

	// --push-token-file, with --async: the notifications still arrive.
	out, errs, code = parley(t, "send", url, "hello", "--async", "--push-url", wh.url, "--push-token-file", tokenFile, "--json")
	if code != 0 {
		t.Fatalf("send --push-token-file: exit %d\n%s%s", code, out, errs)
	}
	id2, _ := field(jsonOf(t, out), "task", "id").(string)
	wh.waitLines(t, "the second task's COMPLETED", func(l []string) bool {
		return len(l) > 0 && strings.Contains(strings.Join(l, "\n"), "status "+id2+" COMPLETED")
	})
	if strings.Contains(wh.Stderr(), "401") || strings.Contains(wh.Stderr(), "refused") {
		t.Errorf("the webhook refused a notification:\n%s", wh.Stderr())
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--push-url", "ftp://example.com/hook"}, "want an absolute http:// or https:// URL"},
		{[]string{"--push-url", "/hook"}, "want an absolute http:// or https:// URL"},
		{[]string{"--push-url", "example.com:9000/hook"}, "want an absolute http:// or https:// URL"},
		{[]string{"--push-token", "x"}, "--push-token needs --push-url"},
		{[]string{"--push-url", wh.url, "--push-token", "x", "--push-token-file", tokenFile}, "--push-token and --push-token-file both given"},
	} {
		_, errs, code := parley(t, append([]string{"send", url, "hello"}, c.args...)...)
		if code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("send %v: exit %d, stderr %q; want 2 and %q", c.args, code, errs, c.want)
		}
	}
}
