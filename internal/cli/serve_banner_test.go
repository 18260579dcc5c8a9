package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// bannerCurl is the curl command of the banner, on one line.
func bannerCurl(t *testing.T, banner string) string {
	t.Helper()
	start := strings.Index(banner, "curl -s")
	end := strings.Index(banner, "/message:send")
	if start < 0 || end < start {
		t.Fatalf("no curl in the banner:\n%s", banner)
	}
	return strings.ReplaceAll(banner[start:end+len("/message:send")], "\\\n", " ")
}

// runBannerCurl runs the banner's curl command with the real curl through
// the shell, in dir with env added, and returns what it printed.
func runBannerCurl(t *testing.T, line, dir string, env ...string) string {
	t.Helper()
	cmd := exec.Command("sh", "-c", line)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("sh -c %q: %v\n%s", line, err, out)
	}
	return string(out)
}

// bannerWithNote returns the banner once its last line, the note on the
// credential, has arrived (serve returns at the curl line before it).
func bannerWithNote(t *testing.T, p *proc) string {
	t.Helper()
	if _, err := p.WaitLine(func(l string) bool {
		return strings.Contains(l, "the banner never shows one") || strings.Contains(l, "client.pem and client-key.pem")
	}, 5*time.Second); err != nil {
		t.Fatalf("the banner has no note on the credential: %v\n%s", err, p.Stdout())
	}
	return p.Stdout()
}

// TestServeBannerCurlWithAuth (issue 35, item 15): with authentication
// on, the banner's curl example carries the credential the server wants,
// as a shell variable (bearer tokens: PARLEY_TOKEN; API keys:
// PARLEY_API_KEY) or as curl's client certificate flags, and a line says
// where to get it; the secret itself is never printed. Run as printed,
// with the variable set (or the certificate files in place), it is let
// in; without it, it is not.
func TestServeBannerCurlWithAuth(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("no curl")
	}
	dir := t.TempDir()

	t.Run("bearer", func(t *testing.T) {
		const token = "s3cret-token-value"
		tokens := filepath.Join(dir, "tokens")
		os.WriteFile(tokens, []byte("alice="+token+"\n"), 0o600)
		p := serve(t, "--store", "memory", "--auth-token-file", tokens)
		banner := bannerWithNote(t, p)
		contains(t, "banner", banner, `-H "Authorization: Bearer $PARLEY_TOKEN"`, "set PARLEY_TOKEN first", "--auth-token-file "+tokens)
		if strings.Contains(banner, token) {
			t.Fatalf("the banner prints the token:\n%s", banner)
		}
		line := bannerCurl(t, banner)
		if out := runBannerCurl(t, line, dir, "PARLEY_TOKEN="+token); !strings.Contains(out, "TASK_STATE_COMPLETED") {
			t.Errorf("the banner's curl with PARLEY_TOKEN set: %s", out)
		}
		if out := runBannerCurl(t, line, dir, "PARLEY_TOKEN="); strings.Contains(out, "TASK_STATE_COMPLETED") {
			t.Errorf("the banner's curl without a token was let in: %s", out)
		}
	})

	t.Run("api-key", func(t *testing.T) {
		out, _ := mustRun(t, 0, "apikey", "new", "alice")
		lines := strings.Split(strings.TrimSpace(out), "\n") // the key, then the line for the file
		keys := filepath.Join(dir, "api-keys")
		os.WriteFile(keys, []byte(lines[1]+"\n"), 0o600)
		p := serve(t, "--store", "memory", "--api-keys", keys)
		banner := bannerWithNote(t, p)
		contains(t, "banner", banner, `-H "X-API-Key: $PARLEY_API_KEY"`, "parley apikey new", "--api-keys "+keys)
		if strings.Contains(banner, lines[0]) || strings.Contains(banner, "Authorization") {
			t.Fatalf("the banner prints the key, or a bearer header:\n%s", banner)
		}
		if out := runBannerCurl(t, bannerCurl(t, banner), dir, "PARLEY_API_KEY="+lines[0]); !strings.Contains(out, "TASK_STATE_COMPLETED") {
			t.Errorf("the banner's curl with PARLEY_API_KEY set: %s", out)
		}
	})

	t.Run("client-certificate", func(t *testing.T) {
		ca := newTestCA(t)
		caFile := ca.writeCA(t, dir, "ca.crt")
		srvCert, srvKey := ca.issue(t, dir, "parley-1", 2)
		cert, key := ca.issueClient(t, dir, "alice", "alice", 3)
		p := serve(t, "--store", "memory", "--tls-cert", srvCert, "--tls-key", srvKey, "--tls-client-ca", caFile, "--tls-client-auth", "require",
			"--auth-token", "bob=tok") // with require, the certificate is what every caller needs
		banner := bannerWithNote(t, p)
		contains(t, "banner", banner, "--cert client.pem --key client-key.pem", "--tls-client-ca "+caFile)
		if strings.Contains(banner, "Authorization") {
			t.Errorf("the banner asks for a bearer token where a certificate is required:\n%s", banner)
		}
		// The files under the banner's names; curl trusts the test CA.
		certs := t.TempDir()
		for from, to := range map[string]string{cert: "client.pem", key: "client-key.pem"} {
			b, _ := os.ReadFile(from)
			os.WriteFile(filepath.Join(certs, to), b, 0o600)
		}
		line := strings.Replace(bannerCurl(t, banner), "curl -s", "curl -s --cacert "+caFile, 1)
		if out := runBannerCurl(t, line, certs); !strings.Contains(out, "TASK_STATE_COMPLETED") {
			t.Errorf("the banner's curl with the client certificate: %s", out)
		}
	})

	t.Run("anonymous-allowed", func(t *testing.T) {
		p := serve(t, "--store", "memory", "--auth-token", "alice=tok", "--allow-anonymous")
		p.WaitLine(func(l string) bool { return strings.Contains(l, "the shell puts the time") }, 5*time.Second)
		if banner := p.Stdout(); strings.Contains(banner, "PARLEY_TOKEN") {
			t.Errorf("anonymous callers are let in, yet the banner asks for a token:\n%s", banner)
		}
	})
}
