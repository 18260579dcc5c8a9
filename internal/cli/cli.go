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
	case "demo-server": // the A2A CLI specification's demo agent: the conformance agent, in memory
		err = serve(ctx, append([]string{"--agent", "conformance", "--store", "memory"}, args[1:]...), stdout, stderr)
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
	case "card", "send", "task", "push", "check", "config", "mcp": // the client commands print their own errors
		return clientCommand(ctx, args[0], args[1:], stdout, stderr)
	case "completion":
		err = completionCmd(args[1:], stdout)
	case "conformance": // the A2A CLI specification's name for check
		return clientCommand(ctx, "check", args[1:], stdout, stderr)
	case "version", "--version", "-version", "-v":
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
  parley demo-server      serve the conformance agent in memory, to try the client commands on (= serve --agent conformance --store memory)
  parley card get -a AGENT    fetch, validate and print an agent card (also: parley card URL)
  parley send -a AGENT TEXT   send a message (--stream, --async, --task-id, --context-id, --file, --data)
  parley task get|list|cancel|subscribe|push-config -a AGENT [ID]   work with tasks
  parley push create|get|list|delete URL TASK_ID [ID]    push notification configs (= task push-config)
  parley config show      the client options' effective values and where each comes from
  parley mcp -a AGENT     serve the agent as an MCP server (stdio; --http ADDR: streamable HTTP)
  parley check URL        grade an A2A server against the spec (and B1-B14); also: parley conformance URL
  parley inspect [URL]    a local web page to inspect an agent (card, messages, tasks, traffic, push)
  parley load URL... [flags] closed-loop load (--op send|stream|get); --ceiling ADDR serves the yardstick
  parley key new|jwks     make a card signing key (--alg ES256|EdDSA|RS256), print its public JWKS
  parley apikey new NAME  make an API key for --api-keys (printed once) and its file line
  parley completion bash|zsh|fish  a completion script for the shell
  parley version          the version, commit and Go version of this build (also --version, -v)
  parley help COMMAND     a command's help (the same as parley COMMAND -h)

The client commands (card, send, task, push) follow the A2A CLI specification (docs/a2a-cli-compliance.md).
AGENT (-a, --agent-card) is the agent's URL, a bare host, its card's URL or a card file; the older
spelling puts the URL first instead. They take -o text|json (--json), --bearer, --api-key,
--svc-param K:V, --transport (repeatable), --a2a-version, --timeout, --poll-interval, --insecure,
--debug and --verbose, before or after their arguments, each also from $A2ACLI_<FLAG> or a .env file
(--config FILE). Their exit status says whether the command did its job:
  0    success, whatever state the task is in (FAILED, INPUT_REQUIRED, ...: a warning on stderr)
  1    other failure: an error the agent returned (check: a MUST failed)
  2    bad usage
  3    the agent or its card could not be reached, or the connection broke
  4    authentication missing or refused
  5    --timeout expired
  130  interrupted by Ctrl-C (a task being followed goes on at the agent)
With -o json a failure prints {"error":{"code","message","hint","a2aCode"}} on stdout.

Run 'parley help COMMAND' or 'parley COMMAND -h' for a command's flags and examples.
`, "\n"))
}

// multiFlag is a repeatable string flag: each use adds a value.
type multiFlag []string

// String joins the values with commas.
func (m *multiFlag) String() string { return strings.Join(*m, ",") }

// Set adds a value.
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }
