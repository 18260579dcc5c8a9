// Package inspect is `parley inspect`: a local web page for looking at an
// A2A agent. The page (plain HTML, CSS and JavaScript, embedded in the
// binary) shows the agent card and its checks, composes messages, follows
// tasks and streams, lists tasks, shows the raw HTTP traffic of every call,
// receives push notifications and runs `parley check`.
//
// The page never calls the agent itself: it asks this server, which calls
// the agent with Parley's client through a transport that records the
// traffic. Nothing is fetched from anywhere else; it works offline.
//
// The server listens on a loopback address and answers only requests
// addressed to a loopback host, so that other web pages cannot drive it,
// even through DNS rebinding. Its API wants the caller to show either the
// server's random token (TokenHeader; for programs, never given to a
// browser) or the session cookie of a page. The URL opened in the browser
// carries no token but a one-time code, in its fragment: the page trades
// it, once, for an HttpOnly, SameSite=Strict cookie (RFC 6265bis), and the
// code is dead after that first use. So the token is in no browser's
// command line or history, and a code that leaks from them is useless.
package inspect

import (
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"parley.dev/parley/client"
)

//go:embed assets
var assets embed.FS

// TokenHeader is the header of every API call: the server's token
// (Server.Token), or, from the page, SessionMarker with the session
// cookie. A header a cross-origin page cannot send without a CORS
// preflight (which this server never grants) is what keeps other pages
// on the same host, which the browser would send the cookie from, out.
const TokenHeader = "X-Parley-Inspect"

// SessionMarker is TokenHeader's value on the page's calls, which the
// session cookie authorises.
const SessionMarker = "session"

// SessionPath is where the page trades its one-time code (the body of a
// POST) for the session cookie.
const SessionPath = "/session"

// Options configure a Server.
type Options struct {
	// Target is the agent URL the page starts with; "" leaves it empty.
	Target string
	// Logger receives the server's errors; default slog.Default().
	Logger *slog.Logger
	// HTTPTransport carries the calls to agents (default: a clone of
	// http.DefaultTransport); gRPC calls use an HTTP/2-only clone of it.
	HTTPTransport *http.Transport
	// CheckTimeout bounds a run of parley check (default 3 min).
	CheckTimeout time.Duration
}

// Server serves the page and its API. Make it with New and start it with
// Serve.
type Server struct {
	o       Options
	token   string // for programs, in TokenHeader
	session string // the value of the pages' cookie
	cookie  string // the cookie's name, with the port: cookies are not scoped by port
	mu      sync.Mutex
	codes   []string // one-time codes not used yet
	pushID  string   // the secret path segment of the push receiver
	inbox   *inbox
	cache   *client.CardCache
	base    string // http://127.0.0.1:PORT once serving
	mux     *http.ServeMux
	static  http.Handler
}

// New returns a server.
func New(o Options) *Server {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.HTTPTransport == nil {
		o.HTTPTransport = http.DefaultTransport.(*http.Transport).Clone()
	}
	if o.CheckTimeout <= 0 {
		o.CheckTimeout = 3 * time.Minute
	}
	sub, _ := fs.Sub(assets, "assets")
	s := &Server{o: o, token: randomHex(16), session: randomHex(16), cookie: "parley-inspect", pushID: randomHex(12), inbox: newInbox(200),
		cache: &client.CardCache{}, mux: http.NewServeMux(), static: http.FileServerFS(sub)}
	s.routes()
	return s
}

// randomHex returns n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

// Serve serves on ln (a loopback listener) until it fails or is closed.
func (s *Server) Serve(ln net.Listener) error {
	s.base = "http://" + ln.Addr().String()
	if _, port, err := net.SplitHostPort(ln.Addr().String()); err == nil {
		s.mu.Lock()
		s.cookie = "parley-inspect-" + port
		s.mu.Unlock()
	}
	hs := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	return hs.Serve(ln)
}

// Listen listens on addr, which must be a loopback address ("127.0.0.1:0"
// picks a free port).
func Listen(addr string) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return nil, &net.AddrError{Err: "the inspector listens on a loopback address only (such as 127.0.0.1:0)", Addr: addr}
	}
	return net.Listen("tcp", addr)
}

// Token is the secret that authorises API calls from programs (in
// TokenHeader). It is never part of PageURL.
func (s *Server) Token() string { return s.token }

// PageURL is the URL to open in a browser: the page, with a new one-time
// code (and the target) in its fragment. Each call makes a new code, good
// for one exchange.
func (s *Server) PageURL(ln net.Listener) string {
	code := randomHex(16)
	s.mu.Lock()
	s.codes = append(s.codes, code)
	s.mu.Unlock()
	frag := url.Values{"code": {code}}
	if s.o.Target != "" {
		frag.Set("url", s.o.Target)
	}
	return "http://" + ln.Addr().String() + "/#" + frag.Encode()
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Referrer-Policy", "no-referrer")
	// Nothing but this server: no other origin is ever contacted.
	w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'")
	if !loopbackHost(r.Host) {
		http.Error(w, "the inspector answers on 127.0.0.1 and localhost only", http.StatusMisdirectedRequest)
		return
	}
	s.mux.ServeHTTP(w, r)
}

// loopbackHost reports whether a Host header names a loopback host.
func loopbackHost(host string) bool {
	h, _, err := net.SplitHostPort(host)
	if err != nil {
		h = host
	}
	h = strings.Trim(h, "[]")
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// routes registers the page, the API and the push receiver.
func (s *Server) routes() {
	s.mux.Handle("GET /", s.static)
	s.mux.HandleFunc("POST /push/{id}", s.receivePush)
	s.mux.HandleFunc("POST "+SessionPath, s.exchange)
	api := func(pattern string, h http.HandlerFunc) {
		s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			if !s.authorised(r) {
				http.Error(w, "not authorised: open the URL parley inspect printed (its code works once; run parley inspect again for a new one)", http.StatusForbidden)
				return
			}
			h(w, r)
		})
	}
	api("GET /api/info", s.info)
	api("POST /api/card", s.card)
	api("POST /api/call", s.call)
	api("POST /api/check", s.check)
	api("GET /api/push", s.pushList)
}

// authorised reports whether an API call shows the token, or comes from
// a page of this origin with the session cookie.
func (s *Server) authorised(r *http.Request) bool {
	h := r.Header.Get(TokenHeader)
	if h == "" {
		return false
	}
	if subtle.ConstantTimeCompare([]byte(h), []byte(s.token)) == 1 {
		return true
	}
	if h != SessionMarker {
		return false
	}
	// Browsers that send Sec-Fetch-Site say whether the call is the
	// page's own; anything else is refused even with the cookie.
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" {
		return false
	}
	s.mu.Lock()
	name := s.cookie
	s.mu.Unlock()
	c, err := r.Cookie(name)
	return err == nil && subtle.ConstantTimeCompare([]byte(c.Value), []byte(s.session)) == 1
}

// exchange trades a one-time code (the request's body) for the session
// cookie. A code works once: it is forgotten by its first exchange.
func (s *Server) exchange(w http.ResponseWriter, r *http.Request) {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" {
		http.Error(w, "the code is exchanged by the inspector's own page only", http.StatusForbidden)
		return
	}
	b, _ := io.ReadAll(io.LimitReader(r.Body, 256))
	code := strings.TrimSpace(string(b))
	s.mu.Lock()
	found := -1
	for i, c := range s.codes {
		if code != "" && subtle.ConstantTimeCompare([]byte(c), []byte(code)) == 1 {
			found = i
		}
	}
	if found >= 0 {
		s.codes = append(s.codes[:found], s.codes[found+1:]...)
	}
	name := s.cookie
	s.mu.Unlock()
	if found < 0 {
		http.Error(w, "this code is unknown or was used already: run parley inspect again for a new one", http.StatusForbidden)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: name, Value: s.session, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusNoContent)
}
