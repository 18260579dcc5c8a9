// Package parleytest runs an A2A agent on a loopback port for tests: the
// agent behind Parley's server core, with a memory task store, serving its
// agent card, JSON-RPC, HTTP+JSON and gRPC on one port, and clients resolved
// against the card it serves.
//
//	func TestShout(t *testing.T) {
//		srv := parleytest.NewServer(t, shoutAgent)
//		resp, err := srv.Client().SendMessage(t.Context(),
//			&a2a.SendMessageRequest{Message: a2a.UserMessage("hi")})
//		...
//	}
//
// NewServer stops the server when the test ends. Start and Server.Close do
// the same outside a test (in an Example, a main, a benchmark harness of
// one's own).
//
// The card lists the three v1.0 interfaces in the order a Parley server
// prefers them (JSON-RPC, HTTP+JSON, gRPC; spec §8.3.1), and the v0.3 ones
// the handler adds. Clients pick the first interface they support, as the
// spec asks of every client (spec §8.3.2); ClientFor restricts one to a
// binding, so that a test can run over each (spec §5.1 requires the same
// behaviour on all of them).
//
// Nothing leaves the process: the server listens on 127.0.0.1 only, and the
// clients call nothing but its interfaces. The core and the handler log to
// slog.Default unless WithServerOptions and WithHTTPOptions give them a
// Logger.
package parleytest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/a2ahttp"
	"parley.dev/parley/client"
	"parley.dev/parley/server"
	"parley.dev/parley/taskstore"
)

// DefaultName is the name of the agent on the card unless WithName gives
// another.
const DefaultName = "test agent"

// closeTimeout bounds how long Close waits for the requests in flight and
// for the core to stop.
const closeTimeout = 10 * time.Second

// An Option adjusts a server made by NewServer or Start.
type Option interface {
	apply(*config)
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

type config struct {
	name     string
	store    taskstore.Store
	tokens   map[string]string
	bindings []string
	card     []func(*a2a.AgentCard)
	core     []func(*server.Options)
	http     []func(*a2ahttp.Options)
}

// WithName sets the agent's name on the card (default DefaultName).
func WithName(name string) Option {
	return optionFunc(func(c *config) { c.name = name })
}

// WithStore keeps the tasks in store instead of a new memory store. The
// store stays the caller's: Close does not close it, so a test can start a
// second server on it to see what survives a restart.
func WithStore(store taskstore.Store) Option {
	return optionFunc(func(c *config) { c.store = store })
}

// WithTokens turns on bearer authentication: tokens maps each accepted
// token to the principal it authenticates. Every operation then needs one
// (server.Options.RequireAuth), and each principal sees only its own tasks.
// Server.Client calls anonymously and is refused; Server.ClientAs calls as a
// principal. The card stays public.
func WithTokens(tokens map[string]string) Option {
	return optionFunc(func(c *config) { c.tokens = tokens })
}

// WithBindings lists only these bindings on the card, in this order
// (a2a.BindingJSONRPC, a2a.BindingHTTPJSON, a2a.BindingGRPC); the first is
// the one Server.Client uses. Without a2a.BindingGRPC, gRPC is not served.
// The other two are served either way; only the card decides whether
// clients know of them.
func WithBindings(bindings ...string) Option {
	return optionFunc(func(c *config) { c.bindings = bindings })
}

// WithCard adjusts the card before the server is made: skills, modes,
// capabilities (push notifications also need a server.Options.Push, given
// with WithServerOptions), extensions. The card it leaves is the one served.
func WithCard(f func(card *a2a.AgentCard)) Option {
	return optionFunc(func(c *config) { c.card = append(c.card, f) })
}

// WithServerOptions adjusts the core's options (limits, a logger, a
// pusher, an extended card) after the card, the agent, the store and
// RequireAuth are set.
func WithServerOptions(f func(o *server.Options)) Option {
	return optionFunc(func(c *config) { c.core = append(c.core, f) })
}

// WithHTTPOptions adjusts the HTTP handler's options (middleware, rate
// limits, more authenticators) after the card and the tokens are set.
func WithHTTPOptions(f func(o *a2ahttp.Options)) Option {
	return optionFunc(func(c *config) { c.http = append(c.http, f) })
}

// Server is an agent served on a loopback port over HTTP/1.1 and cleartext
// HTTP/2 (which gRPC needs). Its methods may be called concurrently.
type Server struct {
	// URL is the base URL, "http://127.0.0.1:PORT": the card is at
	// URL + "/.well-known/agent-card.json".
	URL string

	tb     testing.TB // nil when made by Start
	card   *a2a.AgentCard
	tokens map[string]string
	srv    *a2ahttp.Server
	hc     *http.Client

	mu      sync.Mutex
	clients []*client.Client
	closed  bool
	once    sync.Once
	err     error
}

// NewServer starts agent on a loopback port and stops it when tb's test
// ends (tb.Cleanup). It fails the test if the server cannot start.
func NewServer(tb testing.TB, agent server.Agent, opts ...Option) *Server {
	tb.Helper()
	s, err := Start(agent, opts...)
	if err != nil {
		tb.Fatalf("parleytest: %v", err)
	}
	s.tb = tb
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Errorf("parleytest: Close: %v", err)
		}
	})
	return s
}

// Start starts agent on a loopback port, like NewServer, outside a test.
// The caller must call Close.
func Start(agent server.Agent, opts ...Option) (*Server, error) {
	cfg := config{name: DefaultName}
	for _, o := range opts {
		o.apply(&cfg)
	}
	return start(agent, &cfg)
}

// start serves agent with a2ahttp.Start, the way parley serve does, on a
// free loopback port, and resolves the served card.
func start(agent server.Agent, cfg *config) (*Server, error) {
	grpc := cfg.bindings == nil || slices.Contains(cfg.bindings, a2a.BindingGRPC)
	sc := &a2ahttp.ServeConfig{
		Addr:            "127.0.0.1:0",
		Agent:           agent,
		Store:           cfg.store, // nil: a memory store, closed with the server
		Name:            cfg.name,
		Description:     "An agent under test.",
		Version:         "1.0.0",
		Skills:          []*a2a.AgentSkill{{Id: "test", Name: "Test", Description: "Whatever the agent under test does.", Tags: []string{"test"}}},
		Tokens:          cfg.tokens,
		ShutdownTimeout: closeTimeout,
		EditCard: func(card *a2a.AgentCard) (*a2a.AgentCard, error) {
			if cfg.bindings != nil {
				ifaces, err := pick(card.GetSupportedInterfaces(), cfg.bindings)
				if err != nil {
					return nil, err
				}
				card.SupportedInterfaces = ifaces
			}
			for _, f := range cfg.card {
				f(card)
			}
			return card, nil
		},
		ServerOptions: func(o *server.Options) {
			for _, f := range cfg.core {
				f(o)
			}
		},
		HandlerOptions: func(o *a2ahttp.Options) {
			o.DisableGRPC = !grpc
			for _, f := range cfg.http {
				f(o)
			}
		},
	}
	srv, err := a2ahttp.Start(sc)
	if err != nil {
		return nil, err
	}
	s := &Server{
		URL:    srv.URL(),
		tokens: cfg.tokens,
		srv:    srv,
		hc:     &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()},
	}
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	s.card, err = client.Resolve(ctx, s.URL, &client.ResolveOptions{HTTPClient: s.hc})
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("resolving the served card: %w", err)
	}
	return s, nil
}

// pick returns the v1.0 interfaces of the bindings, in their order.
func pick(ifaces []*a2a.AgentInterface, bindings []string) ([]*a2a.AgentInterface, error) {
	var picked []*a2a.AgentInterface
	for _, b := range bindings {
		i := slices.IndexFunc(ifaces, func(in *a2a.AgentInterface) bool {
			return in.GetProtocolBinding() == b && in.GetProtocolVersion() == a2a.ProtocolVersion
		})
		if i < 0 {
			return nil, fmt.Errorf("unknown binding %q (want %s, %s or %s)", b, a2a.BindingJSONRPC, a2a.BindingHTTPJSON, a2a.BindingGRPC)
		}
		picked = append(picked, ifaces[i])
	}
	if len(picked) == 0 {
		return nil, errors.New("WithBindings names no binding")
	}
	return picked, nil
}

// Card returns the agent card the server serves, as a client resolves it.
// It belongs to the caller.
func (s *Server) Card() *a2a.AgentCard {
	return proto.Clone(s.card).(*a2a.AgentCard)
}

// Core returns the server core behind the HTTP handler: its Go API is the
// same a2a.Service the clients call over the wire.
func (s *Server) Core() *server.Server { return s.srv.Core() }

// Client returns an anonymous client on the interface the card lists
// first. It is closed with the server.
func (s *Server) Client() *client.Client {
	return s.must(s.NewClient(nil))
}

// ClientFor returns an anonymous client that calls over binding only
// (a2a.BindingJSONRPC, a2a.BindingHTTPJSON or a2a.BindingGRPC).
func (s *Server) ClientFor(binding string) *client.Client {
	var t client.TransportFactory
	switch binding {
	case a2a.BindingJSONRPC:
		t = client.JSONRPC()
	case a2a.BindingHTTPJSON:
		t = client.REST()
	case a2a.BindingGRPC:
		t = client.GRPC()
	default:
		s.fail(fmt.Errorf("unknown binding %q", binding))
	}
	return s.must(s.NewClient(&client.Options{Transports: []client.TransportFactory{t}}))
}

// ClientAs returns a client that calls as principal, with a bearer token
// WithTokens maps to it, on the interface the card lists first.
func (s *Server) ClientAs(principal string) *client.Client {
	var tokens []string
	for tok, p := range s.tokens {
		if p == principal {
			tokens = append(tokens, tok)
		}
	}
	if len(tokens) == 0 {
		s.fail(fmt.Errorf("no token of WithTokens is for principal %q", principal))
	}
	sort.Strings(tokens)
	return s.must(s.NewClient(&client.Options{BearerToken: tokens[0]}))
}

// NewClient returns a client with opts (nil: defaults) resolved against
// the served card. Without an HTTPClient in opts it uses one of the
// server's own. The client is closed with the server.
func (s *Server) NewClient(opts *client.Options) (*client.Client, error) {
	o := client.Options{}
	if opts != nil {
		o = *opts
	}
	if o.HTTPClient == nil {
		o.HTTPClient = s.hc
	}
	c, err := client.New(s.Card(), &o)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		c.Close()
		return nil, errors.New("parleytest: the server is closed")
	}
	s.clients = append(s.clients, c)
	return c, nil
}

func (s *Server) must(c *client.Client, err error) *client.Client {
	if err != nil {
		s.fail(err)
	}
	return c
}

// fail ends the test, or panics for a server made by Start.
func (s *Server) fail(err error) {
	if s.tb != nil {
		s.tb.Helper()
		s.tb.Fatalf("parleytest: %v", err)
	}
	panic("parleytest: " + err.Error())
}

// Close stops the server, in the order the server core documents: the
// listener stops accepting, the core stops (tasks still running end
// FAILED, and their streams get that status), then the connections still
// open (streams of interrupted tasks) are closed, and with them the
// clients the server made and the memory store. It waits for all of this
// at most 10 s. Closing again returns the first result.
func (s *Server) Close() error {
	s.once.Do(func() {
		s.mu.Lock()
		s.closed = true
		clients := s.clients
		s.mu.Unlock()
		s.err = s.srv.Close()
		for _, c := range clients {
			c.Close()
		}
		s.hc.CloseIdleConnections()
	})
	return s.err
}
