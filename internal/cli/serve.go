package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"syscall"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/a2ahttp"
	"parley.dev/parley/internal/agents"
	"parley.dev/parley/internal/grpcbind"
	"parley.dev/parley/server"
	"parley.dev/parley/taskstore"
)

// serve runs `parley serve`: it serves the chosen agent on every binding
// until ctx ends, then stops gracefully.
func serve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseServeFlags(args, stdout)
	if err != nil {
		return err
	}
	if *cfg.store.newPushKey {
		return printNewPushKey(stdout)
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: cfg.logLevel}))
	obs, log, err := startObservability(ctx, cfg.metricsAddr, log)
	if err != nil {
		return err
	}
	defer obs.close() // last: after the servers and the push sender stopped
	cfg.obs = obs
	// Every file and value the flags name is read and checked before
	// anything listens: a mistake is reported as itself, never hidden
	// behind an address in use (parseServeFlags checked the rest).
	if err := cfg.backend.start(ctx, cfg, log); err != nil { // --exec, --proxy, --mcp
		return err
	}
	defer cfg.backend.stop() // --mcp: its server, once the core stopped
	certs, err := cfg.loadCerts(log)
	if err != nil {
		return err
	}
	extended, err := cfg.readExtendedCard()
	if err != nil {
		return err
	}
	if err := cfg.store.check(cfg.storeSpec, log); err != nil { // opened once the listeners are ours
		return err
	}

	logBuild(log)
	ln, err := listen("--addr", cfg.addr)
	if err != nil {
		return err
	}
	ln = cfg.guard.listener(ln, certs == nil, log)
	defer ln.Close()
	gln, err := listenIfSet("--grpc-addr", cfg.grpcAddr)
	if err != nil {
		return err
	}
	gln = cfg.guard.listener(gln, false, log) // its clients speak HTTP/2 only
	if gln != nil {
		defer gln.Close()
	}
	if err := obs.serveMetrics(cfg.metricsAddr, cfg.guard); err != nil {
		return err
	}

	store, err := cfg.store.open(ctx, cfg.storeSpec, *cfg.push.on, log)
	if err != nil {
		return err
	}
	defer store.Close()
	rep, err := joinReplicas(ctx, store, cfg.lease, log)
	if err != nil {
		return fmt.Errorf("--store %s: %w", storeLabel(cfg.storeSpec), err)
	}
	defer rep.leave() // after the core and the push sender stopped
	cfg.replica = rep
	rep.pushOptions(cfg.push)
	store = obs.store(store)
	obs.pushOptions(&cfg.push.opts)
	pusher, stopPush, err := cfg.push.start(store, log) // the card declares pushNotifications exactly when pusher is not nil
	if err != nil {
		return err
	}
	defer stopPush() // runs after the core is closed
	// The extended card is signed as it is; a2ahttp signs the public
	// card once it is whole (identity.apply).
	if err := cfg.id.signExtended(extended); err != nil {
		return err
	}
	defer cfg.id.reloadOnSIGHUP(log)()
	obs.observePush(pusher, store)
	srv, err := a2ahttp.Start(cfg.serving(ln, gln, certs, extended, store, pusher, log))
	if err != nil {
		return err
	}
	defer srv.Close() // when serving failed: Shutdown closed it already otherwise
	if certs != nil {
		defer certs.reloadOnSIGHUP()()
	}
	defer cfg.secrets.reloadOnSIGHUP(log)()
	cfg.announce(stdout, log, ln.Addr().String(), srv.URL(), grpcURL(srv.Card()), certs != nil)
	return cfg.awaitStop(ctx, srv, log) // serveshutdown.go
}

// serveConfig is the command line of `parley serve`, parsed and checked.
type serveConfig struct {
	guard          *guardFlags
	versions       protocolVersions
	addr           string
	agentName      string
	agent          server.Agent
	storeSpec      string
	publicURL      string
	extendedCard   string      // the file of --extended-card
	shapes         *shapeFlags // --capabilities, --require-extension
	keepAlive      time.Duration
	retention      time.Duration
	resumeWindow   time.Duration
	idemWindow     time.Duration
	maxBody        int64
	logLevel       slog.Level
	grpcAddr       string
	grpcReflection bool
	tlsCert        string
	tlsKey         string
	principals     map[string]string // bearer token → principal name, as loaded at start
	secrets        *secretFlags      // token files, the environment; the swappable token set
	push           *pushFlags
	store          *storeFlags // push keys
	limits         server.Limits
	identity       *identityFlags // JWT, API keys, client certificates, per-caller limits, card signing
	id             *identity      // what identity configures, loaded
	backend        *backendFlags  // --exec, --proxy, --mcp
	metricsAddr    string         // --metrics-addr: Prometheus and the probes
	lease          time.Duration  // --lease: a replica's lease on a PostgreSQL store
	shutdownWait   time.Duration  // --shutdown-timeout: how long SIGTERM lets work in flight finish
	longPoll       time.Duration  // --long-poll-timeout: how long a 1.1 GetTask is held
	obs            *observability // set by serve
	replica        *replica       // set by serve with a PostgreSQL store
}

// serveSynopsis is the usage line and the notes of `parley serve -h`.
const serveSynopsis = `serve [flags]

Serves a built-in agent (echo; conformance, the one the examples and
parley check use; or acts, which speaks only the tck-* behaviour
contract of ACTS, the A2A Conformance Test Specification), any program
(--exec CMD, run once per message with this server's privileges), any
A2A agent (--proxy URL) or the tools of any MCP server (--mcp 'CMD' or
--mcp URL) on JSON-RPC, HTTP+JSON and gRPC, all on --addr.
Tasks are kept in --store (default ./parley.db; memory keeps nothing).
Without --auth-token every caller shares one task scope. Webhooks on
private and loopback addresses are refused unless --push-allow-private.
Ctrl-C stops the server gracefully.`

// parseServeFlags reads the flags of `parley serve`; -h prints the help
// on stdout. Every error it returns is flag.ErrHelp or a usageError.
func parseServeFlags(args []string, stdout io.Writer) (*serveConfig, error) {
	cfg := &serveConfig{}
	fs := flag.NewFlagSet("parley serve", flag.ContinueOnError)
	fs.StringVar(&cfg.addr, "addr", "127.0.0.1:8080", "listen address `HOST:PORT`")
	fs.StringVar(&cfg.agentName, "agent", "echo", "built-in agent: echo, conformance or acts")
	fs.StringVar(&cfg.storeSpec, "store", "sqlite:./parley.db", "task store: memory, sqlite:PATH or postgres://URL (PostgreSQL)")
	fs.StringVar(&cfg.publicURL, "public-url", "", "base `URL` the agent card advertises (default http://ADDR, or https://ADDR with --tls-cert)")
	fs.StringVar(&cfg.extendedCard, "extended-card", "", "a full AgentCard, as JSON, in `FILE`: served by GetExtendedAgentCard to authenticated callers only, so it needs --auth-token")
	fs.DurationVar(&cfg.keepAlive, "keep-alive", 15*time.Second, "SSE keep-alive interval on idle streams (0 turns it off)")
	fs.DurationVar(&cfg.longPoll, "long-poll-timeout", server.DefaultLongPollTimeout, "with --protocol-versions 1.1: how long a GetTask with currentGeneration waits for the task to change before it answers it unchanged (0: answer at once, no long polls)")
	fs.DurationVar(&cfg.shutdownWait, "shutdown-timeout", defaultShutdownTimeout, "on SIGINT or SIGTERM, how long running tasks get to finish (new connections refused, readiness off); past it, or at a second signal, they end FAILED and the server exits")
	fs.DurationVar(&cfg.retention, "retention", 0, "remove finished tasks older than this (0 keeps them)")
	fs.DurationVar(&cfg.resumeWindow, "resume-window", server.DefaultResumeWindow, "keep each task's events this long for streams that resume with Last-Event-ID (older ones get a snapshot first; negative keeps them as long as the task; a task's 1.1 timeline is kept for its life)")
	fs.DurationVar(&cfg.idemWindow, "idempotency-window", 24*time.Hour, "how long a messageId is remembered for idempotent resends")
	fs.DurationVar(&cfg.lease, "lease", 5*time.Second, "with --store postgres://: how long this replica's lease on its running tasks lasts unrenewed; when it lapses (the process died, or was cut off), another replica ends those tasks FAILED within about 4/3 of it (docs/replicas.md)")
	fs.Int64Var(&cfg.maxBody, "max-body", 10<<20, "largest accepted request body in bytes")
	logLevel := fs.String("log-level", "info", "log `LEVEL`: debug, info, warn or error")
	fs.StringVar(&cfg.grpcAddr, "grpc-addr", "", "also serve gRPC alone on this `HOST:PORT` (gRPC is always served on --addr too; the card then lists this one)")
	fs.StringVar(&cfg.metricsAddr, "metrics-addr", "", "also serve Prometheus metrics at http://`HOST:PORT`/metrics, and /healthz and /readyz there (off by default; traces and OTLP metrics are configured by the OTEL_* environment, see docs/observability.md)")
	fs.BoolVar(&cfg.grpcReflection, "grpc-reflection", true, "serve gRPC server reflection, for grpcurl and similar tools")
	fs.StringVar(&cfg.tlsCert, "tls-cert", "", "serve HTTPS and gRPC over TLS with this PEM certificate `FILE` (leaf first, then intermediates; needs --tls-key; SIGHUP reloads both)")
	fs.StringVar(&cfg.tlsKey, "tls-key", "", "PEM private key `FILE` of --tls-cert")
	cfg.guard = addGuardFlags(fs)
	fs.Var(&cfg.versions, "protocol-versions", "A2A protocol `VERSIONS` served, comma-separated: 1.0 and 0.3 (v0.3 beside v1.0 on the same port); add 1.1 for the preview of A2A 1.1 (off by default)")
	var tokens multiFlag
	fs.Var(&tokens, "auth-token", "enable bearer authentication with principal `NAME=TOKEN`, or NAME=TOKEN:RIGHTS for a token with only those rights (comma-separated: tasks:read, tasks:write, push, card:extended, *; repeatable; visible to local users in ps: prefer --auth-token-file)")
	cfg.secrets = addSecretFlags(fs)
	cfg.push = addPushFlags(fs)
	cfg.store = addStoreFlags(fs)
	addLimitFlags(fs, &cfg.limits)
	cfg.identity = addIdentityFlags(fs)
	cfg.backend = addBackendFlags(fs)
	cfg.shapes = addShapeFlags(fs)
	if err := parseCommandFlags(fs, args, "serve", serveSynopsis, stdout); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, usageError{fmt.Errorf("unexpected argument %q", fs.Arg(0))}
	}
	if err := cfg.logLevel.UnmarshalText([]byte(*logLevel)); err != nil {
		return nil, usageError{fmt.Errorf("--log-level %q: want debug, info, warn or error", *logLevel)}
	}
	var err error
	if cfg.principals, err = cfg.secrets.tokens(tokens); err != nil {
		return nil, err
	}
	if err := cfg.secrets.proxyToken(cfg.backend.proxyFlags); err != nil {
		return nil, err
	}
	if err := cfg.push.check(); err != nil {
		return nil, err
	}
	if cfg.agent, err = agents.ByName(cfg.agentName); err != nil {
		return nil, usageError{err}
	}
	if err := cfg.backend.check(fs); err != nil {
		return nil, err
	}
	if cfg.lease < 300*time.Millisecond {
		return nil, usageError{fmt.Errorf("--lease %v: want at least 300ms", cfg.lease)}
	}
	if *cfg.store.timeout < 100*time.Millisecond {
		return nil, usageError{fmt.Errorf("--store-timeout %v: want at least 100ms", *cfg.store.timeout)}
	}
	if cfg.shutdownWait < 0 {
		return nil, usageError{fmt.Errorf("--shutdown-timeout %v: want 0 (stop at once) or more", cfg.shutdownWait)}
	}
	if cfg.longPoll < 0 {
		return nil, usageError{fmt.Errorf("--long-poll-timeout %v: want 0 (no long polls) or more", cfg.longPoll)}
	}
	if err := checkPublicURL(cfg.publicURL); err != nil {
		return nil, usageError{err}
	}
	if (cfg.tlsCert == "") != (cfg.tlsKey == "") {
		return nil, usageError{errors.New("--tls-cert and --tls-key go together: give both or neither")}
	}
	if cfg.id, err = cfg.identity.load(cfg.tlsCert != ""); err != nil {
		return nil, err
	}
	if cfg.extendedCard != "" && !cfg.authConfigured() {
		return nil, usageError{fmt.Errorf("--extended-card %s: the extended card is served only to authenticated callers, and no authentication is configured: "+
			"add --auth-token NAME=TOKEN (repeatable), then fetch it with that token", cfg.extendedCard)}
	}
	if err := cfg.shapes.check(fs, cfg); err != nil {
		return nil, err
	}
	return cfg, nil
}

// authConfigured reports whether any credential is configured (static
// tokens, JWT, API keys or client certificates).
func (cfg *serveConfig) authConfigured() bool {
	return cfg.staticTokens() || cfg.id.authenticates()
}

// addLimitFlags adds the flags of server.Limits: request sizes and
// per-caller task quotas. A negative value turns a limit off.
func addLimitFlags(fs *flag.FlagSet, l *server.Limits) {
	fs.IntVar(&l.MaxParts, "max-parts", server.DefaultMaxParts, "most parts in one message (also bounds referenceTaskIds, extensions, acceptedOutputModes; negative: no limit)")
	fs.IntVar(&l.MaxIDBytes, "max-id-bytes", server.DefaultMaxIDBytes, "longest task, context, message, push config or artifact id and tenant, in bytes (negative: no limit)")
	fs.IntVar(&l.MaxMetadataBytes, "max-metadata-bytes", server.DefaultMaxMetadataBytes, "largest metadata object (request, message, part, artifact), in encoded bytes (negative: no limit)")
	fs.IntVar(&l.MaxPushConfigs, "max-push-configs", server.DefaultMaxPushConfigs, "most push notification configs per task (negative: no limit)")
	fs.IntVar(&l.MaxPushURLBytes, "max-push-url-bytes", server.DefaultMaxPushURLBytes, "longest push config url, in bytes (negative: no limit)")
	fs.IntVar(&l.MaxPushSecretBytes, "max-push-secret-bytes", server.DefaultMaxPushSecretBytes, "longest push config token, and credentials, in bytes (negative: no limit)")
	fs.IntVar(&l.MaxOpenTasks, "max-open-tasks", server.DefaultMaxOpenTasks, "most open (non-terminal) tasks per caller (negative: no limit)")
	fs.Float64Var(&l.TaskRate, "task-rate", 0, "new tasks per second per caller (0: no limit)")
	fs.IntVar(&l.TaskBurst, "task-burst", 0, "burst of --task-rate (0: the rate rounded up)")
}

// loadCerts reads the --tls-cert key pair; it returns nil when the server
// serves plain HTTP.
func (cfg *serveConfig) loadCerts(log *slog.Logger) (*certReloader, error) {
	if cfg.tlsCert == "" {
		return nil, nil
	}
	certs := &certReloader{certFile: cfg.tlsCert, keyFile: cfg.tlsKey, log: log, configure: cfg.id.tlsClientAuth}
	if err := certs.load(); err != nil {
		return nil, err
	}
	return certs, nil
}

// listenIfSet listens on addr, given by flag, or returns a nil listener
// when addr is "".
func listenIfSet(flag, addr string) (net.Listener, error) {
	if addr == "" {
		return nil, nil
	}
	return listen(flag, addr)
}

// listen listens on the TCP address addr given by flag; its error names
// the flag and the address ("--addr 127.0.0.1:8080: address already in
// use") rather than Go's "listen tcp …: bind: …".
func listen(flag, addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err == nil {
		return ln, nil
	}
	var sysErr *os.SyscallError
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		return nil, fmt.Errorf("%s %s: address already in use (another server listens there: stop it or choose another %s)", flag, addr, flag)
	case errors.As(err, &sysErr):
		return nil, fmt.Errorf("%s %s: %v", flag, addr, sysErr.Err)
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) && opErr.Err != nil {
		return nil, fmt.Errorf("%s %s: %v", flag, addr, opErr.Err)
	}
	return nil, fmt.Errorf("%s %s: %v", flag, addr, err)
}

// serving is what a2ahttp.Start serves: the agent on ln (and gRPC alone
// on gln when it is not nil), over TLS when certs is not nil, with
// everything the flags configure. a2ahttp derives the card's interfaces
// and capabilities; the agent's own card, the security schemes of the
// credentials configured (identity.declare) and the options of the core
// and the handler come from the flags.
func (cfg *serveConfig) serving(ln, gln net.Listener, certs *certReloader, extended *a2a.AgentCard, store taskstore.Store, pusher server.Pusher, log *slog.Logger) *a2ahttp.ServeConfig {
	keepAlive := cfg.keepAlive
	if keepAlive == 0 {
		keepAlive = -1 // a2ahttp reads 0 as its default and a negative interval as off
	}
	shutdownWait := cfg.shutdownWait
	if shutdownWait == 0 {
		shutdownWait = -1 // likewise: no wait
	}
	sc := &a2ahttp.ServeConfig{
		Listener: ln, GRPCListener: gln, PublicURL: cfg.publicURL,
		Agent: cfg.agent, Store: store, ExtendedCard: extended, Push: pusher,
		AllowAnonymous: cfg.guard.allowAnonymous, DisableV03: !cfg.versions.v03(), ProtocolVersions: cfg.versions.served(),
		KeepAlive: keepAlive, ShutdownTimeout: shutdownWait, Logger: log,
		EditCard: cfg.editCard,
		ServerOptions: func(o *server.Options) {
			o.RequireAuth = cfg.authConfigured() && !cfg.guard.allowAnonymous
			o.Retention, o.ResumeWindow, o.IdempotencyWindow = cfg.retention, cfg.resumeWindow, cfg.idemWindow
			o.Limits, o.Cluster = cfg.limits, cfg.replica.cluster()
			o.LongPollTimeout = cfg.longPoll
			if o.LongPollTimeout == 0 {
				o.LongPollTimeout = -1 // the core reads 0 as its default and a negative timeout as no hold
			}
			if ext := cfg.shapes.extended; ext != nil { // --capabilities extended-card
				o.ExtendedCard = ext
			}
			if cfg.replica != nil {
				o.CursorKey = cfg.replica.cursorKey // ListTasks page tokens valid on every replica
			}
			cfg.obs.coreHooks(o)
		},
		HandlerOptions: func(o *a2ahttp.Options) {
			o.MaxBody = cfg.maxBody
			o.GRPC = &grpcbind.Options{DisableReflection: !cfg.grpcReflection, Ready: cfg.obs.health.Check}
			cfg.guard.apply(o)
			cfg.id.apply(o)
			cfg.applyTokens(o) // a TokenSet rather than Options.Tokens: SIGHUP swaps it
			cfg.backend.applyHTTP(o)
			cfg.obs.handlerHooks(o)
		},
		HTTPServer: func(hs *http.Server) {
			if cfg.guard.bodyTimeout > 0 {
				// The server bounds the whole request (headers and body)
				// by --body-timeout itself, at no extra cost per request;
				// a2ahttp then sets no deadline of its own.
				hs.ReadTimeout = cfg.guard.bodyTimeout
			}
		},
		HTTPMiddleware: cfg.obs.wrap,
	}
	if certs != nil {
		sc.TLS = certs.tlsConfig()
	}
	return sc
}

// editCard makes the card a2ahttp derived (its interfaces and
// capabilities) the served agent's: its name, description, skills and
// modes, the security schemes of the credentials configured, and the
// shape of --capabilities and --require-extension. The extended card of
// --capabilities extended-card is made from it here.
func (cfg *serveConfig) editCard(derived *a2a.AgentCard) (*a2a.AgentCard, error) {
	card, err := cfg.agentCard(derived.GetSupportedInterfaces())
	if err != nil {
		return nil, usageError{err}
	}
	if card.Capabilities == nil {
		card.Capabilities = &a2a.AgentCapabilities{}
	}
	card.Capabilities.PushNotifications = derived.GetCapabilities().PushNotifications
	card.Capabilities.ExtendedAgentCard = derived.GetCapabilities().ExtendedAgentCard
	cfg.shapes.shape(card)
	cfg.id.declare(card, cfg.staticTokens(), cfg.guard.allowAnonymous)
	if err := cfg.makeExtended(card); err != nil {
		return nil, err
	}
	return card, nil
}

// grpcURL is the url of card's v1.0 gRPC interface.
func grpcURL(card *a2a.AgentCard) string {
	for _, in := range card.GetSupportedInterfaces() {
		if in.GetProtocolBinding() == a2a.BindingGRPC && in.GetProtocolVersion() == a2a.ProtocolVersion {
			return in.GetUrl()
		}
	}
	return ""
}

// announce logs that the server is up, and tells a person on stdout where
// the card is, how gRPC is served and how to try the agent.
func (cfg *serveConfig) announce(stdout io.Writer, log *slog.Logger, listenAddr, base, target string, overTLS bool) {
	log.Info("serving", "agent", cfg.agentName, "addr", listenAddr, "store", storeLabel(cfg.storeSpec))
	cfg.id.announce(log)
	cfg.announceSecrets(log)
	if !cfg.authConfigured() {
		log.Warn("authentication is off: every caller shares one task scope (use --auth-token NAME=TOKEN to scope tasks per caller)")
	}
	transport := "cleartext HTTP/2"
	if overTLS {
		transport = "HTTP/2 over TLS"
	}
	reflection := "off"
	if cfg.grpcReflection {
		reflection = "on"
	}
	fmt.Fprintf(stdout, "Parley is serving the %s agent.\n", cfg.agentName)
	fmt.Fprintf(stdout, "  agent card: %s%s\n", base, a2ahttp.CardPath)
	fmt.Fprintf(stdout, "  gRPC:       %s (lf.a2a.v1.A2AService, %s; reflection %s)\n", target, transport, reflection)
	// The curl makes a fresh messageId each run: a resent messageId is an
	// idempotent resend (docs/decisions.md#b14), which would answer with
	// the first run's task. With authentication on, it carries the
	// credential as a shell variable (or a client certificate), and a
	// note says where to get one: never the secret itself.
	creds, credsNote := cfg.curlCredentials()
	fmt.Fprintf(stdout, "  try:        curl -s -H 'A2A-Version: 1.0' -H 'Content-Type: application/a2a+json' \\\n")
	if creds != "" {
		fmt.Fprintf(stdout, "                %s \\\n", creds)
	}
	fmt.Fprintf(stdout, "                -d '{\"message\":{\"messageId\":\"m-'$(date +%%s%%N)'\",\"role\":\"ROLE_USER\",\"parts\":[{\"text\":\"hello\"}]}}' %s/message:send\n"+
		"              (the shell puts the time in the messageId, so each run sends a new message: a messageId sent again returns the first answer)\n", base)
	if credsNote != "" {
		fmt.Fprintf(stdout, "              %s\n", credsNote)
	}
}
