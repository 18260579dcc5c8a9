package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	neturl "net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/oauth2"

	"parley.dev/parley/a2a"
)

// The tokens `parley auth login` gets are configuration the user may
// inspect and remove, never session state (A2A CLI SPEC §8.3): one JSON
// file per agent under ~/.config/a2a-cli/tokens/, mode 0600 in a 0700
// directory (secrets are never world-readable, §8.3). The client commands
// attach the token to their calls to that agent when no credential is
// given (§12.2), refreshing it whenever it has expired, before a call or
// during a long session.

// storedLogin is one agent's file.
type storedLogin struct {
	Agent        string        `json:"agent"` // agentKey of its card
	Scheme       string        `json:"scheme"`
	Flow         string        `json:"flow"`
	TokenURL     string        `json:"tokenUrl"`
	RefreshURL   string        `json:"refreshUrl,omitempty"`
	ClientID     string        `json:"clientId"`
	ClientSecret string        `json:"clientSecret,omitempty"`
	Scopes       []string      `json:"scopes,omitempty"`
	Token        *oauth2.Token `json:"token"`
}

// errLoginExpired: the stored token has expired and cannot be renewed
// (no refresh token, or the server refused it).
var errLoginExpired = errors.New("the token of parley auth login has expired and could not be refreshed")

// configDir is the tool's configuration directory, ~/.config/a2a-cli
// (SPEC §8.3).
func configDir() (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".config", "a2a-cli"), nil
}

// agentKey is what a stored token belongs to: the URL of the card's first
// interface, as the agent serves it. Any spelling of --agent-card that
// reads the same card (origin, card URL, card file) finds the token.
func agentKey(card *a2a.AgentCard) string {
	if ins := card.GetSupportedInterfaces(); len(ins) > 0 {
		return ins[0].GetUrl()
	}
	return card.GetName()
}

// loginPath is the token file of an agent.
func loginPath(agent string) (string, error) {
	dir, err := configDir()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(agent))
	return filepath.Join(dir, "tokens", hex.EncodeToString(sum[:12])+".json"), nil
}

// saveLogin writes st to its file (0600, replaced whole) and returns the
// file's path.
func saveLogin(st *storedLogin) (string, error) {
	path, err := loginPath(st.Agent)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", err
	}
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".token-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return "", err
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	return path, os.Rename(tmp.Name(), path)
}

// loadLogin reads the stored login of agent; nil when there is none.
func loadLogin(agent string) (*storedLogin, string, error) {
	path, err := loginPath(agent)
	if err != nil {
		return nil, "", nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, path, nil
	}
	if err != nil {
		return nil, path, err
	}
	st, err := parseLogin(b)
	if err != nil {
		return nil, path, fmt.Errorf("%s: %v (remove it, and sign in again)", path, err)
	}
	if st.Agent != agent {
		return nil, path, nil
	}
	return st, path, nil
}

// parseLogin decodes a token file, which anyone able to write the
// directory may have put there: untrusted input.
func parseLogin(b []byte) (*storedLogin, error) {
	var st storedLogin
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("not a token file of parley auth login: %v", err)
	}
	if st.Token == nil {
		return nil, errors.New("not a token file of parley auth login: no token")
	}
	return &st, nil
}

// config is the OAuth configuration that refreshes st's token.
func (st *storedLogin) config() *oauth2.Config {
	tokenURL := st.TokenURL
	if st.RefreshURL != "" {
		tokenURL = st.RefreshURL
	}
	return &oauth2.Config{ClientID: st.ClientID, ClientSecret: st.ClientSecret, Scopes: st.Scopes, Endpoint: oauth2.Endpoint{TokenURL: tokenURL}}
}

// useStoredToken makes the token of `parley auth login` the command's
// bearer credential for card's agent, when no credential was given, and
// returns the agent it was stored for ("" when none is used). An expired
// token is refreshed (and the new one stored) first, so that a login that
// can no longer be renewed fails the command before any call. The
// command's client then asks c.login for the token of every request
// (client.Options.BearerTokenFunc): a session that outlives the access
// token (parley chat, a stream on a long task, task get --wait) goes on
// with its successor.
func (c *common) useStoredToken(ctx context.Context, card *a2a.AgentCard) (string, error) {
	if c.login != nil {
		return c.login.agent(), nil
	}
	if c.token != "" || c.apiKey != "" {
		return "", nil
	}
	st, path, err := loadLogin(agentKey(card))
	if err != nil || st == nil {
		return "", err
	}
	src := &loginSource{c: c, st: st, path: path}
	tok, err := src.token(ctx)
	if err != nil {
		return "", err
	}
	c.token, c.login = tok, src
	return st.Agent, nil
}

// loginSource gives the current access token of a stored login,
// refreshing it (and storing the new one, 0600) when it has expired. It
// is safe for concurrent use: one refresh at a time.
type loginSource struct {
	c    *common
	mu   sync.Mutex
	st   *storedLogin
	path string
}

func (s *loginSource) agent() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.Agent
}

// token returns the access token, valid for some seconds more at least
// (oauth2.Token.Valid). An expired one is replaced by the one in the file
// when another command renewed it meanwhile (read first, so that a
// rotating refresh token, RFC 9700 §4.14.2, is not spent twice), else
// refreshed with the refresh token, or, for the client-credentials flow,
// got anew.
func (s *loginSource) token(ctx context.Context) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st.Token.Valid() {
		return s.st.Token.AccessToken, nil
	}
	if s.renewedElsewhere() {
		return s.st.Token.AccessToken, nil
	}
	st := s.st
	tok := st.Token
	var err error
	ctx = context.WithValue(ctx, oauth2.HTTPClient, s.c.plainHTTPClient())
	switch {
	case tok.RefreshToken != "":
		tok, err = st.config().TokenSource(ctx, tok).Token()
	case st.Flow == flowClient && st.ClientSecret != "":
		tok, err = st.clientCredentials().Token(ctx)
	default:
		return "", &loginError{errLoginExpired}
	}
	if err != nil {
		// Another command may have renewed the token while this one
		// asked: the refresh token this one holds is then spent and
		// refused, and the successor that command stored serves.
		if s.renewedElsewhere() {
			return s.st.Token.AccessToken, nil
		}
		return "", &loginError{fmt.Errorf("%w: %v", errLoginExpired, err)}
	}
	if tok.RefreshToken == "" {
		tok.RefreshToken = st.Token.RefreshToken
	}
	renewed := *st
	renewed.Token = tok
	s.st = &renewed
	if _, err := saveLogin(s.st); err != nil {
		s.c.warn(fmt.Sprintf("the refreshed token could not be stored in %s: %v", s.path, err))
	}
	return tok.AccessToken, nil
}

// renewedElsewhere reports whether the token file now holds a valid
// token other than the one s has (another command refreshed it), and
// takes it.
func (s *loginSource) renewedElsewhere() bool {
	now, _, _ := loadLogin(s.st.Agent)
	if now == nil || !now.Token.Valid() || now.Token.AccessToken == s.st.Token.AccessToken {
		return false
	}
	s.st = now
	return true
}

// keepSignedInHost leaves out of card the interfaces the stored token of
// agent must not go to, naming them on stderr. The token was got for the
// agent at that URL (agentKey), while the card that led to it may be any
// card (a URL, a file, a catalog entry) and list other hosts after it; the
// client sends its bearer token to whichever interface it uses, so only
// those on the agent's host and port go on, and none over plain HTTP when
// the agent's URL is https (A2A §7.1, §13.4): a credential goes only to
// the agent it was got for. The agent's own interface, the card's first,
// always stays.
func (c *common) keepSignedInHost(card *a2a.AgentCard, agent string) {
	ins := card.GetSupportedInterfaces()
	keep := ins[:0:0]
	for _, in := range ins {
		if sameOrigin(agent, in.GetUrl()) {
			keep = append(keep, in)
			continue
		}
		c.warn(fmt.Sprintf("the token of parley auth login for %s is not sent to %s: its %s interface is left out",
			agent, in.GetUrl(), in.GetProtocolBinding()))
	}
	card.SupportedInterfaces = keep
}

// sameOrigin reports whether a credential for the URL agent may go to the
// interface URL iface: the same host and port (a scheme's default port
// when none is written), and the same scheme, or, for an interface that
// names none (a gRPC target, host:port), an agent not served over https.
func sameOrigin(agent, iface string) bool {
	as, ah := origin(agent)
	is, ih := origin(iface)
	if ah == "" || ah != ih {
		return false
	}
	return as == is || (is == "" && as != "https")
}

// origin is the lower-case scheme and host:port of a URL ("" for a part
// it lacks); a gRPC target without a scheme (host:port, dns:///host:port)
// has only the host:port.
func origin(raw string) (scheme, hostport string) {
	if !strings.Contains(raw, "://") {
		raw = "//" + raw
	} else if rest, ok := strings.CutPrefix(raw, "dns:///"); ok {
		raw = "//" + rest
	}
	u, err := neturl.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return "", ""
	}
	scheme = strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		port = map[string]string{"https": "443", "http": "80"}[scheme]
	}
	return scheme, net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// aLogin is a stored login and its file.
type aLogin struct {
	login *storedLogin
	path  string
}

// storedLogins are the logins kept in the tokens directory, in the
// order of their files (unreadable files are left out).
func storedLogins() []aLogin {
	dir, err := configDir()
	if err != nil {
		return nil
	}
	files, _ := filepath.Glob(filepath.Join(dir, "tokens", "*.json"))
	var out []aLogin
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		st, err := parseLogin(b)
		if err != nil {
			continue
		}
		out = append(out, aLogin{st, f})
	}
	return out
}
