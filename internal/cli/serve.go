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
	"strings"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/a2ahttp"
	"parley.dev/parley/agents"
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
	publicURL := fs.String("public-url", "", "base `URL` the agent card advertises (default http://ADDR)")
	extCard := fs.String("extended-card", "", "JSON AgentCard `FILE` served to authenticated callers by GetExtendedAgentCard")
	keepAlive := fs.Duration("keep-alive", 15*time.Second, "SSE keep-alive interval on idle streams (0 turns it off)")
	retention := fs.Duration("retention", 0, "remove finished tasks older than this (0 keeps them)")
	idemWindow := fs.Duration("idempotency-window", 24*time.Hour, "how long a messageId is remembered for idempotent resends")
	maxBody := fs.Int64("max-body", 10<<20, "largest accepted request body in bytes")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn, error")
	var tokens multiFlag
	fs.Var(&tokens, "auth-token", "enable bearer authentication with principal `NAME=TOKEN` (repeatable)")
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

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	base := *publicURL
	if base == "" {
		base = "http://" + ln.Addr().String()
	}
	base = strings.TrimSuffix(base, "/")

	card, err := agents.Card(*agentName, []*a2a.AgentInterface{
		{Url: base + "/", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.ProtocolVersion},
		{Url: base, ProtocolBinding: a2a.BindingHTTPJSON, ProtocolVersion: a2a.ProtocolVersion},
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

	srv, err := server.New(&server.Options{
		Card: card, ExtendedCard: extended, Agent: agent, Store: store,
		RequireAuth: len(principals) > 0, Logger: log,
		Retention: *retention, IdempotencyWindow: *idemWindow,
	})
	if err != nil {
		return err
	}
	ka := *keepAlive
	if ka == 0 {
		ka = -1
	}
	h, err := a2ahttp.New(srv, &a2ahttp.Options{Card: card, Tokens: principals, MaxBody: *maxBody, KeepAlive: ka, Logger: log})
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
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()

	log.Info("serving", "agent", *agentName, "addr", ln.Addr().String(), "store", *storeSpec)
	if len(principals) == 0 {
		log.Warn("authentication is off: every caller shares one task scope (use -auth-token NAME=TOKEN to scope tasks per caller)")
	}
	fmt.Fprintf(stdout, "Parley is serving the %s agent.\n", *agentName)
	fmt.Fprintf(stdout, "  agent card: %s%s\n", base, a2ahttp.CardPath)
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
