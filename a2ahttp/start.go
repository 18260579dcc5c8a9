package a2ahttp

// The steps of Start once it knows its versions and TLS configuration:
// listening, the core, the handler, serving.

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/server"
	"parley.dev/parley/taskstore/memstore"
)

// listen returns the main listener and the gRPC-only one (nil for none),
// each the configured one or opened at its address; opened lists those it
// opened, which the caller closes if it fails later.
func (cfg *ServeConfig) listen() (ln, gln net.Listener, opened []net.Listener, err error) {
	ln = cfg.Listener
	if ln == nil {
		addr := cfg.Addr
		if addr == "" {
			addr = DefaultAddr
		}
		if ln, err = net.Listen("tcp", addr); err != nil {
			return nil, nil, nil, fmt.Errorf("a2ahttp: %w", err)
		}
		opened = append(opened, ln)
	}
	gln = cfg.GRPCListener
	if gln == nil && cfg.GRPCAddr != "" {
		if gln, err = net.Listen("tcp", cfg.GRPCAddr); err != nil {
			for _, l := range opened {
				l.Close()
			}
			return nil, nil, nil, fmt.Errorf("a2ahttp: %w", err)
		}
		opened = append(opened, gln)
	}
	return ln, gln, opened, nil
}

// startCore makes the server core over the configured store (a memory
// store of s's own when none is), and returns the card it serves (which
// ServeConfig.ServerOptions may have changed).
func (s *Server) startCore(cfg *ServeConfig, card *a2a.AgentCard, versions []string) (*a2a.AgentCard, error) {
	store := cfg.Store
	if store == nil {
		store = memstore.New()
		s.store = store
	}
	sopts := &server.Options{
		Card: card, ExtendedCard: cfg.ExtendedCard, Agent: cfg.Agent, Store: store, ProtocolVersions: versions,
		RequireAuth: (len(cfg.Tokens) > 0 || len(cfg.Authenticators) > 0) && !cfg.AllowAnonymous,
		Logger:      s.log, Push: cfg.Push,
	}
	if cfg.ServerOptions != nil {
		cfg.ServerOptions(sopts)
	}
	var err error
	if s.core, err = server.New(sopts); err != nil {
		s.closeStore()
		return nil, err
	}
	return sopts.Card, nil
}

// startHandler makes the HTTP handler over s's core; on failure it closes
// the core and what s owns.
func (s *Server) startHandler(cfg *ServeConfig, card *a2a.AgentCard, keepAlive time.Duration, grpcListener bool) error {
	hopts := &Options{
		Card: card, Tokens: cfg.Tokens, Authenticators: cfg.Authenticators, AllowAnonymous: cfg.AllowAnonymous,
		CardSigner: cfg.CardSigner, DisableV03: cfg.DisableV03, KeepAlive: keepAlive, Logger: s.log, Parking: NewParking(0),
	}
	if cfg.HandlerOptions != nil {
		cfg.HandlerOptions(hopts)
	}
	s.parking = hopts.Parking
	var err error
	if s.handler, err = New(s.core, hopts); err == nil && grpcListener && s.handler.GRPC() == nil {
		err = errors.New("a2ahttp: a gRPC listener is configured but the gRPC binding is off")
	}
	if err != nil {
		s.core.Close(context.Background())
		s.closeStore()
		if s.parking != nil {
			s.parking.Close()
		}
		return err
	}
	return nil
}

// serveListeners serves s's handler on ln and, when gln is not nil, its
// gRPC binding alone on gln, each through the configured HTTP middleware.
func (s *Server) serveListeners(cfg *ServeConfig, ln, gln net.Listener, keepAlive time.Duration, tlsConf *tls.Config) {
	var main, grpcOnly http.Handler = s.handler, nil
	if gln != nil {
		grpcOnly = s.handler.GRPC()
	}
	if mw := cfg.HTTPMiddleware; mw != nil {
		main = mw(main, false)
		if grpcOnly != nil {
			grpcOnly = mw(grpcOnly, true)
		}
	}
	reqCtx, cancel := context.WithCancel(context.Background())
	s.cancelReqs = cancel
	s.serve(cfg.newHTTPServer(reqCtx, main, keepAlive, tlsConf, s.log), ln)
	if gln != nil {
		s.serve(cfg.newHTTPServer(reqCtx, grpcOnly, keepAlive, tlsConf, s.log), gln)
	}
}
