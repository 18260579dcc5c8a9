package cli

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"parley.dev/parley/a2ahttp"
)

// defaultShutdownTimeout is --shutdown-timeout's default.
const defaultShutdownTimeout = a2ahttp.DefaultShutdownTimeout

// awaitStop waits until a listener fails or ctx ends (SIGINT, SIGTERM).
// When ctx ends it drains, then stops: readiness off (/readyz answers
// 503), then a2ahttp.Server.Shutdown, which turns the gRPC health service
// NOT_SERVING, refuses new connections, lets the core drain for up to
// --shutdown-timeout (past it the tasks still running end FAILED), lets
// the answers out and ends what is still open. All of it takes at most
// the timeout plus about a second and a half; how it went is logged.
//
// A second SIGINT or SIGTERM during the drain ends it at once, as the
// timeout would: the tasks still running end FAILED, their callers get
// that, and the process exits within about a second and a half. (One
// that comes within microseconds of the first, before the drain
// listens for it, is not seen.)
func (cfg *serveConfig) awaitStop(ctx context.Context, srv *a2ahttp.Server, log *slog.Logger) error {
	select {
	case err := <-srv.Failed():
		return err
	case <-ctx.Done():
	}
	again := make(chan os.Signal, 1)
	signal.Notify(again, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(again)
	drain, cut := context.WithCancel(context.Background())
	defer cut()
	go func() {
		select {
		case sig := <-again:
			log.Warn("second signal during the drain: stopping at once", "signal", sig.String())
			cut()
		case <-drain.Done():
		}
	}()
	cfg.obs.health.Drain()
	srv.Shutdown(drain) // its outcome is logged
	return nil
}
