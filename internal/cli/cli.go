// Package cli is the `parley` command: Run parses arguments and runs a
// subcommand, writing to the given streams.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// Exit codes of the parley command.
const (
	ExitOK    = 0
	ExitError = 1 // the command failed
	ExitUsage = 2 // bad arguments
)

// Run runs the parley command with args (without the program name) and
// returns its exit code. ctx ends the command (for serve: graceful stop).
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return ExitUsage
	}
	var err error
	switch args[0] {
	case "serve":
		err = serve(ctx, args[1:], stdout, stderr)
	case "help", "-h", "-help", "--help":
		usage(stdout)
		return ExitOK
	default:
		fmt.Fprintf(stderr, "parley: unknown command %q\n\n", args[0])
		usage(stderr)
		return ExitUsage
	}
	var ue usageError
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, flag.ErrHelp):
		return ExitOK
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "parley %s: %v\n", args[0], err)
		return ExitUsage
	default:
		fmt.Fprintf(stderr, "parley %s: %v\n", args[0], err)
		return ExitError
	}
}

// usageError marks an error in the command line.
type usageError struct{ error }

func usage(w io.Writer) {
	fmt.Fprint(w, strings.TrimLeft(`
parley: an Agent2Agent (A2A) protocol v1.0 server and toolkit

usage:
  parley serve [flags]    serve an agent over JSON-RPC and HTTP+JSON

Run 'parley serve -h' for the flags.
`, "\n"))
}

// multiFlag is a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }
