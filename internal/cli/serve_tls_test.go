package cli_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"connectrpc.com/connect"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/a2aconnect"
	"parley.dev/parley/internal/testkit"
)

// testCA is a throw-away certificate authority that signs server
// certificates for 127.0.0.1 and localhost.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool
}

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "Parley test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &testCA{cert: cert, key: key, pool: pool}
}

// issue writes a server certificate named cn (PEM) and its key (PKCS #8
// PEM) into dir, and returns the two paths.
func (ca *testCA) issue(t *testing.T, dir, cn string, serial int64) (certFile, keyFile string) {
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
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	pk, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "server.crt"), filepath.Join(dir, "server.key")
	writeFileAtomic(t, certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	writeFileAtomic(t, keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pk}))
	return certFile, keyFile
}

func writeFileAtomic(t *testing.T, path string, b []byte) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// httpsClient trusts ca and speaks only HTTP/1.1 (h2 false) or only HTTP/2.
func (ca *testCA) httpsClient(h2 bool) *http.Client {
	p := new(http.Protocols)
	p.SetHTTP1(!h2)
	p.SetHTTP2(h2)
	return &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{
		Protocols:       p,
		TLSClientConfig: &tls.Config{RootCAs: ca.pool},
	}}
}

// grpcClient dials a host:port target with gRPC over TLS (HTTP/2, ALPN h2).
func (ca *testCA) grpcClient(target string) a2aconnect.A2AServiceClient {
	return a2aconnect.NewA2AServiceClient(ca.httpsClient(true), "https://"+target, connect.WithGRPC())
}

// serveTLS starts `parley serve` with a fresh CA-signed certificate.
func serveTLS(t *testing.T, args ...string) (*proc, *testCA, string) {
	t.Helper()
	dir := t.TempDir()
	ca := newTestCA(t)
	cert, key := ca.issue(t, dir, "parley-1", 2)
	p := serve(t, append([]string{"--store", "memory", "--agent", "conformance", "--tls-cert", cert, "--tls-key", key}, args...)...)
	return p, ca, dir
}

// httpsJSON does a request with A2A-Version 1.0 and decodes the JSON answer.
func httpsJSON(t *testing.T, hc *http.Client, method, url, contentType, body string) (map[string]any, *http.Response) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("A2A-Version", "1.0")
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		t.Fatalf("%s %s: %d: %v", method, url, resp.StatusCode, err)
	}
	return m, resp
}

// TestServeTLS serves over TLS and checks every binding on HTTP/1.1 and
// HTTP/2, gRPC over TLS, and what the TLS port refuses.
func TestServeTLS(t *testing.T) {
	p, ca, _ := serveTLS(t)
	base := "https://" + p.addr
	if out := p.Stdout(); !strings.Contains(out, base+"/.well-known/agent-card.json") || !strings.Contains(out, "over TLS") {
		t.Fatalf("stdout does not show the https card URL and gRPC over TLS:\n%s", out)
	}

	for _, h2 := range []bool{false, true} {
		checkBindingsOverTLS(t, p, ca, h2)
	}

	grpcSendAndStream(t, ca, p.addr)
	checkTLSRefusals(t, p, ca)
}

// checkBindingsOverTLS fetches the card and calls SendMessage on JSON-RPC
// and HTTP+JSON over TLS 1.3, with HTTP/2 (h2) or HTTP/1.1 only.
func checkBindingsOverTLS(t *testing.T, p *proc, ca *testCA, h2 bool) {
	t.Helper()
	base := "https://" + p.addr
	hc := ca.httpsClient(h2)
	wantMajor := map[bool]int{false: 1, true: 2}[h2]
	name := fmt.Sprintf("HTTP/%d", wantMajor)

	card, resp := httpsJSON(t, hc, "GET", base+"/.well-known/agent-card.json", "", "")
	if resp.ProtoMajor != wantMajor {
		t.Fatalf("%s: card served over %s", name, resp.Proto)
	}
	if resp.TLS == nil || resp.TLS.Version != tls.VersionTLS13 {
		t.Fatalf("%s: TLS state %+v, want TLS 1.3 negotiated", name, resp.TLS)
	}
	want := map[string]string{"JSONRPC": base + "/", "HTTP+JSON": base, "GRPC": p.addr}
	ifaces, _ := card["supportedInterfaces"].([]any)
	if len(ifaces) != 2*len(want) { // and each again at 0.3, same URLs (docs/versions.md)
		t.Fatalf("%s: interfaces %v", name, ifaces)
	}
	for _, in := range ifaces {
		b, _ := field(in, "protocolBinding").(string)
		if got := field(in, "url"); got != want[b] {
			t.Fatalf("%s: %s interface url %v, want %q", name, b, got, want[b])
		}
	}

	r, resp := httpsJSON(t, hc, "POST", base+"/", "application/json",
		`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"j-`+name+`","role":"ROLE_USER","parts":[{"text":"hello"}]}}}`)
	if resp.ProtoMajor != wantMajor || field(r, "result", "task", "status", "state") != "TASK_STATE_COMPLETED" {
		t.Fatalf("%s: JSON-RPC SendMessage over %s: %v", name, resp.Proto, r)
	}
	r, resp = httpsJSON(t, hc, "POST", base+"/message:send", "application/a2a+json",
		`{"message":{"messageId":"r-`+name+`","role":"ROLE_USER","parts":[{"text":"hello"}]}}`)
	if resp.ProtoMajor != wantMajor || field(r, "task", "status", "state") != "TASK_STATE_COMPLETED" {
		t.Fatalf("%s: REST SendMessage over %s: %v", name, resp.Proto, r)
	}
}

// checkTLSRefusals checks that the TLS port refuses plain HTTP, cleartext
// gRPC and TLS older than 1.2, and still serves TLS 1.2.
func checkTLSRefusals(t *testing.T, p *proc, ca *testCA) {
	t.Helper()
	base := "https://" + p.addr
	// Plain HTTP on the TLS port is refused with a 400, not served.
	resp, err := http.Get("http://" + p.addr + "/.well-known/agent-card.json")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "HTTPS") {
		t.Fatalf("plain HTTP on the TLS port: %d %q", resp.StatusCode, body)
	}
	// So is cleartext gRPC (h2c with prior knowledge).
	c, _ := grpcClient(p.addr)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.GetTask(ctx, connect.NewRequest(&a2a.GetTaskRequest{Id: "x"})); err == nil || connect.CodeOf(err) == connect.CodeNotFound {
		t.Fatalf("cleartext gRPC on the TLS port answered: %v", err)
	}
	// TLS 1.1 and older are off.
	old := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: ca.pool, MaxVersion: tls.VersionTLS11}}}
	if resp, err := old.Get(base + "/.well-known/agent-card.json"); err == nil {
		resp.Body.Close()
		t.Fatalf("a TLS 1.1 client was served (%s)", resp.Proto)
	}
	// TLS 1.2 is still accepted.
	tls12 := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{ForceAttemptHTTP2: true,
		TLSClientConfig: &tls.Config{RootCAs: ca.pool, MaxVersion: tls.VersionTLS12}}}
	resp, err = tls12.Get(base + "/.well-known/agent-card.json")
	if err != nil {
		t.Fatalf("TLS 1.2 client: %v", err)
	}
	resp.Body.Close()
	if resp.TLS.Version != tls.VersionTLS12 || resp.ProtoMajor != 2 {
		t.Fatalf("TLS 1.2 client: version %x, %s", resp.TLS.Version, resp.Proto)
	}
}

// grpcSendAndStream calls SendMessage and SendStreamingMessage with gRPC
// over TLS at target.
func grpcSendAndStream(t *testing.T, ca *testCA, target string) {
	t.Helper()
	c := ca.grpcClient(target)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	msg := func(text string) *connect.Request[a2a.SendMessageRequest] {
		req := connect.NewRequest(&a2a.SendMessageRequest{Message: &a2a.Message{MessageId: a2a.NewID(), Role: a2a.Role_ROLE_USER,
			Parts: []*a2a.Part{{Content: &a2a.Part_Text{Text: text}}}}})
		req.Header().Set("A2A-Version", "1.0")
		return req
	}
	res, err := c.SendMessage(ctx, msg("hello"))
	if err != nil || res.Msg.GetTask().GetStatus().GetState() != a2a.TaskState_TASK_STATE_COMPLETED {
		t.Fatalf("SendMessage over gRPC+TLS at %s: %v %v", target, res, err)
	}
	stream, err := c.SendStreamingMessage(ctx, msg("stream 3"))
	if err != nil {
		t.Fatalf("SendStreamingMessage over gRPC+TLS at %s: %v", target, err)
	}
	defer stream.Close()
	var chunks []string
	var last a2a.TaskState
	for stream.Receive() {
		ev := stream.Msg()
		if a := ev.GetArtifactUpdate(); a != nil {
			chunks = append(chunks, a2a.FirstText(&a2a.Message{Parts: a.GetArtifact().GetParts()}))
		}
		if s := ev.GetStatusUpdate(); s != nil {
			last = s.GetStatus().GetState()
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatalf("stream over gRPC+TLS at %s: %v", target, err)
	}
	if len(chunks) != 3 || chunks[0] != "chunk 0" || last != a2a.TaskState_TASK_STATE_COMPLETED {
		t.Fatalf("stream over gRPC+TLS at %s: chunks %q, last state %v", target, chunks, last)
	}
}

func TestServeTLSGRPCAddr(t *testing.T) {
	gaddr := testkit.FreeAddr(t)
	p, ca, _ := serveTLS(t, "--grpc-addr", gaddr)
	card, _ := httpsJSON(t, ca.httpsClient(false), "GET", "https://"+p.addr+"/.well-known/agent-card.json", "", "")
	var target any
	for _, in := range card["supportedInterfaces"].([]any) {
		if field(in, "protocolBinding") == "GRPC" {
			target = field(in, "url")
		}
	}
	if target != gaddr {
		t.Fatalf("GRPC interface url %v, want the dial target %q", target, gaddr)
	}
	grpcSendAndStream(t, ca, gaddr)
	grpcSendAndStream(t, ca, p.addr) // the main port serves gRPC over TLS too
	// The gRPC listener has TLS too: cleartext is refused.
	resp, err := http.Get("http://" + gaddr + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("plain HTTP on the TLS gRPC listener: %d", resp.StatusCode)
	}
}

// TestServeTLSReload: SIGHUP rereads the certificate files; a broken
// replacement leaves the previous certificate in use.
func TestServeTLSReload(t *testing.T) {
	p, ca, dir := serveTLS(t)
	peerCN := func() string {
		t.Helper()
		conn, err := tls.Dial("tcp", p.addr, &tls.Config{RootCAs: ca.pool, ServerName: "localhost"})
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0].Subject.CommonName
	}
	waitCN := func(want string) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			got := peerCN()
			if got == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("server certificate %q, want %q\n%s", got, want, p.Stderr())
			}
		}
	}
	waitCN("parley-1")

	ca.issue(t, dir, "parley-2", 3)
	p.Signal(syscall.SIGHUP)
	waitCN("parley-2")

	// A key that does not match: the reload fails, parley-2 stays.
	certOther, _ := ca.issue(t, t.TempDir(), "parley-3", 4)
	certPEM, err := os.ReadFile(certOther)
	if err != nil {
		t.Fatal(err)
	}
	writeFileAtomic(t, filepath.Join(dir, "server.crt"), certPEM) // its key is not server.key
	p.Signal(syscall.SIGHUP)
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(p.Stderr(), "not reloaded"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no log of the failed reload:\n%s", p.Stderr())
		}
	}
	if got := peerCN(); got != "parley-2" {
		t.Fatalf("after a failed reload the server presents %q, want parley-2", got)
	}
	// The process is still up and serving.
	resp, err := ca.httpsClient(true).Get("https://" + p.addr + "/.well-known/agent-card.json")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}

func TestServeTLSErrors(t *testing.T) {
	dir := t.TempDir()
	ca := newTestCA(t)
	cert, key := ca.issue(t, dir, "parley-1", 2)
	missing := filepath.Join(dir, "missing.key")
	run := func(args ...string) (int, string) {
		t.Helper()
		cmd := exec.Command(testkit.ParleyBinary(t), append([]string{"serve", "--store", "memory", "--addr", testkit.FreeAddr(t)}, args...)...)
		done := make(chan struct{})
		defer close(done)
		go func() {
			select {
			case <-done:
			case <-time.After(15 * time.Second):
				cmd.Process.Kill() // it started serving instead of failing
			}
		}()
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("%v: %v, want a failure\n%s", args, err, out)
		}
		return ee.ExitCode(), string(out)
	}

	code, out := run("--tls-cert", cert, "--tls-key", missing)
	if code != 1 || !strings.Contains(out, "TLS certificate") || !strings.Contains(out, missing) || !strings.Contains(out, "no such file") {
		t.Fatalf("missing key file: exit %d\n%s", code, out)
	}
	code, out = run("--tls-cert", key, "--tls-key", key) // a key where the certificate should be
	if code != 1 || !strings.Contains(out, "TLS certificate") {
		t.Fatalf("key given as certificate: exit %d\n%s", code, out)
	}
	for _, args := range [][]string{{"--tls-cert", cert}, {"--tls-key", key}} {
		code, out := run(args...)
		if code != 2 || !strings.Contains(out, "--tls-cert and --tls-key go together") {
			t.Fatalf("%v: exit %d, want 2\n%s", args, code, out)
		}
	}
}
