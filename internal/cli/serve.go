package cli

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/a2ahttp"
	"parley.dev/parley/agents"
	"parley.dev/parley/grpcbind"
	"parley.dev/parley/server"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/memstore"
	"parley.dev/parley/taskstore/sqlitestore"
)

// serve runs `parley serve`.
func serve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("parley serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8080", "listen address `HOST:PORT`")
	agentName := fs.String("agent", "echo", "built-in agent: echo or conformance")
	storeSpec := fs.String("store", "sqlite:./parley.db", "task store: memory or sqlite:PATH")
	publicURL := fs.String("public-url", "", "base `URL` the agent card advertises (default http://ADDR, or https://ADDR with -tls-cert)")
	extCard := fs.String("extended-card", "", "JSON AgentCard `FILE` served to authenticated callers by GetExtendedAgentCard")
	keepAlive := fs.Duration("keep-alive", 15*time.Second, "SSE keep-alive interval on idle streams (0 turns it off)")
	retention := fs.Duration("retention", 0, "remove finished tasks older than this (0 keeps them)")
	idemWindow := fs.Duration("idempotency-window", 24*time.Hour, "how long a messageId is remembered for idempotent resends")
	maxBody := fs.Int64("max-body", 10<<20, "largest accepted request body in bytes")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn, error")
	grpcAddr := fs.String("grpc-addr", "", "also serve gRPC alone on this `HOST:PORT` (gRPC is always served on -addr too; the card then lists this one)")
	grpcReflection := fs.Bool("grpc-reflection", true, "serve gRPC server reflection, for grpcurl and similar tools")
	tlsCert := fs.String("tls-cert", "", "serve HTTPS and gRPC over TLS with this PEM certificate `FILE` (leaf first, then intermediates; needs -tls-key; SIGHUP reloads both)")
	tlsKey := fs.String("tls-key", "", "PEM private key `FILE` of -tls-cert")
	var tokens multiFlag
	fs.Var(&tokens, "auth-token", "enable bearer authentication with principal `NAME=TOKEN` (repeatable)")
	pushCfg := addPushFlags(fs) // issue 5: push delivery
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("unexpected argument %q", fs.Arg(0))}
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return usageError{fmt.Errorf("-log-level: %v", err)}
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	principals := map[string]string{}
	for _, t := range tokens {
		name, tok, ok := strings.Cut(t, "=")
		if !ok || name == "" || tok == "" {
			return usageError{fmt.Errorf("-auth-token %q: want NAME=TOKEN", t)}
		}
		principals[tok] = name
	}
	agent, err := agents.ByName(*agentName)
	if err != nil {
		return usageError{err}
	}
	if (*tlsCert == "") != (*tlsKey == "") {
		return usageError{errors.New("-tls-cert and -tls-key go together: give both or neither")}
	}
	var certs *certReloader
	if *tlsCert != "" {
		certs = &certReloader{certFile: *tlsCert, keyFile: *tlsKey, log: log}
		if err := certs.load(); err != nil {
			return err
		}
	}

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	base := *publicURL
	if base == "" {
		base = "http://" + ln.Addr().String()
		if certs != nil {
			base = "https://" + ln.Addr().String()
		}
	}
	base = strings.TrimSuffix(base, "/")
	var gln net.Listener
	if *grpcAddr != "" {
		if gln, err = net.Listen("tcp", *grpcAddr); err != nil {
			return err
		}
		defer gln.Close()
	}
	target, err := grpcTarget(base, *publicURL != "", gln)
	if err != nil {
		return usageError{err}
	}

	card, err := agents.Card(*agentName, []*a2a.AgentInterface{
		{Url: base + "/", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.ProtocolVersion},
		{Url: base, ProtocolBinding: a2a.BindingHTTPJSON, ProtocolVersion: a2a.ProtocolVersion},
		{Url: target, ProtocolBinding: a2a.BindingGRPC, ProtocolVersion: a2a.ProtocolVersion},
	})
	if err != nil {
		return usageError{err}
	}
	if len(principals) > 0 {
		card.SecuritySchemes = map[string]*a2a.SecurityScheme{"bearer": {Scheme: &a2a.SecurityScheme_HttpAuthSecurityScheme{
			HttpAuthSecurityScheme: &a2a.HTTPAuthSecurityScheme{Scheme: "Bearer", Description: "a token given by the server's operator"}}}}
		card.SecurityRequirements = []*a2a.SecurityRequirement{{Schemes: map[string]*a2a.StringList{"bearer": {}}}}
	}
	var extended *a2a.AgentCard
	if *extCard != "" {
		b, err := os.ReadFile(*extCard)
		if err != nil {
			return err
		}
		extended = &a2a.AgentCard{}
		if err := a2a.Unmarshal(b, extended); err != nil {
			return fmt.Errorf("-extended-card %s: %w", *extCard, err)
		}
		if v := a2a.CheckRequired(extended); len(v) > 0 {
			return fmt.Errorf("-extended-card %s: %s: %s", *extCard, v[0].Field, v[0].Description)
		}
		yes := true
		card.Capabilities.ExtendedAgentCard = &yes
	}

	store, err := openStore(*storeSpec)
	if err != nil {
		return err
	}
	defer store.Close()
	pusher, stopPush, err := pushCfg.start(card, store, log) // issue 5: sets the card's pushNotifications
	if err != nil {
		return err
	}
	defer stopPush() // after srv.Close below

	srv, err := server.New(&server.Options{
		Card: card, ExtendedCard: extended, Agent: agent, Store: store,
		RequireAuth: len(principals) > 0, Logger: log,
		Retention: *retention, IdempotencyWindow: *idemWindow,
		Push: pusher,
	})
	if err != nil {
		return err
	}
	ka := *keepAlive
	if ka == 0 {
		ka = -1
	}
	h, err := a2ahttp.New(srv, &a2ahttp.Options{Card: card, Tokens: principals, MaxBody: *maxBody, KeepAlive: ka, Logger: log,
		GRPC: &grpcbind.Options{DisableReflection: !*grpcReflection}})
	if err != nil {
		return err
	}

	reqCtx, cancelReqs := context.WithCancel(context.Background())
	defer cancelReqs()
	hs := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		BaseContext:       func(net.Listener) context.Context { return reqCtx },
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	http2Server(hs, *keepAlive)
	if certs != nil {
		hs.TLSConfig = certs.tlsConfig()
		hs.Protocols.SetUnencryptedHTTP2(false)
		stopReload := certs.reloadOnSIGHUP()
		defer stopReload()
	}
	served := make(chan error, 2)
	go func() { served <- serveOn(hs, ln) }()
	var gs *http.Server
	if gln != nil {
		gs = &http.Server{Handler: h.GRPC(), ReadHeaderTimeout: hs.ReadHeaderTimeout, IdleTimeout: hs.IdleTimeout,
			BaseContext: hs.BaseContext, ErrorLog: hs.ErrorLog}
		http2Server(gs, *keepAlive)
		if certs != nil {
			gs.TLSConfig = certs.tlsConfig()
			gs.Protocols.SetUnencryptedHTTP2(false)
		}
		go func() { served <- serveOn(gs, gln) }()
	}

	log.Info("serving", "agent", *agentName, "addr", ln.Addr().String(), "store", *storeSpec)
	if len(principals) == 0 {
		log.Warn("authentication is off: every caller shares one task scope (use -auth-token NAME=TOKEN to scope tasks per caller)")
	}
	fmt.Fprintf(stdout, "Parley is serving the %s agent.\n", *agentName)
	fmt.Fprintf(stdout, "  agent card: %s%s\n", base, a2ahttp.CardPath)
	fmt.Fprintf(stdout, "  gRPC:       %s (lf.a2a.v1.A2AService, %s; reflection %s)\n", target,
		map[bool]string{true: "HTTP/2 over TLS", false: "cleartext HTTP/2"}[certs != nil], map[bool]string{true: "on", false: "off"}[*grpcReflection])
	fmt.Fprintf(stdout, "  try:        curl -s -H 'A2A-Version: 1.0' -H 'Content-Type: application/a2a+json' \\\n"+
		"                -d '{\"message\":{\"messageId\":\"m-1\",\"role\":\"ROLE_USER\",\"parts\":[{\"text\":\"hello\"}]}}' %s/message:send\n", base)

	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down")
	cancelReqs() // ends open streams; their tasks go on
	shutCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := hs.Shutdown(shutCtx); err != nil {
		log.Warn("http shutdown", "err", err)
	}
	if gs != nil {
		if err := gs.Shutdown(shutCtx); err != nil {
			log.Warn("grpc shutdown", "err", err)
		}
	}
	if err := srv.Close(shutCtx); err != nil {
		log.Warn("agents did not stop in time", "err", err)
	}
	return nil
}

// openStore opens the task store named by a -store value.
func openStore(spec string) (taskstore.Store, error) {
	switch {
	case spec == "memory":
		return memstore.New(), nil
	case strings.HasPrefix(spec, "sqlite:"):
		path := strings.TrimPrefix(spec, "sqlite:")
		if path == "" {
			return nil, usageError{errors.New("-store sqlite:PATH needs a path")}
		}
		return sqlitestore.Open(path)
	}
	return nil, usageError{fmt.Errorf("-store %q: want memory or sqlite:PATH", spec)}
}

// http2Server lets srv speak HTTP/1.1 and cleartext HTTP/2 (h2c with prior
// knowledge, as gRPC clients use it; HTTP/2 over TLS too, when served with
// TLS), and makes it ping an HTTP/2 connection that has been silent for
// keepAlive (0: no pings), closing it when the ping is not answered.
func http2Server(srv *http.Server, keepAlive time.Duration) {
	srv.Protocols = new(http.Protocols)
	srv.Protocols.SetHTTP1(true)
	srv.Protocols.SetHTTP2(true)
	srv.Protocols.SetUnencryptedHTTP2(true)
	// gRPC clients put every call on one connection, and subscriptions
	// stay open: allow more concurrent streams than the default 100.
	srv.HTTP2 = &http.HTTP2Config{MaxConcurrentStreams: 1000}
	if keepAlive > 0 {
		srv.HTTP2.SendPingTimeout = keepAlive
		srv.HTTP2.PingTimeout = max(keepAlive, 15*time.Second)
	}
}

// grpcTarget is the url of the card's GRPC interface: a "host:port" dial
// target (brief D34, as the proto on main specifies), which gRPC clients
// such as grpc-js accept as is. The host is the one of the public base URL;
// the port is the gRPC listener's when there is one (its host too, unless
// a public URL was given), else the base URL's.
func grpcTarget(base string, public bool, gln net.Listener) (string, error) {
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("-public-url %q: want an absolute URL", base)
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

// serveOn serves srv on ln, over TLS when srv has a TLS config.
func serveOn(srv *http.Server, ln net.Listener) error {
	if srv.TLSConfig != nil {
		return srv.ServeTLS(ln, "", "") // the certificate comes from TLSConfig.GetCertificate
	}
	return srv.Serve(ln)
}

// certReloader holds the server's TLS certificate, read from -tls-cert and
// -tls-key at start-up and again on SIGHUP; connections already open keep
// the certificate they were made with.
type certReloader struct {
	certFile, keyFile string
	log               *slog.Logger
	cert              atomic.Pointer[tls.Certificate]
}

// load reads the key pair; on failure the current certificate stays.
func (c *certReloader) load() error {
	cert, err := tls.LoadX509KeyPair(c.certFile, c.keyFile)
	if err != nil {
		return fmt.Errorf("TLS certificate (-tls-cert %s, -tls-key %s): %w", c.certFile, c.keyFile, err)
	}
	c.cert.Store(&cert)
	if leaf := cert.Leaf; leaf != nil {
		c.log.Info("TLS certificate", "subject", leaf.Subject.String(), "dns", leaf.DNSNames, "ips", leaf.IPAddresses, "notAfter", leaf.NotAfter)
		if time.Now().After(leaf.NotAfter) {
			c.log.Warn("the TLS certificate has expired", "notAfter", leaf.NotAfter)
		}
	}
	return nil
}

// tlsConfig is a server TLS config that serves the current certificate.
// ALPN offers h2 and http/1.1 (http.Server.ServeTLS adds them from the
// server's Protocols). TLS 1.2 is the oldest version accepted (the spec asks
// that SSLv3, TLS 1.0 and 1.1 be off); TLS 1.3 is chosen whenever the client
// has it.
func (c *certReloader) tlsConfig() *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			return c.cert.Load(), nil
		},
	}
}

// reloadOnSIGHUP reloads the certificate each time the process gets SIGHUP,
// until the returned function is called.
func (c *certReloader) reloadOnSIGHUP() (stop func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-ch:
				if err := c.load(); err != nil {
					c.log.Error("TLS certificate not reloaded; the previous one stays in use", "err", err)
				} else {
					c.log.Info("TLS certificate reloaded")
				}
			case <-done:
				return
			}
		}
	}()
	return func() { signal.Stop(ch); close(done) }
}
