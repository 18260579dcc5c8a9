package testkit

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/a2ahttp"
	"parley.dev/parley/internal/agents"
	"parley.dev/parley/internal/sse"
	"parley.dev/parley/server"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/memstore"
)

// DiscardLogger logs nowhere; Options.Quiet gives it to the core and the
// handler, and fuzz targets give it to the bindings they build.
var DiscardLogger = slog.New(slog.DiscardHandler)

// closeTimeout bounds how long a core may take to close at cleanup.
const closeTimeout = 10 * time.Second

// Options adjusts a test server. The zero value (or a nil pointer) is the
// conformance agent on a fresh memory store, without authentication, with
// SSE keep-alives off, listing JSON-RPC, HTTP+JSON and gRPC on its card.
type Options struct {
	// Kind is the built-in agent whose card (and, unless Agent is set,
	// whose behaviour) the server has: "conformance" (the default) or
	// "echo".
	Kind string
	// Agent runs the tasks instead of the built-in agent of Kind.
	Agent server.Agent
	// Store keeps the tasks; nil means a new memory store.
	Store taskstore.Store
	// Tokens maps bearer tokens to principals. When there are any, the
	// core requires authentication.
	Tokens map[string]string
	// Quiet sends the logs of the core and of the handler nowhere.
	Quiet bool
	// CheckClose fails the test when the core does not close cleanly
	// within 10 s at cleanup. Leave it off when a test may end with slow
	// tasks still running.
	CheckClose bool
	// Interfaces returns the card's interfaces given the server's base
	// URL ("http://127.0.0.1:PORT"); nil means Interfaces.
	Interfaces func(base string) []*a2a.AgentInterface
	// Mutate adjusts the card and the core's options before the core is
	// made; the card it leaves is the one served and returned.
	Mutate func(card *a2a.AgentCard, o *server.Options)
	// HTTP adjusts the handler's options; Card, Tokens, KeepAlive (off)
	// and, when Quiet, Logger are already set.
	HTTP func(o *a2ahttp.Options)
	// Wrap puts a handler in front of Parley's.
	Wrap func(h http.Handler) http.Handler
	// Configure adjusts the test server before it starts (a BaseContext,
	// an ErrorLog).
	Configure func(hs *httptest.Server)
	// TLS serves HTTPS, HTTP/1.1 and HTTP/2, with httptest's certificate
	// (Server.HTTP.Client trusts it) instead of cleartext.
	TLS bool
}

// Server is a Parley server on a loopback port: the core behind a2ahttp,
// serving the card, JSON-RPC, HTTP+JSON and gRPC on one port over HTTP/1.1
// and cleartext HTTP/2, as `parley serve` does. It is closed when the test
// that started it ends.
type Server struct {
	// URL is the base URL, "http://127.0.0.1:PORT" ("https://" with TLS).
	URL string
	// Addr is "127.0.0.1:PORT", the dial target of a gRPC interface.
	Addr string
	// Card is the card the server serves.
	Card *a2a.AgentCard
	// Core is the server core behind the handler.
	Core *server.Server
	// Handler is the a2ahttp handler in front of the core (before Wrap).
	Handler *a2ahttp.Handler
	// HTTP is the running test server.
	HTTP *httptest.Server
}

// Interfaces returns the three interfaces of a Parley server at base, in
// the order `parley serve` lists them: JSON-RPC at base+"/", HTTP+JSON at
// base and gRPC at the host:port of base.
func Interfaces(base string) []*a2a.AgentInterface {
	host := base[strings.Index(base, "://")+3:]
	return []*a2a.AgentInterface{
		{Url: base + "/", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.ProtocolVersion},
		{Url: base, ProtocolBinding: a2a.BindingHTTPJSON, ProtocolVersion: a2a.ProtocolVersion},
		{Url: host, ProtocolBinding: a2a.BindingGRPC, ProtocolVersion: a2a.ProtocolVersion},
	}
}

// StartServer starts a Parley server on a loopback port.
func StartServer(tb testing.TB, o *Options) *Server {
	tb.Helper()
	if o == nil {
		o = &Options{}
	}
	hs := httptest.NewUnstartedServer(nil)
	addr := hs.Listener.Addr().String()
	base := "http://" + addr
	if o.TLS {
		base = "https://" + addr
	}
	ifaces := Interfaces
	if o.Interfaces != nil {
		ifaces = o.Interfaces
	}
	core, card := NewCore(tb, ifaces(base), o)
	// Streams idle for a while are parked (sse.Parking), as parley serve
	// parks them: tests of streams cover both states.
	parking := sse.NewParking(0)
	tb.Cleanup(parking.Close) // after the server's own cleanup
	hopts := &a2ahttp.Options{Card: card, Tokens: o.Tokens, KeepAlive: -1, Parking: parking}
	if o.Quiet {
		hopts.Logger = DiscardLogger
	}
	if o.HTTP != nil {
		o.HTTP(hopts)
	}
	h, err := a2ahttp.New(core, hopts)
	if err != nil {
		tb.Fatalf("a2ahttp.New: %v", err)
	}
	var handler http.Handler = h
	if o.Wrap != nil {
		handler = o.Wrap(h)
	}
	hs.Config.Handler = handler
	start(tb, hs, o.Configure, o.TLS)
	return &Server{URL: base, Addr: addr, Card: h.Card(), Core: core, Handler: h, HTTP: hs}
}

// NewCore returns a server core for the built-in agent of o.Kind (or
// o.Agent), described by a card listing ifaces, on o.Store or a new memory
// store. It is closed when the test ends. Use it to put a core behind a
// handler other than a2ahttp's; StartServer calls it.
func NewCore(tb testing.TB, ifaces []*a2a.AgentInterface, o *Options) (*server.Server, *a2a.AgentCard) {
	tb.Helper()
	if o == nil {
		o = &Options{}
	}
	kind := o.Kind
	if kind == "" {
		kind = "conformance"
	}
	card, err := agents.Card(kind, ifaces)
	if err != nil {
		tb.Fatal(err)
	}
	agent := o.Agent
	if agent == nil {
		if agent, err = agents.ByName(kind); err != nil {
			tb.Fatal(err)
		}
	}
	store := o.Store
	if store == nil {
		store = memstore.New()
	}
	opts := &server.Options{Card: card, Agent: agent, Store: store, RequireAuth: len(o.Tokens) > 0}
	if o.Quiet {
		opts.Logger = DiscardLogger
	}
	card.Capabilities.PushNotifications = proto.Bool(true) // served by NoDelivery unless Mutate says otherwise
	if o.Mutate != nil {
		o.Mutate(card, opts)
	}
	if opts.Push == nil && card.GetCapabilities().GetPushNotifications() {
		opts.Push = NoDelivery{}
	}
	core, err := server.New(opts)
	if err != nil {
		tb.Fatalf("server.New: %v", err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
		defer cancel()
		if err := core.Close(ctx); err != nil && o.CheckClose {
			tb.Errorf("server.Close: %v", err)
		}
	})
	return core, card
}

// ServeH2C serves h on a loopback port over HTTP/1.1 and cleartext HTTP/2
// (what gRPC needs without TLS) until the test ends. configure, if not
// nil, adjusts the server before it starts.
func ServeH2C(tb testing.TB, h http.Handler, configure func(hs *httptest.Server)) *httptest.Server {
	tb.Helper()
	hs := httptest.NewUnstartedServer(h)
	start(tb, hs, configure, false)
	return hs
}

// start starts hs with TLS (HTTP/1.1 and HTTP/2) or in cleartext (HTTP/1.1
// and h2c), and closes it when the test ends.
func start(tb testing.TB, hs *httptest.Server, configure func(*httptest.Server), useTLS bool) {
	if useTLS {
		hs.EnableHTTP2 = true
	} else {
		hs.Config.Protocols = new(http.Protocols)
		hs.Config.Protocols.SetHTTP1(true)
		hs.Config.Protocols.SetUnencryptedHTTP2(true)
	}
	if configure != nil {
		configure(hs)
	}
	if useTLS {
		hs.StartTLS()
	} else {
		hs.Start()
	}
	tb.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
	})
}

// H2CClient returns an HTTP client that speaks cleartext HTTP/2 only (prior
// knowledge), as gRPC clients do over http:// URLs.
func H2CClient() *http.Client {
	p := new(http.Protocols)
	p.SetUnencryptedHTTP2(true)
	return &http.Client{Transport: &http.Transport{Protocols: p}}
}
