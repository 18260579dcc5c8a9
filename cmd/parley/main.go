// Command parley serves A2A agents. See `parley help`.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"parley.dev/parley/internal/cli"
)

// main runs the command until it ends or the process is interrupted or
// terminated, which stops `parley serve` gracefully.
func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
