package a2ahttp_test

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
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/a2ahttp"
	"parley.dev/parley/client"
	"parley.dev/parley/server"
	"parley.dev/parley/taskstore"
)

// serveAgent completes a task with an artifact repeating the text, after
// "slow" a while later, and after "hang" never (it returns when its
// context ends).
var serveAgent = server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
	text := a2a.FirstText(req.Message)
	if err := em.Status(a2a.TaskState_TASK_STATE_WORKING, nil); err != nil {
		return err
	}
	switch text {
	case "slow":
		select {
		case <-time.After(400 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	case "hang":
		<-ctx.Done()
		return ctx.Err()
	}
	if err := em.Artifact(a2a.TextArtifact("echo", text)); err != nil {
		return err
	}
	return em.Status(a2a.TaskState_TASK_STATE_COMPLETED, nil)
})

func serveConfig(mods ...func(*a2ahttp.ServeConfig)) *a2ahttp.ServeConfig {
	cfg := &a2ahttp.ServeConfig{
		Addr: "127.0.0.1:0", Agent: serveAgent,
		Name: "serve test", Description: "An agent served by a2ahttp.Start.", Version: "1.0.0",
		Skills: []*a2a.AgentSkill{{Id: "echo", Name: "Echo", Description: "Repeats the text.", Tags: []string{"echo"}}},
	}
	for _, m := range mods {
		m(cfg)
	}
	return cfg
}

func startServer(t *testing.T, cfg *a2ahttp.ServeConfig) *a2ahttp.Server {
	t.Helper()
	s, err := a2ahttp.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// fetchCard resolves the card served at base.
func fetchCard(t *testing.T, base string) *a2a.AgentCard {
	t.Helper()
	card, err := client.Resolve(t.Context(), base, nil)
	if err != nil {
		t.Fatal(err)
	}
	return card
}

func newClient(t *testing.T, card *a2a.AgentCard, opts *client.Options) *client.Client {
	t.Helper()
	c, err := client.New(card, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// call makes one HTTP request with the A2A-Version of v1.0 and returns the
// status and the body.
func call(t *testing.T, method, url, contentType, body string, header ...string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("A2A-Version", "1.0")
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// TestServeBindingsOnOnePort: the three bindings answer on Start's one
// port: a task made over JSON-RPC is read over HTTP+JSON and over gRPC;
// the card lists every binding of both versions at the listener's URL.
func TestServeBindingsOnOnePort(t *testing.T) {
	s := startServer(t, serveConfig())
	if !strings.HasPrefix(s.URL(), "http://127.0.0.1:") {
		t.Fatalf("URL %q", s.URL())
	}
	card := fetchCard(t, s.URL())
	host := strings.TrimPrefix(s.URL(), "http://")
	want := []string{
		"JSONRPC 1.0 " + s.URL() + "/", "HTTP+JSON 1.0 " + s.URL(), "GRPC 1.0 " + host,
		"JSONRPC 0.3 " + s.URL() + "/", "HTTP+JSON 0.3 " + s.URL(), "GRPC 0.3 " + host,
	}
	var got []string
	for _, in := range card.GetSupportedInterfaces() {
		got = append(got, in.GetProtocolBinding()+" "+in.GetProtocolVersion()+" "+in.GetUrl())
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("interfaces:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	caps := card.GetCapabilities()
	if !caps.GetStreaming() || caps.PushNotifications == nil || caps.GetPushNotifications() || caps.ExtendedAgentCard != nil {
		t.Errorf("capabilities %v: want streaming, pushNotifications false, no extendedAgentCard", caps)
	}
	if card.GetName() != "serve test" || len(card.GetSkills()) != 1 || card.GetDefaultInputModes()[0] != "text/plain" {
		t.Errorf("card parts: %v", card)
	}
	if len(card.GetSecuritySchemes()) > 0 {
		t.Errorf("security schemes without credentials: %v", card.GetSecuritySchemes())
	}

	// JSON-RPC
	status, body := call(t, "POST", s.URL()+"/", "application/json",
		`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"hello"}]}}}`)
	var rpc struct {
		Result struct {
			Task struct {
				ID     string `json:"id"`
				Status struct {
					State string `json:"state"`
				} `json:"status"`
			} `json:"task"`
		} `json:"result"`
	}
	if err := json.Unmarshal(body, &rpc); err != nil || status != 200 || rpc.Result.Task.Status.State != "TASK_STATE_COMPLETED" {
		t.Fatalf("JSON-RPC SendMessage: %d %s (%v)", status, body, err)
	}
	id := rpc.Result.Task.ID

	// HTTP+JSON
	status, body = call(t, "GET", s.URL()+"/tasks/"+id, "", "")
	task := &a2a.Task{}
	if err := a2a.Unmarshal(body, task); err != nil || status != 200 || task.GetId() != id || a2a.JoinText(task.GetArtifacts()[0].GetParts()) != "hello" {
		t.Fatalf("GET /tasks/%s: %d %s (%v)", id, status, body, err)
	}

	// gRPC, on the same port (cleartext HTTP/2)
	g := newClient(t, card, &client.Options{Transports: []client.TransportFactory{client.GRPC()}})
	task, err := g.GetTask(t.Context(), &a2a.GetTaskRequest{Id: id})
	if err != nil || task.GetStatus().GetState() != a2a.TaskState_TASK_STATE_COMPLETED {
		t.Fatalf("gRPC GetTask: %v %v", task, err)
	}
	resp, err := g.SendMessage(t.Context(), &a2a.SendMessageRequest{Message: a2a.UserMessage("over gRPC")})
	if err != nil || a2a.JoinText(resp.GetTask().GetArtifacts()[0].GetParts()) != "over gRPC" {
		t.Fatalf("gRPC SendMessage: %v %v", resp, err)
	}
	if err := s.Shutdown(t.Context()); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
}

// TestServeCardDeclaresTokens: with Tokens the card declares the bearer
// scheme and requires it, and calls need a token; PublicURL places the
// interfaces; Push and ExtendedCard set their capabilities.
func TestServeCardDeclaresTokens(t *testing.T) {
	extended := &a2a.AgentCard{Name: "serve test", Description: "More.", Version: "1.0.0", Capabilities: &a2a.AgentCapabilities{}}
	s := startServer(t, serveConfig(func(c *a2ahttp.ServeConfig) {
		c.Tokens = map[string]string{"secret-token": "alice"}
		c.PublicURL = "https://agent.example.com/a2a/"
		c.Push = nopPusher{}
		c.ExtendedCard = extended
	}))
	if s.URL() != "https://agent.example.com/a2a" {
		t.Errorf("URL %q", s.URL())
	}
	_, body := call(t, "GET", "http://"+listenAddr(t, s)+a2ahttp.CardPath, "", "")
	card := &a2a.AgentCard{}
	if err := a2a.Unmarshal(body, card); err != nil {
		t.Fatalf("card: %v\n%s", err, body)
	}
	scheme := card.GetSecuritySchemes()[a2ahttp.BearerSchemeName]
	if scheme.GetHttpAuthSecurityScheme().GetScheme() != "Bearer" {
		t.Errorf("security schemes %v: want the bearer scheme", card.GetSecuritySchemes())
	}
	if reqs := card.GetSecurityRequirements(); len(reqs) != 1 || reqs[0].GetSchemes()[a2ahttp.BearerSchemeName] == nil {
		t.Errorf("security requirements %v", reqs)
	}
	in := card.GetSupportedInterfaces()
	if in[0].GetUrl() != "https://agent.example.com/a2a/" || in[1].GetUrl() != "https://agent.example.com/a2a" || in[2].GetUrl() != "agent.example.com:443" {
		t.Errorf("interfaces %v", in)
	}
	if !card.GetCapabilities().GetPushNotifications() || !card.GetCapabilities().GetExtendedAgentCard() {
		t.Errorf("capabilities %v: want pushNotifications and extendedAgentCard", card.GetCapabilities())
	}

	// Calls go to the listener itself (the public URL is elsewhere).
	rpc := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m-2","role":"ROLE_USER","parts":[{"text":"hi"}]}}}`
	url := "http://" + listenAddr(t, s) + "/a2a/"
	if status, body := call(t, "POST", url, "application/json", rpc, "Host", "agent.example.com"); status != 401 {
		t.Errorf("anonymous call: %d %s, want 401", status, body)
	}
	if status, body := call(t, "POST", url, "application/json", rpc, "Authorization", "Bearer secret-token"); status != 200 || !strings.Contains(string(body), "TASK_STATE_COMPLETED") {
		t.Errorf("call with a token: %d %s", status, body)
	}
}

// listenAddr is the address s listens on (its URL is the public one).
func listenAddr(t *testing.T, s *a2ahttp.Server) string {
	t.Helper()
	return s.Addr().String()
}

// TestServeShutdownDuringStream: ending Serve's context while a stream is
// open, on each binding, lets the task finish: the stream gets its
// terminal event, and Serve returns nil.
func TestServeShutdownDuringStream(t *testing.T) {
	for _, b := range []struct {
		name string
		tf   client.TransportFactory
	}{{a2a.BindingJSONRPC, client.JSONRPC()}, {a2a.BindingHTTPJSON, client.REST()}, {a2a.BindingGRPC, client.GRPC()}} {
		t.Run(b.name, func(t *testing.T) {
			state, err, elapsed := streamThroughShutdown(t, b.tf, "slow", 5*time.Second)
			if state != a2a.TaskState_TASK_STATE_COMPLETED {
				t.Errorf("last state %v, want COMPLETED", state)
			}
			if err != nil {
				t.Errorf("Serve: %v, want nil", err)
			}
			if elapsed > 3*time.Second {
				t.Errorf("Serve took %v to stop", elapsed)
			}
		})
	}
}

// TestServeShutdownTimeout: a task still running at ShutdownTimeout ends
// FAILED, its stream gets that status, and Serve says so.
func TestServeShutdownTimeout(t *testing.T) {
	state, err, elapsed := streamThroughShutdown(t, client.JSONRPC(), "hang", 200*time.Millisecond)
	if state != a2a.TaskState_TASK_STATE_FAILED {
		t.Errorf("last state %v, want FAILED", state)
	}
	if err == nil || !strings.Contains(err.Error(), "ended FAILED") {
		t.Errorf("Serve: %v, want the timeout's error", err)
	}
	if elapsed > 3*time.Second {
		t.Errorf("Serve took %v to stop", elapsed)
	}
}

// streamThroughShutdown serves with Serve, streams text over tf, ends
// Serve's context at the stream's first event and reads the stream to its
// end. It returns the last state the stream reported, what Serve
// returned, and how long Serve took to return once its context ended.
func streamThroughShutdown(t *testing.T, tf client.TransportFactory, text string, timeout time.Duration) (a2a.TaskState, error, time.Duration) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() {
		served <- a2ahttp.Serve(ctx, serveConfig(func(c *a2ahttp.ServeConfig) {
			c.Listener, c.ShutdownTimeout = ln, timeout
			c.Logger = slog.New(slog.DiscardHandler)
		}))
	}()
	c := newClient(t, fetchCard(t, "http://"+ln.Addr().String()), &client.Options{Transports: []client.TransportFactory{tf}})
	var state a2a.TaskState
	var stopped time.Time
	for ev, err := range c.SendStreamingMessage(t.Context(), &a2a.SendMessageRequest{Message: a2a.UserMessage(text)}) {
		if err != nil {
			t.Fatalf("stream: %v (last state %v)", err, state)
		}
		if stopped.IsZero() {
			stopped = time.Now()
			cancel()
		}
		if st := ev.Response.GetStatusUpdate().GetStatus(); st != nil {
			state = st.GetState()
		} else if task := ev.Response.GetTask(); task != nil {
			state = task.GetStatus().GetState()
		}
	}
	select {
	case err := <-served:
		return state, err, time.Since(stopped)
	case <-time.After(timeout + 5*time.Second):
		t.Fatal("Serve did not return")
		return 0, nil, 0
	}
}

type nopPusher struct{}

func (nopPusher) CheckURL(context.Context, string) error { return nil }
func (nopPusher) Queued(string)                          {}
func (nopPusher) Forget(taskstore.PushTarget)            {}

// TestServeTLS: with CertFile and KeyFile the card advertises https and
// every binding, gRPC included, answers over TLS on the one port.
func TestServeTLS(t *testing.T) {
	certFile, keyFile, pool := selfSigned(t)
	s := startServer(t, serveConfig(func(c *a2ahttp.ServeConfig) {
		c.CertFile, c.KeyFile = certFile, keyFile
		c.Logger = slog.New(slog.DiscardHandler)
	}))
	if !strings.HasPrefix(s.URL(), "https://127.0.0.1:") {
		t.Fatalf("URL %q, want https", s.URL())
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}
	card, err := client.Resolve(t.Context(), s.URL(), &client.ResolveOptions{HTTPClient: hc})
	if err != nil {
		t.Fatal(err)
	}
	for _, tf := range []client.TransportFactory{client.JSONRPC(), client.REST(), client.GRPC()} {
		c := newClient(t, card, &client.Options{HTTPClient: hc, Transports: []client.TransportFactory{tf}})
		resp, err := c.SendMessage(t.Context(), &a2a.SendMessageRequest{Message: a2a.UserMessage("over TLS")})
		if err != nil || resp.GetTask().GetStatus().GetState() != a2a.TaskState_TASK_STATE_COMPLETED {
			t.Errorf("%s: %v %v", tf.Binding, resp, err)
		}
	}
}

// selfSigned writes a self-signed certificate for 127.0.0.1 and its key
// as PEM files, and returns them with a pool that trusts the certificate.
func selfSigned(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}
