package cli

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"parley.dev/parley/a2a"
)

// `parley auth login` gets an OAuth 2.x token for an agent the way its
// card says (A2A CLI SPEC §12.2, §12.3; A2A §4.5): from an OAuth 2.0
// security scheme's flows, or from an OpenID Connect scheme's discovery
// document. It stores the token (tokenstore.go), and the client commands
// attach it to their calls to that agent afterwards.

// The flows auth login runs.
const (
	flowDevice = "device"             // RFC 8628
	flowCode   = "code"               // authorization code with PKCE (RFC 7636), loopback redirect (RFC 8252)
	flowClient = "client-credentials" // RFC 6749 §4.4
)

// loginTimeout bounds a login without --timeout: a person has to act.
const loginTimeout = 10 * time.Minute

// oauthServer is what a security scheme says about its authorization
// server: its endpoints and the flows it offers.
type oauthServer struct {
	scheme              string // the scheme's name on the card
	oidc                bool   // an OpenID Connect scheme
	authURL, tokenURL   string
	deviceURL           string
	clientCredentials   bool
	scopes              []string // the flow's scopes (all of them are asked for)
	refreshURL          string
	authCode, deviceGot bool
}

// authFlags are the flags of `parley auth login` besides the common ones.
type authFlags struct {
	flow, scheme, clientID, secret string
	scopes                         multiFlag
}

// addAuthFlags defines the flags of `parley auth login` on fs.
func addAuthFlags(fs *flag.FlagSet) *authFlags {
	af := &authFlags{}
	fs.StringVar(&af.flow, "flow", "", "the OAuth `FLOW`: device, code or client-credentials (default: see above)")
	fs.StringVar(&af.scheme, "scheme", "", "the card's security scheme `NAME` to use (default: the first, by name, that offers the flow)")
	fs.StringVar(&af.clientID, "client-id", "", "the OAuth client `ID` registered with the authorization server")
	fs.StringVar(&af.secret, "client-secret", "", "the client's `SECRET` (confidential clients and client-credentials; prefer $A2ACLI_CLIENT_SECRET)")
	fs.Var(&af.scopes, "scope", "also ask for this `SCOPE` (repeatable; the flow's scopes, and openid for an OpenID Connect sign-in with --flow code, are always asked for)")
	return af
}

// authCmd runs `parley auth login`.
func authCmd(ctx context.Context, e *env, args []string) error {
	sub, rest := splitSubcommand(args)
	if sub != "login" {
		if sub == "" || sub == "-h" || sub == "--help" || sub == "-help" {
			rest = []string{"-h"}
		} else {
			return usageError{fmt.Errorf("unknown subcommand %q: want login", sub)}
		}
	}
	e.name = "auth login"
	fs, c := e.newFlags(`auth login -a AGENT [--flow device|code|client-credentials] --client-id ID [flags]

Signs in to AGENT with OAuth 2.x as its card's security schemes say
(an oauth2 scheme's flows, or an openIdConnect scheme's discovery
document) and stores the token for the client commands, which send it
to that agent from then on (refreshing it when it expires):
  device              RFC 8628: a URL and a code to enter are printed on stderr
  code                authorization code with PKCE: a URL to open is printed on
                      stderr; the browser comes back to a loopback listener
  client-credentials  with --client-secret (or $A2ACLI_CLIENT_SECRET), no person
Without --flow: client-credentials when a secret is given, else device,
else code, whichever the scheme offers. Tokens are kept in
~/.config/a2a-cli/tokens/ (one file per agent, mode 0600); remove the
file to sign out.`, false)
	af := addAuthFlags(fs)
	pos, err := e.parse(fs, rest)
	if err != nil {
		return err
	}
	if err := wantArgs(pos, 1, 1, "the agent (-a AGENT)"); err != nil {
		return err
	}
	if err := af.check(); err != nil {
		return err
	}
	timeout := c.timeout
	if timeout == 0 {
		timeout = loginTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	card, err := c.resolve(ctx, pos[0], nil)
	if err != nil {
		return err
	}
	hc := c.plainHTTPClient()
	ctx = context.WithValue(ctx, oauth2.HTTPClient, hc)
	srv, f, err := pickFlow(ctx, hc, card, af.scheme, af.flow, af.secret != "")
	if err != nil {
		return err
	}
	st := &storedLogin{Agent: agentKey(card), Scheme: srv.scheme, Flow: f, TokenURL: srv.tokenURL,
		ClientID: af.clientID, Scopes: appendAll(srv.scopes, af.scopes)}
	// An OpenID Connect sign-in through the browser is an authentication
	// request, which names the openid scope (OpenID Connect Core §3.1.2.1).
	// The device and client-credentials flows get an access token for the
	// agent, and ask only for the scopes named.
	if srv.oidc && f == flowCode && !slices.Contains(st.Scopes, "openid") {
		st.Scopes = append([]string{"openid"}, st.Scopes...)
	}
	// The secret is kept (mode 0600) to get the next token: client
	// credentials have no refresh token, and a confidential client needs it
	// to refresh.
	st.ClientSecret, st.RefreshURL = af.secret, srv.refreshURL
	cfg := st.config()
	cfg.Endpoint = oauth2.Endpoint{AuthURL: srv.authURL, DeviceAuthURL: srv.deviceURL, TokenURL: srv.tokenURL}
	var tok *oauth2.Token
	switch f {
	case flowClient:
		tok, err = st.clientCredentials().Token(ctx)
	case flowDevice:
		tok, err = e.deviceLogin(ctx, cfg)
	case flowCode:
		tok, err = e.codeLogin(ctx, cfg)
	}
	if err != nil {
		return loginFailed(err)
	}
	st.Token = tok
	path, err := saveLogin(st)
	if err != nil {
		return err
	}
	e.printLogin(st, path)
	return nil
}

// check reports the flags' mistakes, before any call.
func (af *authFlags) check() error {
	if af.clientID == "" {
		return usageError{errors.New("--client-id is required: the client registered with the agent's authorization server")}
	}
	switch af.flow {
	case "", flowDevice, flowCode, flowClient:
	default:
		return usageError{fmt.Errorf("--flow %q: want device, code or client-credentials", af.flow)}
	}
	if af.flow == flowClient && af.secret == "" {
		return usageError{errors.New("--flow client-credentials needs --client-secret (or $A2ACLI_CLIENT_SECRET)")}
	}
	return nil
}

// printLogin reports a sign-in: which agent, scheme and flow, where the
// token is kept and when it expires. With -o json it is one object (not a
// protocol object: the sign-in's own record, with the text form's names).
func (e *env) printLogin(st *storedLogin, path string) {
	if e.c.json {
		b, _ := json.Marshal(map[string]any{"agent": st.Agent, "scheme": st.Scheme, "flow": st.Flow, "tokenFile": path, "expiry": st.Token.Expiry})
		e.out.printf("%s\n", b)
		return
	}
	e.out.printf("Agent: %s\nScheme: %s\nFlow: %s\nToken File: %s\n", st.Agent, st.Scheme, st.Flow, path)
	if !st.Token.Expiry.IsZero() {
		e.out.printf("Expires: %s\n", st.Token.Expiry.UTC().Format(time.RFC3339))
	}
}

// loginFailed is a failed sign-in: the authorization server's refusal,
// with its own error code and description, as an authentication failure.
func loginFailed(err error) error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) && re.ErrorCode != "" {
		err = fmt.Errorf("the authorization server refused: %s %s", re.ErrorCode, re.ErrorDescription)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return &loginError{err}
}

// loginError is a sign-in that did not give a token (exit 4).
type loginError struct{ error }

// Unwrap returns the cause.
func (e *loginError) Unwrap() error { return e.error }

// plainHTTPClient is the client of the calls to others than the agent
// (an authorization server, a catalog): the command's TLS settings, but
// never --debug's log (an authorization server's bodies are tokens) nor
// the agent's credentials and A2A headers.
func (c *common) plainHTTPClient() *http.Client {
	if t := c.tlsTransport(); t != nil {
		return &http.Client{Transport: t, Timeout: time.Minute}
	}
	return &http.Client{Timeout: time.Minute}
}

// pickFlow chooses the scheme and the flow: --scheme and --flow when
// given, else the first scheme by name that offers the flow chosen by
// default (client-credentials with a secret, else device, else code).
func pickFlow(ctx context.Context, hc *http.Client, card *a2a.AgentCard, scheme, flow string, secret bool) (*oauthServer, string, error) {
	names := make([]string, 0, len(card.GetSecuritySchemes()))
	for n := range card.GetSecuritySchemes() {
		if scheme == "" || n == scheme {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	var servers []*oauthServer
	for _, n := range names {
		s, err := readScheme(ctx, hc, n, card.GetSecuritySchemes()[n])
		if err != nil {
			return nil, "", err
		}
		if s != nil {
			servers = append(servers, s)
		}
	}
	if len(servers) == 0 {
		what := "no OAuth 2.0 or OpenID Connect security scheme"
		if scheme != "" {
			what = "no OAuth 2.0 or OpenID Connect security scheme named " + scheme
		}
		return nil, "", usageError{fmt.Errorf("the agent's card declares %s: there is nothing to sign in to (see parley card get)", what)}
	}
	order := []string{flow}
	if flow == "" {
		order = []string{flowDevice, flowCode}
		if secret {
			order = append([]string{flowClient}, order...)
		}
	}
	for _, f := range order {
		for _, s := range servers {
			if s.offers(f) {
				return s, f, nil
			}
		}
	}
	return nil, "", usageError{fmt.Errorf("the card's security schemes offer no %s flow", strings.Join(order, " or "))}
}

// offers reports whether the server offers flow f.
func (s *oauthServer) offers(f string) bool {
	switch f {
	case flowDevice:
		return s.deviceGot && s.deviceURL != "" && s.tokenURL != ""
	case flowCode:
		return s.authCode && s.authURL != "" && s.tokenURL != ""
	case flowClient:
		return s.clientCredentials && s.tokenURL != ""
	}
	return false
}

// readScheme reads an oauth2 or openIdConnect security scheme (A2A
// §4.5.4, §4.5.5); nil for a scheme of another kind.
func readScheme(ctx context.Context, hc *http.Client, name string, s *a2a.SecurityScheme) (*oauthServer, error) {
	if o := s.GetOpenIdConnectSecurityScheme(); o != nil {
		return discover(ctx, hc, name, o.GetOpenIdConnectUrl())
	}
	o := s.GetOauth2SecurityScheme()
	if o == nil {
		return nil, nil
	}
	srv := &oauthServer{scheme: name}
	keys := func(m map[string]string) []string {
		k := make([]string, 0, len(m))
		for s := range m {
			k = append(k, s)
		}
		slices.Sort(k)
		return k
	}
	switch f := o.GetFlows(); {
	case f.GetAuthorizationCode() != nil:
		a := f.GetAuthorizationCode()
		srv.authCode, srv.authURL, srv.tokenURL, srv.refreshURL, srv.scopes = true, a.GetAuthorizationUrl(), a.GetTokenUrl(), a.GetRefreshUrl(), keys(a.GetScopes())
	case f.GetDeviceCode() != nil:
		d := f.GetDeviceCode()
		srv.deviceGot, srv.deviceURL, srv.tokenURL, srv.refreshURL, srv.scopes = true, d.GetDeviceAuthorizationUrl(), d.GetTokenUrl(), d.GetRefreshUrl(), keys(d.GetScopes())
	case f.GetClientCredentials() != nil:
		cc := f.GetClientCredentials()
		srv.clientCredentials, srv.tokenURL, srv.refreshURL, srv.scopes = true, cc.GetTokenUrl(), cc.GetRefreshUrl(), keys(cc.GetScopes())
	}
	return srv, nil
}

// discover reads an OpenID Connect discovery document (OpenID Connect
// Discovery 1.0 §4) for the endpoints of scheme name.
func discover(ctx context.Context, hc *http.Client, name, url string) (*oauthServer, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("security scheme %s: openIdConnectUrl %q: %v", name, url, err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("security scheme %s: OpenID Connect discovery: %w", name, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("security scheme %s: OpenID Connect discovery at %s: HTTP %s", name, url, resp.Status)
	}
	return parseDiscovery(name, url, io.LimitReader(resp.Body, 1<<20))
}

// parseDiscovery reads the endpoints of an OpenID Connect discovery
// document (Discovery §3) from r, for the scheme name.
func parseDiscovery(name, url string, r io.Reader) (*oauthServer, error) {
	var d struct {
		Issuer        string   `json:"issuer"`
		Authorization string   `json:"authorization_endpoint"`
		Token         string   `json:"token_endpoint"`
		Device        string   `json:"device_authorization_endpoint"`
		Grants        []string `json:"grant_types_supported"`
	}
	if err := json.NewDecoder(r).Decode(&d); err != nil {
		return nil, fmt.Errorf("security scheme %s: OpenID Connect discovery at %s: %v", name, url, err)
	}
	// The issuer a document names must be the one it was asked of, or
	// the document is not to be used (Discovery §4.3): a provider cannot
	// send the sign-in, and the client secret, to another's endpoints.
	// The issuer is known when the URL is the issuer's well-known one
	// (§4: its terminating "/" removed before the suffix).
	if want, ok := strings.CutSuffix(url, "/.well-known/openid-configuration"); ok && strings.TrimSuffix(d.Issuer, "/") != want {
		return nil, fmt.Errorf("security scheme %s: OpenID Connect discovery at %s names the issuer %q, not %s (OpenID Connect Discovery §4.3)", name, url, d.Issuer, want)
	}
	// grant_types_supported defaults to authorization_code and implicit
	// (Discovery §3): client credentials only when it is listed.
	return &oauthServer{scheme: name, oidc: true, authURL: d.Authorization, tokenURL: d.Token, deviceURL: d.Device,
		authCode: true, deviceGot: true, clientCredentials: slices.Contains(d.Grants, "client_credentials")}, nil
}

// deviceLogin runs the device authorization flow (RFC 8628): the user is
// told, on stderr, where to go and which code to enter, while the token
// endpoint is polled at the interval the server asks.
func (e *env) deviceLogin(ctx context.Context, cfg *oauth2.Config) (*oauth2.Token, error) {
	da, err := cfg.DeviceAuth(ctx)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(e.stderr, "To sign in, open %s and enter the code %s\n", da.VerificationURI, da.UserCode)
	if da.VerificationURIComplete != "" {
		fmt.Fprintf(e.stderr, "(or open %s)\n", da.VerificationURIComplete)
	}
	fmt.Fprintf(e.stderr, "Waiting for the sign-in…\n")
	return cfg.DeviceAccessToken(ctx, da)
}

// codeLogin runs the authorization code flow with PKCE (RFC 7636, S256)
// and a loopback redirect (RFC 8252 §7.3): the URL to open is printed on
// stderr, and the browser's return to 127.0.0.1 brings the code.
func (e *env) codeLogin(ctx context.Context, cfg *oauth2.Config) (*oauth2.Token, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("a loopback listener for the redirect: %w", err)
	}
	cfg.RedirectURL = "http://" + ln.Addr().String() + "/callback"
	state := randomString()
	verifier := oauth2.GenerateVerifier()
	got := make(chan url2code, 1)
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if r.URL.Path != "/callback" || q.Get("state") != state {
			http.Error(w, "not the sign-in this listener waits for", http.StatusBadRequest)
			return
		}
		res := url2code{code: q.Get("code")}
		if e := q.Get("error"); e != "" || res.code == "" {
			res.err = fmt.Errorf("the authorization server refused: %s %s", e, q.Get("error_description"))
			http.Error(w, "Sign-in failed: "+e+". You can close this window.", http.StatusForbidden)
		} else {
			fmt.Fprintln(w, "Signed in: you can close this window and return to the terminal.")
		}
		select {
		case got <- res:
		default:
		}
	})}
	go srv.Serve(ln)
	defer srv.Close()
	fmt.Fprintf(e.stderr, "To sign in, open this URL in a browser:\n  %s\nWaiting for the sign-in…\n",
		cfg.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier)))
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case res := <-got:
		if res.err != nil {
			return nil, res.err
		}
		return cfg.Exchange(ctx, res.code, oauth2.VerifierOption(verifier))
	}
}

// url2code is what the redirect brought: a code or an error.
type url2code struct {
	code string
	err  error
}

// randomString is 32 random bytes, base64url: a state value.
func randomString() string {
	b := make([]byte, 32)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// clientCredentials is the client-credentials configuration of st.
func (st *storedLogin) clientCredentials() *clientcredentials.Config {
	return &clientcredentials.Config{ClientID: st.ClientID, ClientSecret: st.ClientSecret, TokenURL: st.TokenURL, Scopes: st.Scopes}
}

// appendAll appends the items of more that list lacks.
func appendAll(list, more []string) []string {
	list = slices.Clone(list)
	for _, s := range more {
		list = appendNew(list, s)
	}
	return list
}
