// Package cli is the `parley` command: Run parses the arguments, runs the
// subcommand they name (serve, webhook, load, or one of the client
// commands card, send, task, push and check) and returns its exit code,
// writing only to the streams it is given.
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
	case "webhook":
		err = webhook(ctx, args[1:], stdout, stderr)
	case "load":
		err = load(ctx, args[1:], stdout, stderr)
	case "key":
		err = keyCmd(args[1:], stdout, stderr)
	case "apikey":
		err = apikeyCmd(args[1:], stdout, stderr)
	case "inspect":
		err = inspectCmd(ctx, args[1:], stdout, stderr)
	case "card", "send", "task", "push", "check": // the client commands print their own errors
		return clientCommand(ctx, args[0], args[1:], stdout, stderr)
	case "version", "--version", "-version":
		return versionCmd(args[1:], stdout, stderr)
	case "help", "-h", "-help", "--help":
		if len(args) > 1 && args[0] == "help" {
			return commandHelp(ctx, args[1:], stdout, stderr)
		}
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

// commandHelp runs `parley help COMMAND [SUBCOMMAND]`: the help the
// command prints for -h.
func commandHelp(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if args[0] == "-h" || args[0] == "--help" || args[0] == "-help" || args[0] == "help" {
		usage(stdout)
		return ExitOK
	}
	if _, ok := helps[args[0]]; !ok {
		fmt.Fprintf(stderr, "parley help: unknown command %q\n\n", args[0])
		usage(stderr)
		return ExitUsage
	}
	return Run(ctx, append(append([]string{}, args...), "-h"), stdout, stderr)
}

// usageError marks an error in the command line.
type usageError struct{ error }

// usage writes the command's help to w.
func usage(w io.Writer) {
	fmt.Fprint(w, strings.TrimLeft(`
parley: an Agent2Agent (A2A) protocol v1.0 server and toolkit

usage:
  parley serve [flags]    serve an agent over JSON-RPC, HTTP+JSON and gRPC
  parley webhook [flags]  receive and print push notifications (for developers)
  parley card URL         fetch, validate and print an agent card
  parley send URL TEXT    send a message (--stream, --async, --task, --file, --data)
  parley task get|list|cancel|subscribe|wait URL [ID]    work with tasks
  parley push create|get|list|delete URL TASK_ID [ID]    push notification configs
  parley check URL        grade an A2A server against the spec (and B1-B14)
  parley inspect [URL]    a local web page to inspect an agent (card, messages, tasks, traffic, push)
  parley load URL... [flags] closed-loop load (--op send|stream|get); --ceiling ADDR serves the yardstick
  parley key new|jwks     make a card signing key (--alg ES256|EdDSA|RS256), print its public JWKS
  parley apikey new NAME  make an API key for --api-keys (printed once) and its file line
  parley version          the version, commit and Go version of this build (also --version)
  parley help COMMAND     a command's help (the same as parley COMMAND -h)

The client commands take --binding jsonrpc|rest|grpc, --token, --header K=V, --a2a-version,
--json and --timeout, before or after their arguments. Their exit status:
  0    success: the task COMPLETED, or the agent replied with a message
  1    other failure (check: a MUST failed)
  2    bad usage
  3    the agent could not be reached, or the connection broke
  4    the agent answered with an error
  5    the task ended FAILED, REJECTED or CANCELED
  6    the task stopped INPUT_REQUIRED or AUTH_REQUIRED (the command returns; the task waits)
  130  interrupted by Ctrl-C (a task being followed goes on at the agent)
5 and 6 come from send (blocking or --stream), task wait and task subscribe;
send --async exits 0 once the agent has the task, task get 0 whatever its state.

Run 'parley help COMMAND' or 'parley COMMAND -h' for a command's flags and examples.
`, "\n"))
}

// multiFlag is a repeatable string flag: each use adds a value.
type multiFlag []string

// String joins the values with commas.
func (m *multiFlag) String() string { return strings.Join(*m, ",") }

// Set adds a value.
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }
