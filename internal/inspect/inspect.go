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
// The server listens on a loopback address. Its API answers only requests
// that carry the random token of the page's URL (in its fragment, which
// browsers never send to other sites) and are addressed to the loopback
// host, so that other web pages cannot drive it, even through DNS
// rebinding.
package inspect

import (
	"crypto/rand"
	"embed"
	"encoding/hex"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"parley.dev/parley/client"
)

//go:embed assets
var assets embed.FS

// TokenHeader carries the page's token on every API call.
const TokenHeader = "X-Parley-Inspect"

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
	o      Options
	token  string
	pushID string // the secret path segment of the push receiver
	inbox  *inbox
	cache  *client.CardCache
	base   string // http://127.0.0.1:PORT once serving
	mux    *http.ServeMux
	static http.Handler
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
	s := &Server{o: o, token: randomHex(16), pushID: randomHex(12), inbox: newInbox(200),
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

// PageURL is the URL to open: the page, with the token (and the target)
// in its fragment. Call it once Serve has started on ln.
func (s *Server) PageURL(ln net.Listener) string {
	frag := url.Values{"token": {s.token}}
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
	api := func(pattern string, h http.HandlerFunc) {
		s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get(TokenHeader) != s.token {
				http.Error(w, "missing or wrong "+TokenHeader+" token: open the URL parley inspect printed", http.StatusForbidden)
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
