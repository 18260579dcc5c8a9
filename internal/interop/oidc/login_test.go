// Package oidc_test signs `parley auth login` in to a real OpenID
// provider, the zitadel/oidc module's example provider (cmd/oidcop), with
// each OAuth flow, and uses the stored tokens against Parley's
// conformance agent, which verifies them as JWTs of that provider
// (serve --jwt-issuer). It is a module of its own so that the main module
// does not depend on the provider.
package oidc_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"parley.dev/parley/internal/testenv"
)

// provider is a running cmd/oidcop.
type provider struct {
	issuer    string
	discovery map[string]any
}

var (
	buildOnce sync.Once
	opBin     string
	buildErr  string
)

// startProvider builds and starts the OpenID provider, with env added to
// its environment; a build that fails skips the test outside CI
// (CI=true: fails it).
func startProvider(t *testing.T, env ...string) *provider {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "oidcop")
		if err != nil {
			buildErr = err.Error()
			return
		}
		opBin = filepath.Join(dir, "oidcop")
		out, err := exec.Command("go", "build", "-o", opBin, "./cmd/oidcop").CombinedOutput()
		if err != nil {
			buildErr = "the OpenID provider (github.com/zitadel/oidc/v3's example) could not be built (are the Go module proxy and the module cache reachable?): " + err.Error() + "\n" + string(out)
		}
	})
	if buildErr != "" {
		testenv.SkipOrFailInCI(t, buildErr)
	}
	port := freePort(t)
	cmd := exec.Command(opBin)
	cmd.Env = append(append(os.Environ(), "PORT="+port), env...)
	testenv.StartProcess(t, cmd, &testenv.ProcessOptions{Name: "oidcop", KillAtCleanup: true})
	p := &provider{issuer: "http://localhost:" + port + "/"}
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get(p.issuer + ".well-known/openid-configuration")
		if err == nil {
			err = json.NewDecoder(resp.Body).Decode(&p.discovery)
			resp.Body.Close()
			if err == nil {
				return p
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the OpenID provider did not answer its discovery document: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func freePort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}

// agent starts Parley's conformance agent accepting the provider's JWTs
// for audience aud, and returns its URL.
func agent(t *testing.T, p *provider, aud string) string {
	t.Helper()
	addr := "127.0.0.1:" + freePort(t)
	cmd := exec.Command(parleyBin(t), "serve", "--addr", addr, "--agent", "conformance", "--store", "memory",
		"--jwt-issuer", p.issuer, "--jwt-audience", aud)
	proc := testenv.StartProcess(t, cmd, &testenv.ProcessOptions{Name: "parley serve", KillAtCleanup: true})
	if _, err := proc.WaitLine(func(l string) bool { return strings.Contains(l, "message:send") }, 20*time.Second); err != nil {
		t.Fatalf("parley serve did not start: %v", err)
	}
	return "http://" + addr
}

func parleyBin(t *testing.T) string {
	return testenv.GoBuild(t, filepath.Join("..", "..", ".."), "./cmd/parley") // the main module's own build
}

// cli is the parley command run with HOME set to home (where its tokens
// are kept).
type cli struct {
	t    *testing.T
	home string
}

func (c cli) cmd(args ...string) *exec.Cmd {
	cmd := exec.Command(parleyBin(c.t), args...)
	cmd.Env = append(os.Environ(), "HOME="+c.home, "NO_COLOR=1")
	cmd.Dir = c.home
	return cmd
}

// run runs parley and returns its stdout and stderr, failing the test
// unless it exits with want.
func (c cli) run(want int, args ...string) (string, string) {
	c.t.Helper()
	var out, errb bytes.Buffer
	cmd := c.cmd(args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		c.t.Fatal(err)
	}
	if code != want {
		c.t.Fatalf("parley %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, want, out.String(), errb.String())
	}
	return out.String(), errb.String()
}

// login starts `parley auth login` with args, calls sign with each line
// of its stderr until sign returns true, and waits for it to exit 0.
func (c cli) login(sign func(line string) bool, args ...string) string {
	c.t.Helper()
	cmd := c.cmd(append([]string{"auth", "login"}, args...)...)
	var out bytes.Buffer
	cmd.Stdout = &out
	stderr, err := cmd.StderrPipe()
	if err != nil {
		c.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	var log strings.Builder
	done := false
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		log.WriteString(sc.Text() + "\n")
		if !done {
			done = sign(sc.Text())
		}
	}
	if err := cmd.Wait(); err != nil || !done {
		c.t.Fatalf("parley auth login %s: %v (signed in: %v)\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, done, out.String(), log.String())
	}
	return out.String()
}

// browser is an HTTP client with cookies that follows redirects, as a
// person's browser would.
func browser(t *testing.T) *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, Timeout: 30 * time.Second}
}

func post(t *testing.T, b *http.Client, u string, form url.Values) string {
	t.Helper()
	resp, err := b.PostForm(u, form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %s\n%s", u, resp.Status, body)
	}
	return string(body)
}

// The provider's test user (its example user store).
const (
	user     = "test-user@localhost"
	password = "verysecure"
)

// tokenFile is the one token file parley keeps under home, after a check
// of its mode (0600) and its directory's (0700).
func tokenFile(t *testing.T, home string) (string, map[string]any) {
	t.Helper()
	dir := filepath.Join(home, ".config", "a2a-cli", "tokens")
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("token directory %s: %v, mode %v, want 0700", dir, err, fi.Mode().Perm())
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) != 1 {
		t.Fatalf("token files: %v, want one", files)
	}
	fi, _ := os.Stat(files[0])
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("token file %s: mode %v, want 0600", files[0], fi.Mode().Perm())
	}
	b, _ := os.ReadFile(files[0])
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return files[0], m
}

// sendOK sends a message with the stored token and checks the agent
// answered.
func sendOK(t *testing.T, c cli, url string) {
	t.Helper()
	out, _ := c.run(0, "send", "-a", url, "hello", "-o", "json")
	if !strings.Contains(out, "TASK_STATE_COMPLETED") {
		t.Errorf("send with the stored token: %s", out)
	}
}

// TestAuthLoginDeviceOIDC: auth login reads the agent's OpenID Connect
// scheme, finds the device endpoint by discovery, prints the URL and the
// code, and stores the token it is given once the user has approved;
// later commands against the agent send it (the agent refuses them
// without it).
func TestAuthLoginDeviceOIDC(t *testing.T) {
	t.Parallel()
	p := startProvider(t)
	a := agent(t, p, "parley-cli")
	c := cli{t, t.TempDir()}
	out, _ := c.run(4, "send", "-a", a, "hello", "-o", "json")
	if !strings.Contains(out, "A2ACLI_ERR_CREDENTIALS_MISSING") || !strings.Contains(out, "auth login") {
		t.Errorf("send before signing in: %s", out)
	}
	code := regexp.MustCompile(`open (\S+) and enter the code (\S+)`)
	out = c.login(func(line string) bool {
		m := code.FindStringSubmatch(line)
		if m == nil {
			return false
		}
		b := browser(t)
		verify, _ := url.Parse(m[1])
		page := post(t, b, verify.ResolveReference(&url.URL{Path: "/device/login"}).String(),
			url.Values{"user_code": {m[2]}, "username": {user}, "password": {password}})
		if !strings.Contains(page, "allowed") {
			t.Fatalf("the provider's confirm page:\n%s", page)
		}
		post(t, b, verify.ResolveReference(&url.URL{Path: "/device/confirm"}).String(), url.Values{"action": {"allowed"}})
		return true
	}, "-a", a, "--client-id", "parley-cli", "--flow", "device")
	for _, want := range []string{"Scheme: oidc", "Flow: device", "Token File: "} {
		if !strings.Contains(out, want) {
			t.Errorf("auth login's output lacks %q:\n%s", want, out)
		}
	}
	path, _ := tokenFile(t, c.home)
	sendOK(t, c, a)
	// config show lists the stored login (the persisted data, SPEC §8.3),
	// never the token.
	out, _ = c.run(0, "config", "show")
	if !strings.Contains(out, "auth-login: "+a+"/, device, expires ") || !strings.Contains(out, "("+path+")") {
		t.Errorf("config show does not list the stored login:\n%s", out)
	}
	// Another agent gets no token of this one.
	other := agent(t, p, "parley-cli")
	c.run(4, "send", "-a", other, "hello")
}

// TestAuthLoginCodePKCE: the authorization code flow with PKCE: auth
// login prints the provider's URL and listens on a loopback port for the
// redirect; the sign-in is driven through the provider's own login page.
// With offline_access it gets a refresh token, and a later command whose
// token has expired refreshes it (and stores the new one, 0600).
func TestAuthLoginCodePKCE(t *testing.T) {
	t.Parallel()
	p := startProvider(t)
	a := agent(t, p, "parley-cli")
	c := cli{t, t.TempDir()}
	auth := regexp.MustCompile(`^\s+(http://localhost:\d+/auth\?\S+)$`)
	c.login(func(line string) bool {
		m := auth.FindStringSubmatch(line)
		if m == nil {
			return false
		}
		u, _ := url.Parse(m[1])
		q := u.Query()
		if q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || !strings.HasPrefix(q.Get("redirect_uri"), "http://127.0.0.1:") {
			t.Errorf("the authorization URL has no PKCE challenge or no loopback redirect: %s", u)
		}
		b := browser(t)
		resp, err := b.Get(m[1]) // the provider redirects to its login page
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		id := resp.Request.URL.Query().Get("authRequestID")
		if id == "" {
			t.Fatalf("no login page: %s", resp.Request.URL)
		}
		// The login form's POST redirects back to parley's listener.
		page := post(t, b, resp.Request.URL.ResolveReference(&url.URL{Path: "/login/username"}).String(),
			url.Values{"id": {id}, "username": {user}, "password": {password}})
		if !strings.Contains(page, "Signed in") {
			t.Errorf("the loopback redirect's page: %s", page)
		}
		return true
	}, "-a", a, "--client-id", "parley-cli", "--flow", "code", "--scope", "offline_access")
	path, st := tokenFile(t, c.home)
	tok := st["token"].(map[string]any)
	if tok["refresh_token"] == nil || tok["refresh_token"] == "" {
		t.Fatalf("no refresh token stored: %v", st)
	}
	sendOK(t, c, a)

	// Expire the stored token: the next command refreshes it.
	old := tok["access_token"]
	tok["expiry"] = time.Now().Add(-time.Hour).Format(time.RFC3339)
	b, _ := json.Marshal(st)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	sendOK(t, c, a)
	_, st = tokenFile(t, c.home)
	if now := st["token"].(map[string]any); now["access_token"] == old {
		t.Errorf("the expired token was not refreshed: %v", now)
	}

	// A token the agent refuses (not one of the provider's) is an
	// authentication failure, exit 4.
	tok = st["token"].(map[string]any)
	tok["access_token"] = "not-a-jwt"
	b, _ = json.Marshal(st)
	os.WriteFile(path, b, 0o600)
	out, _ := c.run(4, "send", "-a", a, "hello", "-o", "json")
	if !strings.Contains(out, "A2ACLI_ERR_AUTH_FAILED") {
		t.Errorf("a refused stored token: %s", out)
	}
}

// TestAuthLoginClientCredentials: an agent whose card (a card file)
// declares an OAuth 2.0 scheme with the client-credentials flow: auth
// login gets a token from the flow's token URL with the client's secret,
// keeps the secret (0600) and gets a new token when this one expires.
// A wrong secret is refused by the provider: exit 4.
func TestAuthLoginClientCredentials(t *testing.T) {
	t.Parallel()
	p := startProvider(t)
	a := agent(t, p, "sid1")
	c := cli{t, t.TempDir()}
	file := serviceCard(t, c, p, a)

	out, _ := c.run(4, "auth", "login", "-a", file, "--scheme", "service", "--client-id", "sid1", "--client-secret", "wrong", "-o", "json")
	if !strings.Contains(out, "A2ACLI_ERR_AUTH_FAILED") {
		t.Errorf("a wrong secret: %s", out)
	}
	cmd := c.cmd("auth", "login", "-a", file, "--scheme", "service", "--client-id", "sid1")
	cmd.Env = append(cmd.Env, "A2ACLI_CLIENT_SECRET=verysecret")
	if b, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(b), "Flow: client-credentials") || !strings.Contains(string(b), "Scheme: service") {
		t.Fatalf("auth login (client credentials): %v\n%s", err, b)
	}
	path, st := tokenFile(t, c.home)
	if st["clientSecret"] != "verysecret" {
		t.Errorf("the client's secret was not kept for the next token: %v", st)
	}
	sendOK(t, c, file)
	sendOK(t, c, a) // the same agent, named by its URL: the same token
	tok := st["token"].(map[string]any)
	old := tok["access_token"]
	tok["expiry"] = time.Now().Add(-time.Hour).Format(time.RFC3339)
	b, _ := json.Marshal(st)
	os.WriteFile(path, b, 0o600)
	sendOK(t, c, a)
	if _, st = tokenFile(t, c.home); st["token"].(map[string]any)["access_token"] == old {
		t.Errorf("the expired client-credentials token was not renewed")
	}
}

// serviceCard writes the card of the agent at a, with an OAuth 2.0
// scheme "service" whose client-credentials flow is the provider's, to a
// file in c's home, and returns the file's path.
func serviceCard(t *testing.T, c cli, p *provider, a string) string {
	t.Helper()
	cardJSON, _ := c.run(0, "card", "get", "-a", a, "-o", "json")
	var card map[string]any
	json.Unmarshal([]byte(cardJSON), &card)
	schemes, _ := card["securitySchemes"].(map[string]any)
	if schemes == nil {
		t.Fatalf("the agent's card declares no security scheme: %s", cardJSON)
	}
	schemes["service"] = map[string]any{"oauth2SecurityScheme": map[string]any{
		"flows": map[string]any{"clientCredentials": map[string]any{"tokenUrl": p.discovery["token_endpoint"], "scopes": map[string]any{"profile": "the service's profile"}}}}}
	b, _ := json.Marshal(card)
	file := filepath.Join(c.home, "card.json")
	os.WriteFile(file, b, 0o600)
	return file
}

// TestChatOutlivesToken: one `parley chat` session lasts longer than the
// access token of auth login (the provider issues tokens living 12 s, so
// oauth2's 10 s margin makes one stale 2 s after it was issued): the
// session's later turn is sent with a token the command got from the
// provider during the session (and stored, 0600), and succeeds.
func TestChatOutlivesToken(t *testing.T) {
	t.Parallel()
	p := startProvider(t, "ACCESS_TOKEN_LIFETIME=12s")
	a := agent(t, p, "sid1")
	c := cli{t, t.TempDir()}
	file := serviceCard(t, c, p, a)
	login := c.cmd("auth", "login", "-a", file, "--scheme", "service", "--client-id", "sid1")
	login.Env = append(login.Env, "A2ACLI_CLIENT_SECRET=verysecret")
	if b, err := login.CombinedOutput(); err != nil {
		t.Fatalf("auth login (client credentials): %v\n%s", err, b)
	}
	_, st := tokenFile(t, c.home)
	first := st["token"].(map[string]any)["access_token"]

	chat := c.cmd("chat", "-a", file, "-o", "json")
	in, err := chat.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	outPipe, err := chat.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errb bytes.Buffer
	chat.Stderr = &errb
	if err := chat.Start(); err != nil {
		t.Fatal(err)
	}
	defer chat.Process.Kill()
	out := bufio.NewScanner(outPipe)
	turn := func(n int) {
		t.Helper()
		io.WriteString(in, "hello\n")
		if !out.Scan() {
			t.Fatalf("turn %d: no answer (stderr: %s)", n, errb.String())
		}
		if !strings.Contains(out.Text(), "TASK_STATE_COMPLETED") {
			t.Fatalf("turn %d: %s (stderr: %s)", n, out.Text(), errb.String())
		}
	}
	turn(1)
	time.Sleep(3 * time.Second) // the token is now within oauth2's margin of its expiry
	turn(2)
	_, st = tokenFile(t, c.home)
	if now := st["token"].(map[string]any)["access_token"]; now == first {
		t.Errorf("the chat session's second turn did not renew the stored token")
	}
	in.Close()
	if err := chat.Wait(); err != nil {
		t.Errorf("parley chat: %v\n%s", err, errb.String())
	}
}
