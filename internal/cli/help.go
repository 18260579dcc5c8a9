package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// helpText is what every command's help shows besides its synopsis and
// flags: a one-line summary and examples to copy.
type helpText struct {
	summary  string
	examples []string
}

// helps holds the summary and the examples of each command, by name.
var helps = map[string]helpText{
	"serve": {"serve an agent over JSON-RPC, HTTP+JSON and gRPC on one port", []string{
		"parley serve --agent conformance --store memory",
		"parley serve --addr 0.0.0.0:8080 --public-url https://agent.example.com --auth-token alice=s3cret",
		"parley serve --new-push-key > push.key",
		"parley serve --exec 'sh -c \"tr a-z A-Z\"' --exec-timeout 1m",
		"parley serve --proxy http://127.0.0.1:9000 --addr 127.0.0.1:8081 --store memory",
	}},
	"inspect": {"a local web page to inspect an A2A agent", []string{
		"parley inspect http://127.0.0.1:8080",
		"parley inspect --no-open --addr 127.0.0.1:7070",
	}},
	"webhook": {"receive and print push notifications (for developers)", []string{
		"parley webhook --addr 127.0.0.1:9000",
		"parley webhook --token t0ken --json",
	}},
	"load": {"closed-loop load against an A2A server, or serve the ceiling responder", []string{
		"parley load http://127.0.0.1:8080 --op send --concurrency 64 --duration 10s",
		"parley load --ceiling 127.0.0.1:9100",
	}},
	"card": {"fetch, validate and print an agent card", []string{
		"parley card get -a http://127.0.0.1:8080",
		"parley card get -a http://127.0.0.1:8080 -o json",
		"parley card get -a https://agent.example.com --verify-key card-jwks.json",
		"parley card http://127.0.0.1:8080",
	}},
	"key": {"make a key that signs agent cards, or print a key's public JWKS", []string{
		"parley key new --alg ES256 --out card.key",
		"parley key jwks card.key > card-jwks.json",
	}},
	"apikey": {"make an API key for parley serve --api-keys", []string{
		"parley apikey new alice",
		"parley apikey new dashboard --rights tasks:read",
	}},
	"send": {"send a message to an agent and print its answer", []string{
		`parley send -a http://127.0.0.1:8080 "hello"`,
		`parley send -a http://127.0.0.1:8080 "stream 5" --stream -o json`,
		`parley send -a http://127.0.0.1:8080 "slow 5000" --async`,
		`parley send -a http://127.0.0.1:8080 --task-id TASK_ID "more input"`,
		`A2ACLI_AGENT_CARD=http://127.0.0.1:8080 parley send "hello"`,
	}},
	"chat": {"a conversation with an agent: each line a turn, its context and task carried over", []string{
		"parley chat -a http://127.0.0.1:8080",
		`printf 'input-required\nblue\n' | parley chat -a http://127.0.0.1:8080`,
	}},
	"auth": {"sign in to an agent with OAuth 2.x, as its card's security schemes say", []string{
		"parley auth login -a https://agent.example.com --client-id my-cli",
		"parley auth login -a https://agent.example.com --client-id my-cli --flow code --scope offline_access",
		"A2ACLI_CLIENT_SECRET=... parley auth login -a https://agent.example.com --client-id svc --flow client-credentials",
	}},
	"mcp": {"serve an A2A agent as an MCP server (its skills as tools)", []string{
		"parley mcp http://127.0.0.1:8080",
		"parley mcp -a https://agent.example.com --token-file token.txt",
		"parley mcp http://127.0.0.1:8080 --http 127.0.0.1:7071",
	}},
	"task": {"get, list, cancel, follow or wait for tasks", []string{
		"parley task list -a http://127.0.0.1:8080 --status working",
		"parley task get -a http://127.0.0.1:8080 --wait TASK_ID",
		"parley task subscribe -a http://127.0.0.1:8080 TASK_ID",
		"parley task cancel -a http://127.0.0.1:8080 TASK_ID -o json",
		"parley task push-config list -a http://127.0.0.1:8080 TASK_ID",
	}},
	"push": {"manage the push notification configs of a task", []string{
		"parley push create http://127.0.0.1:8080 TASK_ID --url http://127.0.0.1:9000/hook --token-value t0ken",
		"parley push list http://127.0.0.1:8080 TASK_ID",
	}},
	"completion": {"print a completion script for bash, zsh or fish", []string{
		"parley completion bash > ~/.parley-completion && . ~/.parley-completion",
		"parley completion fish > ~/.config/fish/completions/parley.fish",
	}},
	"config": {"show the client options' effective values and where each comes from", []string{
		"parley config show",
		"A2ACLI_OUTPUT=json parley config show --config agent.env -o json",
	}},
	"check": {"grade an A2A server against the specification (and B1-B14)", []string{
		"parley check http://127.0.0.1:8080 --brief",
		"parley check http://127.0.0.1:8080 --binding rest --json",
	}},
	"version": {"print the version, the commit and the Go version of this build", []string{
		"parley version",
		"parley --version",
	}},
}

// writeHelp writes the help of the command name in the one style every
// command shares: the summary, the synopsis (its first line is the usage,
// the rest notes), the flags with two dashes, and the examples.
func writeHelp(w io.Writer, name, synopsis, flagsTitle string, fs *flag.FlagSet) {
	h := helps[name]
	if h.summary != "" {
		fmt.Fprintf(w, "parley %s: %s\n\n", name, h.summary)
	}
	usage, notes, _ := strings.Cut(strings.TrimSpace(synopsis), "\n")
	fmt.Fprintf(w, "usage: parley %s\n", usage)
	if notes = strings.Trim(notes, "\n"); notes != "" {
		fmt.Fprintf(w, "\n%s\n", notes)
	}
	if fs != nil {
		fmt.Fprintf(w, "\n%s:\n", flagsTitle)
		if groups, ok := flagGroups[name]; ok {
			writeGroupedFlags(w, fs, groups) // servehelp.go
		} else {
			writeFlags(w, fs)
		}
	}
	if len(h.examples) > 0 {
		fmt.Fprintf(w, "\nexamples:\n")
		for _, ex := range h.examples {
			fmt.Fprintf(w, "  %s\n", ex)
		}
	}
}

// writeFlags lists the flags of fs in name order, each written with two
// dashes (the form the help and the messages use; Go's flag package
// accepts one or two), its value's name, its usage and any default.
// A one-letter flag is shown beside its long form (shortOf), not alone.
func writeFlags(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		if len(f.Name) > 1 {
			writeFlag(w, f)
		}
	})
}

// shortOf is the one-letter spelling of a long flag.
var shortOf = map[string]string{"agent-card": "a", "output": "o"}

// writeFlag writes one flag as writeFlags lists it: "--name VALUE" on a
// line, then its usage and any default, indented.
func writeFlag(w io.Writer, f *flag.Flag) {
	value, usage := flag.UnquoteUsage(f)
	line := "  --" + f.Name
	if value != "" {
		line += " " + value
	}
	if s := shortOf[f.Name]; s != "" {
		line += ", -" + s
		if value != "" {
			line += " " + value
		}
	}
	fmt.Fprintln(w, line)
	if def := defaultOf(f); def != "" {
		usage += " (default " + def + ")"
	}
	fmt.Fprintf(w, "        %s\n", strings.ReplaceAll(usage, "\n", "\n        "))
}

// defaultOf is the default of f as the help shows it, or "" when the zero
// value is the default (false, 0, "" and empty lists say nothing).
func defaultOf(f *flag.Flag) string {
	switch f.DefValue {
	case "", "false", "0", "0s", "[]":
		return ""
	}
	if _, ok := f.Value.(interface{ IsBoolFlag() bool }); ok {
		return f.DefValue
	}
	if getter, ok := f.Value.(flag.Getter); ok {
		if _, isString := getter.Get().(string); isString {
			return fmt.Sprintf("%q", f.DefValue)
		}
	}
	return f.DefValue
}

// parseCommandFlags parses args with fs for a command that is not a client
// command (serve, webhook, load): -h and --help print the command's help
// on stdout (the error is then flag.ErrHelp), and a bad flag is a
// usageError that points to the help. Go's own messages and flag dump are
// kept off the terminal.
func parseCommandFlags(fs *flag.FlagSet, args []string, name, synopsis string, stdout io.Writer) error {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	err := fs.Parse(args)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, flag.ErrHelp):
		writeHelp(stdout, name, synopsis, "flags", fs)
		return err
	}
	return usageError{fmt.Errorf("%v (run 'parley %s -h' for the flags)", dashes(err.Error()), name)}
}

// dashes rewrites the single-dash flag names in a message of Go's flag
// package ("flag provided but not defined: -x") to the two-dash form the
// help uses.
func dashes(msg string) string {
	for _, prefix := range []string{"not defined: -", "flag needs an argument: -"} {
		if i := strings.Index(msg, prefix); i >= 0 && !strings.HasPrefix(msg[i+len(prefix):], "-") {
			j := i + len(prefix)
			msg = msg[:j] + "-" + msg[j:]
		}
	}
	if strings.HasPrefix(msg, "invalid value ") || strings.HasPrefix(msg, "invalid boolean value ") {
		msg = strings.Replace(msg, " for flag -", " for flag --", 1)
	}
	return msg
}
