package cli

import (
	"context"
	"log/slog"
	"time"

	"parley.dev/parley/a2ahttp"
	"parley.dev/parley/server"
)

// defaultShutdownTimeout is --shutdown-timeout's default.
const defaultShutdownTimeout = 10 * time.Second

// answerGrace is how long, once the core has stopped, the answers it
// released (blocking sends' tasks, streams' terminal events) get to reach
// their callers before the connections still open are closed.
const answerGrace = 300 * time.Millisecond

// awaitStop waits until an HTTP server fails or ctx ends (SIGINT,
// SIGTERM). When ctx ends it drains, then stops:
//
//  1. Readiness off: /readyz answers 503, the gRPC health service
//     NOT_SERVING.
//  2. No new connection: the listeners close; requests in flight go on.
//  3. The core drains for up to --shutdown-timeout (server.Shutdown): the
//     agents running go on, blocking sends get their tasks, streams their
//     events through the terminal one. Past the timeout the core cancels
//     the agents still running and ends their tasks FAILED, which their
//     blocking sends and streams get as the answer.
//  4. The answers go out (answerGrace), then what is still open ends:
//     streams of tasks waiting in INPUT_REQUIRED or AUTH_REQUIRED, which
//     have no terminal event to wait for.
//
// All of it takes at most the timeout plus about a second and a half
// (server.ShutdownGrace for agents that do not return when canceled,
// answerGrace, endGrace).
func (cfg *serveConfig) awaitStop(ctx context.Context, front *httpFront, srv *server.Server, h *a2ahttp.Handler, log *slog.Logger) error {
	select {
	case err := <-front.served:
		return err
	case <-ctx.Done():
	}
	timeout := cfg.shutdownWait
	log.Info("shutting down: draining", "timeout", timeout)
	cfg.obs.health.Drain()
	h.SetServing(false)
	served := front.stopAccepting(log)
	dctx, cancel := context.WithTimeout(context.Background(), timeout)
	err := srv.Shutdown(dctx)
	timedOut := dctx.Err() != nil
	cancel()
	switch {
	case timedOut:
		log.Warn("shutdown timeout reached: the tasks still running were stopped and ended FAILED", "timeout", timeout)
	case err != nil:
		log.Warn("agents did not stop in time", "err", err)
	default:
		log.Info("drained: no task left running")
	}
	front.finish(served, answerGrace)
	return nil
}
