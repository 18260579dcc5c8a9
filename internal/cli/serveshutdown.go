package cli

import (
	"context"

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
func (cfg *serveConfig) awaitStop(ctx context.Context, srv *a2ahttp.Server) error {
	select {
	case err := <-srv.Failed():
		return err
	case <-ctx.Done():
	}
	cfg.obs.health.Drain()
	srv.Shutdown(context.Background()) // its outcome is logged
	return nil
}
