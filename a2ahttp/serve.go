package a2ahttp

// Serving, assembled: the listener, the agent card, the server core, the
// handler, the http.Server (HTTP/1.1 and HTTP/2, in clear or over TLS) and
// the graceful shutdown, from one ServeConfig.

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/httpx"
	"parley.dev/parley/internal/v03"
	"parley.dev/parley/internal/version"
	"parley.dev/parley/server"
	"parley.dev/parley/taskstore"
)

// DefaultAddr is the address Start listens on when ServeConfig gives
// neither Addr nor Listener.
const DefaultAddr = "127.0.0.1:8080"

// DefaultShutdownTimeout is ServeConfig.ShutdownTimeout's default.
const DefaultShutdownTimeout = 10 * time.Second

// defaultKeepAlive is ServeConfig.KeepAlive's default.
const defaultKeepAlive = 15 * time.Second

// answerGrace is how long, once the core has stopped, the answers it
// released (blocking sends' tasks, streams' terminal events) get to reach
// their callers before the requests still open are ended.
const answerGrace = 300 * time.Millisecond

// endGrace is how long the streams ended by the shutdown get to close
// cleanly before their connections are closed.
const endGrace = 200 * time.Millisecond

// ServeConfig configures Serve and Start: where to listen, the agent and
// its store, the parts of the agent card only its author can give, TLS,
// authentication, push, and the shutdown. Everything else is derived: the
// card's interfaces and capabilities, the server core and the handler.
// The fields ending in Options, EditCard, HTTPServer and HTTPMiddleware
// reach whatever the derivation leaves out.
type ServeConfig struct {
	// Addr is the TCP address to listen on (default DefaultAddr; a port
	// of 0 picks a free one: Server.URL tells which).
	Addr string
	// Listener, when set, is served instead of listening on Addr. The
	// shutdown closes it.
	Listener net.Listener
	// GRPCAddr, or GRPCListener, adds a second listener that serves the
	// gRPC binding alone (gRPC is always served on the main one too); the
	// card's GRPC interface then names its port.
	GRPCAddr     string
	GRPCListener net.Listener

	// PublicURL is the base URL the card advertises, as callers reach the
	// server (through a proxy, a load balancer, a DNS name). Default:
	// http://ADDR of the listener, https://ADDR with TLS.
	PublicURL string

	// Agent does the work (required).
	Agent server.Agent
	// Store keeps the tasks (default: a memory store, closed at the
	// shutdown; a store given here stays open for its owner to close).
	Store taskstore.Store

	// The agent card's own parts (spec §8, AgentCard): who the agent is
	// and what it does. Name, Description and Version are required by the
	// specification.
	Name               string
	Description        string
	Version            string
	Skills             []*a2a.AgentSkill
	DefaultInputModes  []string // default: text/plain
	DefaultOutputModes []string // default: text/plain
	Provider           *a2a.AgentProvider
	DocumentationURL   string
	// EditCard, when set, is given the derived card (the parts above,
	// supportedInterfaces and capabilities filled in) and returns the card
	// to serve, edited or another: extensions, an icon, security schemes
	// of authenticators of one's own. Its error is Start's.
	EditCard func(card *a2a.AgentCard) (*a2a.AgentCard, error)
	// ExtendedCard is served by GetExtendedAgentCard to authenticated
	// callers (spec §3.1.11); the public card then declares
	// capabilities.extendedAgentCard. It is served as given.
	ExtendedCard *a2a.AgentCard

	// TLS, when set, serves HTTPS and gRPC over TLS with this
	// configuration (it needs a certificate: Certificates or
	// GetCertificate). CertFile and KeyFile, when set, add the PEM key
	// pair they name (TLS 1.2 at least unless TLS says otherwise).
	TLS      *tls.Config
	CertFile string
	KeyFile  string

	// Tokens maps bearer tokens to principal names, as Options.Tokens.
	// Authenticators are asked after them, in order. Either turns
	// authentication on: every operation then needs a principal
	// (server.Options.RequireAuth) unless AllowAnonymous, and a card
	// without security declarations gets the bearer scheme of the tokens
	// (spec §4.5).
	Tokens         map[string]string
	Authenticators []Authenticator
	AllowAnonymous bool
	// CardSigner signs the public card once it is whole (spec §8.4), as
	// Options.CardSigner.
	CardSigner func(card []byte) ([]byte, error)
	// Push delivers push notifications (package push makes one); the card
	// declares capabilities.pushNotifications exactly when it is set. It
	// stays its owner's: close it after the shutdown.
	Push server.Pusher
	// DisableV03 serves A2A v1.0 alone, without v0.3 beside it.
	DisableV03 bool
	// ProtocolVersions are the A2A versions (Major.Minor) served (default
	// server.DefaultProtocolVersions: 1.0 and 0.3). Listing "1.1" turns on
	// the preview of the next version, served on the v1.0 bindings to
	// requests that ask for it (A2A-Version: 1.1), with a 1.1 interface on
	// the card beside each v1.0 one. A list without 0.3 is DisableV03.
	ProtocolVersions []string

	// KeepAlive is the interval of SSE keep-alive comments on idle
	// streams and of HTTP/2 pings on silent connections (default 15 s;
	// negative: neither).
	KeepAlive time.Duration
	// ShutdownTimeout is how long the shutdown lets the tasks running
	// finish (default DefaultShutdownTimeout; negative: no wait). Past it
	// they end FAILED.
	ShutdownTimeout time.Duration
	// Logger receives the logs of the core, the handler and the HTTP
	// servers (default slog.Default()).
	Logger *slog.Logger

	// ServerOptions adjusts the core's options once they are derived
	// (limits, retention, windows, a cluster), before server.New.
	ServerOptions func(o *server.Options)
	// HandlerOptions adjusts the handler's options once they are derived
	// (guards, rate limits, middleware, the gRPC binding's options),
	// before New. The Parking it leaves is closed at the shutdown.
	HandlerOptions func(o *Options)
	// HTTPServer adjusts each http.Server before it serves (timeouts, for
	// instance ReadTimeout, which then bounds request bodies instead of
	// Options.BodyTimeout).
	HTTPServer func(hs *http.Server)
	// HTTPMiddleware wraps the handler of each listener: the main one
	// (grpcOnly false) and the gRPC one (grpcOnly true), for probes,
	// metrics or tracing of one's own.
	HTTPMiddleware func(next http.Handler, grpcOnly bool) http.Handler
}

// Server is an agent being served, started by Start. Its methods may be
// called concurrently.
type Server struct {
	log        *slog.Logger
	url        string
	addr       net.Addr
	timeout    time.Duration
	core       *server.Server
	handler    *Handler
	servers    []*http.Server // the main one, then the gRPC one when there is one
	parking    *Parking
	store      taskstore.Store // closed at the shutdown; nil when it is the caller's
	failed     chan error
	cancelReqs context.CancelFunc

	once sync.Once
	err  error
}

// Serve serves cfg's agent until ctx ends, then shuts down gracefully
// (Server.Shutdown) within cfg.ShutdownTimeout. It returns nil after a
// clean stop; an error when the server could not start, stopped serving
// on its own, or when tasks were still running at the timeout (they were
// then ended FAILED).
func Serve(ctx context.Context, cfg *ServeConfig) error {
	s, err := Start(cfg)
	if err != nil {
		return err
	}
	s.log.Info("serving", "url", s.URL(), "addr", s.Addr().String()) // Start itself prints nothing: its caller may
	select {
	case err := <-s.failed:
		s.Close()
		return err
	case <-ctx.Done():
	}
	return s.Shutdown(context.Background())
}

// Start listens, makes the agent card, the server core and the handler,
// and serves them in the background, every binding on one port: the card
// at CardPath, JSON-RPC, HTTP+JSON and, over HTTP/2 (cleartext h2c, or
// TLS), gRPC. The caller must call Shutdown or Close.
//
// The card (spec §8) lists, at PublicURL, the JSON-RPC, HTTP+JSON and
// gRPC interfaces of A2A v1.0 in that order of preference (spec §8.3.1),
// then those of v0.3 unless DisableV03 (spec §3.6); its capabilities
// declare streaming, push notifications when Push is set and the extended
// card when ExtendedCard is set (spec §3.1.11); and, when it declares no
// security of its own, the bearer scheme of Tokens (spec §4.5). The
// CardSigner signs it last, whole (spec §8.4).
func Start(cfg *ServeConfig) (*Server, error) {
	if cfg == nil {
		return nil, errors.New("a2ahttp: Start needs a ServeConfig")
	}
	if cfg.Agent == nil {
		return nil, errors.New("a2ahttp: ServeConfig.Agent is required")
	}
	cfg, versions := cfg.servedVersions()
	tlsConf, err := cfg.tlsConfig()
	if err != nil {
		return nil, err
	}
	ln, gln, opened, err := cfg.listen()
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*Server, error) {
		for _, ln := range opened {
			ln.Close()
		}
		return nil, err
	}
	base := publicBase(cfg.PublicURL, ln.Addr(), tlsConf != nil)
	target, err := grpcTarget(base, cfg.PublicURL != "", gln)
	if err != nil {
		return fail(fmt.Errorf("a2ahttp: ServeConfig.PublicURL %q: %w", cfg.PublicURL, err))
	}
	card, err := cfg.card(servedInterfaces(base, target))
	if err != nil {
		return fail(err)
	}

	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	s := &Server{log: log, url: base, addr: ln.Addr(), failed: make(chan error, 2), timeout: cfg.ShutdownTimeout}
	if s.timeout == 0 {
		s.timeout = DefaultShutdownTimeout
	}
	if card, err = s.startCore(cfg, card, versions); err != nil {
		return fail(err)
	}
	keepAlive := cfg.KeepAlive
	if keepAlive == 0 {
		keepAlive = defaultKeepAlive
	}
	if err := s.startHandler(cfg, card, keepAlive, gln != nil); err != nil {
		return fail(err)
	}
	s.serveListeners(cfg, ln, gln, keepAlive, tlsConf)
	return s, nil
}

// servedVersions returns the protocol versions to serve, and the
// configuration to serve them with: one with DisableV03 set when the
// versions leave v0.3 out, as the card and the handler read DisableV03.
func (cfg *ServeConfig) servedVersions() (*ServeConfig, []string) {
	versions := server.DefaultProtocolVersions()
	if len(cfg.ProtocolVersions) > 0 {
		versions = slices.Clone(cfg.ProtocolVersions)
	}
	if !slices.Contains(versions, version.V03) && !cfg.DisableV03 {
		c := *cfg // the card and the handler read DisableV03
		c.DisableV03, cfg = true, &c
	}
	if cfg.DisableV03 {
		versions = slices.DeleteFunc(versions, func(v string) bool { return v == version.V03 })
	}
	return cfg, versions
}

// tlsConfig returns the TLS configuration to serve with, nil for none.
func (cfg *ServeConfig) tlsConfig() (*tls.Config, error) {
	if cfg.CertFile == "" && cfg.KeyFile == "" {
		return cfg.TLS, nil
	}
	if cfg.CertFile == "" || cfg.KeyFile == "" {
		return nil, errors.New("a2ahttp: ServeConfig.CertFile and KeyFile go together")
	}
	cert, err := tls.LoadX509KeyPair(cfg.CertFile, cfg.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("a2ahttp: TLS key pair: %w", err)
	}
	c := &tls.Config{MinVersion: tls.VersionTLS12}
	if cfg.TLS != nil {
		c = cfg.TLS.Clone()
	}
	c.Certificates = append(c.Certificates, cert)
	return c, nil
}

// card derives the public card from cfg, listing ifaces.
func (cfg *ServeConfig) card(ifaces []*a2a.AgentInterface) (*a2a.AgentCard, error) {
	yes, push := true, cfg.Push != nil
	card := &a2a.AgentCard{
		Name:                cfg.Name,
		Description:         cfg.Description,
		Version:             cfg.Version,
		Provider:            cfg.Provider,
		SupportedInterfaces: ifaces,
		Capabilities:        &a2a.AgentCapabilities{Streaming: &yes, PushNotifications: &push},
		DefaultInputModes:   cfg.DefaultInputModes,
		DefaultOutputModes:  cfg.DefaultOutputModes,
		Skills:              cfg.Skills,
	}
	if cfg.DocumentationURL != "" {
		card.DocumentationUrl = &cfg.DocumentationURL
	}
	if len(card.DefaultInputModes) == 0 {
		card.DefaultInputModes = []string{"text/plain"}
	}
	if len(card.DefaultOutputModes) == 0 {
		card.DefaultOutputModes = []string{"text/plain"}
	}
	if cfg.ExtendedCard != nil {
		card.Capabilities.ExtendedAgentCard = &yes
	}
	if cfg.EditCard != nil {
		var err error
		if card, err = cfg.EditCard(card); err != nil {
			return nil, err
		}
		if card == nil {
			return nil, errors.New("a2ahttp: ServeConfig.EditCard returned no card")
		}
	}
	if !cfg.DisableV03 {
		card = v03.AddInterfaces(card)
	}
	return card, nil
}

// publicBase is the base URL an agent served on a listener at addr
// advertises on its card: publicURL when given, else http://ADDR, or
// https://ADDR over TLS. It never ends in a slash.
func publicBase(publicURL string, addr net.Addr, overTLS bool) string {
	base := publicURL
	if base == "" {
		base = "http://" + addr.String()
		if overTLS {
			base = "https://" + addr.String()
		}
	}
	return strings.TrimSuffix(base, "/")
}

// grpcTarget is the url of the card's GRPC interface: a "host:port" dial
// target, the form gRPC clients take (the gRPC binding, spec §10). The host is the one of the base URL; the port is the gRPC
// listener's when there is one (its host too, unless the base URL was
// given), else the base URL's, or the scheme's default.
func grpcTarget(base string, public bool, gln net.Listener) (string, error) {
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return "", errors.New("want an absolute URL")
	}
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	if gln != nil {
		lhost, lport, err := net.SplitHostPort(gln.Addr().String())
		if err != nil {
			return "", err
		}
		port = lport
		if !public {
			host = lhost
		}
	}
	return net.JoinHostPort(host, port), nil
}

// newHTTPServer returns the server of one listener: HTTP/1.1 and HTTP/2,
// over TLS when tlsConf is not nil, else with cleartext HTTP/2 (h2c, which
// gRPC clients use) as well. Its requests' contexts derive from reqCtx,
// which the shutdown cancels last.
func (cfg *ServeConfig) newHTTPServer(reqCtx context.Context, h http.Handler, keepAlive time.Duration, tlsConf *tls.Config, log *slog.Logger) *http.Server {
	hs := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		BaseContext:       func(net.Listener) context.Context { return reqCtx },
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		Protocols:         new(http.Protocols),
		// gRPC clients put every call on one connection, and
		// subscriptions stay open: more concurrent streams than the
		// default 100.
		HTTP2: &http.HTTP2Config{MaxConcurrentStreams: 1000},
	}
	hs.Protocols.SetHTTP1(true)
	hs.Protocols.SetHTTP2(true)
	hs.Protocols.SetUnencryptedHTTP2(tlsConf == nil)
	if keepAlive > 0 {
		// Ping a connection silent for keepAlive; close it when the ping
		// goes unanswered.
		hs.HTTP2.SendPingTimeout = keepAlive
		hs.HTTP2.PingTimeout = max(keepAlive, 15*time.Second)
	}
	hs.TLSConfig = tlsConf
	if cfg.HTTPServer != nil {
		cfg.HTTPServer(hs)
	}
	return hs
}

// serve serves hs on ln in the background.
func (s *Server) serve(hs *http.Server, ln net.Listener) {
	s.servers = append(s.servers, hs)
	go func() {
		var err error
		if hs.TLSConfig != nil {
			err = hs.ServeTLS(ln, "", "") // the certificates are in TLSConfig
		} else {
			err = hs.Serve(httpx.BufferedListener(ln))
		}
		if !errors.Is(err, http.ErrServerClosed) {
			s.failed <- err
		}
	}()
}

// URL returns the base URL the card advertises (ServeConfig.PublicURL, or
// the listener's): the card is at URL() + CardPath.
func (s *Server) URL() string { return s.url }

// Addr returns the address of the main listener.
func (s *Server) Addr() net.Addr { return s.addr }

// Card returns the public card as served, without the v0.3 top-level
// members and the signatures added to its JSON (see Handler.Card).
func (s *Server) Card() *a2a.AgentCard { return s.handler.Card() }

// Core returns the server core.
func (s *Server) Core() *server.Server { return s.core }

// Handler returns the HTTP handler.
func (s *Server) Handler() *Handler { return s.handler }

// Failed delivers the error of a listener that stopped serving on its
// own, before any shutdown: the server should then be closed.
func (s *Server) Failed() <-chan error { return s.failed }

// Shutdown stops the server gracefully:
//
//  1. The gRPC health service turns NOT_SERVING, and the listeners close:
//     no new connection; requests in flight go on.
//  2. The core drains (server.Server.Shutdown) for up to
//     ServeConfig.ShutdownTimeout, or until ctx is done: running tasks
//     go on, blocking sends get their tasks, streams their events through
//     the terminal one (spec §3.1.2, §3.1.6). Past it the tasks still
//     running end FAILED, which their callers get as the answer.
//  3. The answers go out, then what is still open ends (streams of tasks
//     waiting in INPUT_REQUIRED or AUTH_REQUIRED, which get no terminal
//     event), the parked streams included, and the connections close.
//
// All of it takes at most the timeout plus about a second and a half. It
// returns an error when tasks were still running at the timeout, or when
// the core or the store it made could not close; calling it again returns
// the first result.
func (s *Server) Shutdown(ctx context.Context) error {
	s.once.Do(func() { s.err = s.shutdown(ctx, max(s.timeout, 0)) })
	return s.err
}

// Close stops the server at once: Shutdown without waiting for the tasks
// running, which end FAILED.
func (s *Server) Close() error {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s.once.Do(func() { s.err = s.shutdown(ctx, -1) })
	return s.err
}

// shutdown is Shutdown with the drain bounded by timeout (negative: no
// drain, for Close).
func (s *Server) shutdown(ctx context.Context, timeout time.Duration) error {
	if timeout < 0 {
		s.log.Info("shutting down: stopping at once")
	} else {
		s.log.Info("shutting down: draining", "timeout", timeout)
	}
	timeout = max(timeout, 0)
	s.handler.SetServing(false)
	served := s.stopAccepting()
	dctx, cancel := context.WithTimeout(ctx, timeout)
	err := s.core.Shutdown(dctx)
	drainErr := dctx.Err()
	cancel()
	var errs []error
	switch {
	case err != nil && drainErr != nil && errors.Is(err, drainErr) && errors.Is(drainErr, context.Canceled): // ctx ended first
		s.log.Warn("shutdown cut short: the tasks still running were stopped and ended FAILED")
		errs = append(errs, fmt.Errorf("a2ahttp: shutdown: the drain was cut short; the tasks still running were ended FAILED: %w", drainErr))
	case err != nil && drainErr != nil && errors.Is(err, drainErr): // tasks were still running
		s.log.Warn("shutdown timeout reached: the tasks still running were stopped and ended FAILED", "timeout", timeout)
		errs = append(errs, fmt.Errorf("a2ahttp: shutdown: tasks were still running after %v and were ended FAILED: %w", timeout, drainErr))
	case err != nil:
		s.log.Warn("agents did not stop in time", "err", err)
		errs = append(errs, err)
	default:
		s.log.Info("drained: no task left running")
	}
	s.finish(served)
	if s.store != nil {
		errs = append(errs, s.store.Close())
	}
	return errors.Join(errs...)
}

// stopAccepting starts the HTTP servers' graceful shutdown: their
// listeners close at once (HTTP/2 clients get a GOAWAY) and the requests
// in flight go on, their contexts intact. The channel returned is closed
// when every request the servers track has ended (parked streams are not
// theirs: see finish).
func (s *Server) stopAccepting() <-chan struct{} {
	done := make(chan struct{})
	var wg sync.WaitGroup
	for _, hs := range s.servers {
		wg.Go(func() {
			// No deadline: finish decides when to stop waiting.
			if err := hs.Shutdown(context.Background()); err != nil {
				s.log.Warn("http shutdown", "err", err)
			}
		})
	}
	go func() { wg.Wait(); close(done) }()
	return done
}

// finish ends the shutdown once the core has stopped: it waits up to
// answerGrace for the answers to go out (the servers' requests and the
// parked streams), ends what is still open, lets those streams write
// their last chunk, and closes the remaining connections.
func (s *Server) finish(done <-chan struct{}) {
	deadline := time.After(answerGrace)
	s.drained(done, deadline)
	s.cancelReqs()
	if s.parking != nil {
		s.parking.Close()
	}
	select {
	case <-done:
	case <-time.After(endGrace):
	}
	for _, hs := range s.servers {
		hs.Close()
	}
}

// drained waits until the servers' requests have ended (done) and no
// parked stream is left, or until deadline.
func (s *Server) drained(done <-chan struct{}, deadline <-chan time.Time) {
	select {
	case <-done:
	case <-deadline:
		return
	}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for s.parking != nil && s.parking.Streams() > 0 {
		select {
		case <-tick.C:
		case <-deadline:
			return
		}
	}
}

// closeStore closes the store Start made, if it made one.
func (s *Server) closeStore() {
	if s.store != nil {
		s.store.Close()
	}
}
