package cli

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
)

// common are the flags every client command takes.
type common struct {
	binding    string
	token      string
	tokenFile  string       // --token-file: the token read from a file instead
	login      *loginSource // the stored login that gives token, when one does (useStoredToken)
	headers    multiFlag
	version    string
	versionSet bool
	json       bool
	timeout    time.Duration
	// --ca-cert, --client-cert, --client-key, and the TLS settings read
	// from them (nil: the defaults).
	caCert, clientCert, clientKey string
	tls                           *tls.Config
	// warn prints a warning about what the command tolerates (a card
	// without skills) on the command's stderr.
	warn func(msg string)

	// The options of the A2A CLI specification (SPEC §7.2).
	agentCard    string        // -a, --agent-card: origin, card URL or card file
	apiKey       string        // --api-key, placed as the card's apiKey scheme says
	svcParams    multiFlag     // --svc-param K:V: service parameters (headers)
	prefer       multiFlag     // --transport: bindings, most preferred first
	extensions   multiFlag     // --extension: URIs declared in A2A-Extensions
	insecure     bool          // --insecure: no TLS verification (warned)
	debug        bool          // --debug: the exchange on stderr, credentials redacted
	verbose      bool          // --verbose: history and every part
	pollInterval time.Duration // --poll-interval
	configFile   string        // --config: the .env file read instead of the local one
	// apiKeyAt is where --api-key goes (set when the card is read).
	apiKeyAt apiKeyPlace
	debugw   io.Writer
	// from says where each option set came from: "flag", "$A2ACLI_…" or
	// "A2ACLI_… in FILE" (config show).
	from map[string]string
}

// newFlags returns a flag set for a client command with the common flags.
// usage is the command's synopsis and notes, printed by -h.
func (e *env) newFlags(usage string, withVersion bool) (*flag.FlagSet, *common) {
	fs := flag.NewFlagSet("parley "+e.name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	c := &common{warn: func(msg string) { fmt.Fprintf(e.stderr, "parley %s: warning: %s\n", e.name, msg) }}
	fs.StringVar(&c.agentCard, "agent-card", "", "the `AGENT`: its URL (its /.well-known/agent-card.json is read), a bare host (https; http for localhost), "+
		"its card's URL, or a card file (file://PATH or a path); instead of the URL argument")
	fs.StringVar(&c.agentCard, "a", "", "short for --agent-card")
	output := func(v string) error {
		switch v {
		case "text", "json":
			c.json = v == "json"
			return nil
		}
		return fmt.Errorf("want text or json")
	}
	fs.Func("output", "output `FORMAT`: text (Label: value lines) or json (the protocol's own objects; JSON Lines with --stream) (default text)", output)
	fs.Func("o", "short for --output", output)
	fs.BoolVar(&c.json, "json", false, "the same as -o json")
	fs.StringVar(&c.token, "bearer", "", "bearer `TOKEN` sent as Authorization: Bearer TOKEN (visible to local users in ps and in shell history: "+
		"prefer $A2ACLI_BEARER or --token-file)")
	fs.StringVar(&c.token, "token", "", "the same as --bearer `TOKEN`")
	fs.StringVar(&c.tokenFile, "token-file", "", "send the bearer token in `FILE` (default: $A2ACLI_BEARER, then $"+clientTokenEnv+")")
	fs.Var(&c.headers, "header", "extra request header `K=V` (repeatable; --svc-param K:V is the same)")
	fs.StringVar(&c.binding, "binding", "", "use only this `BINDING`: jsonrpc, rest or grpc")
	if withVersion {
		fs.StringVar(&c.version, "a2a-version", a2a.ProtocolVersion, "A2A-Version header to send (\"\" sends none)")
	}
	fs.BoolVar(&c.insecure, "insecure", false, "do not verify the agent's TLS certificate (development only: a warning says so)")
	if e.name != "check" { // check makes its own calls, and has a --verbose of its own
		fs.BoolVar(&c.debug, "debug", false, "print each HTTP exchange with the agent on stderr (credentials redacted)")
		fs.BoolVar(&c.verbose, "verbose", false, "show more: a task's history and every part")
		fs.DurationVar(&c.pollInterval, "poll-interval", client.DefaultPollInterval, "while waiting without a stream, first wait `DURATION` between reads of the task (backing off to 5s)")
		fs.StringVar(&c.apiKey, "api-key", "", "API `KEY`, sent where the card's apiKey security scheme says (header, query or cookie; "+
			"visible in ps: prefer $A2ACLI_API_KEY)")
		fs.Func("svc-param", "A2A service parameter `K:V`, sent as a request header (gRPC metadata); repeatable", func(v string) error {
			k, _, ok := strings.Cut(v, ":")
			if !ok || strings.TrimSpace(k) == "" {
				return fmt.Errorf("want K:V")
			}
			c.svcParams = append(c.svcParams, v)
			return nil
		})
		fs.Var(&c.extensions, "extension", "declare support for the extension `URI` on every call (A2A-Extensions; repeatable): "+
			"an agent that requires one answers ExtensionSupportRequiredError without it")
		fs.Func("transport", "preferred `BINDING`: jsonrpc, rest (HTTP+JSON) or grpc; repeatable, most preferred first "+
			"(default: the card's order); a binding the card lacks is skipped", func(v string) error {
			for _, b := range strings.Split(v, ",") {
				if _, err := bindingOf(b); err != nil || strings.TrimSpace(b) == "" {
					return fmt.Errorf("want jsonrpc, rest or grpc")
				}
				c.prefer = append(c.prefer, strings.TrimSpace(b))
			}
			return nil
		})
	}
	fs.StringVar(&c.configFile, "config", "", "read A2ACLI_ options from this .env `FILE` instead of a local .env")
	fs.StringVar(&c.caCert, "ca-cert", "", "also trust the CA certificates in this PEM `FILE` for https agents (besides the system's)")
	fs.StringVar(&c.clientCert, "client-cert", "", "present the TLS client certificate in this PEM `FILE` (mutual TLS; with --client-key)")
	fs.StringVar(&c.clientKey, "client-key", "", "the private key of --client-cert, in this PEM `FILE`")
	fs.DurationVar(&c.timeout, "timeout", 0, "give up after `DURATION` (default 30s; streams and check: no limit)")
	command, _, _ := strings.Cut(e.name, " ") // "task list" shares the help of "task"
	fs.Usage = func() { writeHelp(fs.Output(), command, usage, "flags (anywhere after the command)", fs) }
	e.c = c
	return fs, c
}

// parse parses args with flags allowed anywhere among the positional
// arguments ("--" ends the flags). It returns the positional arguments.
func (e *env) parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var flags, pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			pos = append(pos, a)
			continue
		}
		flags = append(flags, a)
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		f := fs.Lookup(name)
		if f == nil || hasValue {
			continue // unknown flags are reported by fs.Parse
		}
		if bf, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && bf.IsBoolFlag() {
			continue
		}
		if i+1 < len(args) {
			flags = append(flags, args[i+1])
			i++
		}
	}
	usage := fs.Usage
	fs.SetOutput(io.Discard) // errors are reported once, by the caller
	fs.Usage = func() {}
	err := fs.Parse(flags)
	fs.SetOutput(e.stdout)
	fs.Usage = usage
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.Usage()
			return nil, err
		}
		return nil, usageError{fmt.Errorf("%v (run 'parley %s -h' for the flags)", dashes(err.Error()), e.name)}
	}
	src, err := configSources(e.c.configFile)
	if err != nil {
		return nil, err
	}
	src.warnLoose(e.c.warn)
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	e.c.from = map[string]string{}
	if err := applyConfig(fs, src, os.Getenv, e.c.from); err != nil {
		return nil, err
	}
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "a2a-version" {
			e.c.versionSet = true
		}
	})
	pos = e.c.withAgent(pos, given["a"] || given["agent-card"])
	for _, kv := range e.c.svcParams {
		k, v, _ := strings.Cut(kv, ":")
		e.c.headers = append(e.c.headers, k+"="+v)
	}
	for _, h := range e.c.headers {
		if k, _, ok := strings.Cut(h, "="); !ok || strings.TrimSpace(k) == "" {
			return nil, usageError{fmt.Errorf("--header %q: want K=V", h)}
		}
	}
	if _, err := e.c.transports(); err != nil {
		return nil, err
	}
	if err := e.c.resolveToken(os.Getenv); err != nil {
		return nil, err
	}
	if err := e.c.loadTLS(); err != nil {
		return nil, err
	}
	if e.c.insecure {
		fmt.Fprintf(e.stderr, "parley %s: WARNING: --insecure: the agent's TLS certificate is not verified; anyone on the path can read and change the exchange, credentials included\n", e.name)
	}
	if e.c.debug {
		e.c.debugw = e.stderr
	}
	e.out = newOutput(e.stdout, e.stderr, e.c.json)
	return pos, nil
}

// wantArgs checks that there are least to most positional arguments
// (most -1: no limit); names are the required ones in order, so that the error
// names only those missing ("missing the task ID" after a URL).
func wantArgs(pos []string, least, most int, names ...string) error {
	switch {
	case len(pos) < least:
		missing := names[min(len(pos), len(names)):min(least, len(names))]
		return usageError{fmt.Errorf("missing %s", andList(missing))}
	case most >= 0 && len(pos) > most:
		return usageError{fmt.Errorf("unexpected argument %q", pos[most])}
	}
	return nil
}

// context returns the command's context: --timeout, or def when not set
// (0: no limit).
func (c *common) context(ctx context.Context, def time.Duration) (context.Context, context.CancelFunc) {
	d := c.timeout
	if d == 0 {
		d = def
	}
	if d <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, d)
}

// defaultTimeout is the limit of a unary command without --timeout.
const defaultTimeout = 30 * time.Second

// bindingOf reads a --binding value: the name a card gives the binding,
// or "" for any binding.
func bindingOf(s string) (string, error) {
	switch strings.ToLower(s) {
	case "":
		return "", nil
	case "jsonrpc", "json-rpc":
		return a2a.BindingJSONRPC, nil
	case "rest", "http+json", "httpjson", "http":
		return a2a.BindingHTTPJSON, nil
	case "grpc":
		return a2a.BindingGRPC, nil
	}
	return "", usageError{fmt.Errorf("--binding %q: want jsonrpc, rest or grpc", s)}
}

// transports returns the transports --binding allows.
func (c *common) transports() ([]client.TransportFactory, error) {
	b, err := bindingOf(c.binding)
	if err != nil {
		return nil, err
	}
	// The v1.x bindings; the legacy v0.3 ones only when --a2a-version asks
	// for 0.3 by name, never as a silent fallback (A2A CLI SPEC §13.2).
	all := client.DefaultTransports()
	if c.versionSet && strings.HasPrefix(c.version, "0.") {
		all = client.V03Transports()
	}
	if b == "" {
		return all, nil
	}
	var out []client.TransportFactory // the binding at every version it is spoken
	for _, f := range all {
		if strings.EqualFold(f.Binding, b) {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--binding %q: this build does not speak %s", c.binding, b)
	}
	return out, nil
}

// header returns the --header values as an http.Header.
func (c *common) header() http.Header {
	h := http.Header{}
	for _, kv := range c.headers {
		k, v, _ := strings.Cut(kv, "=")
		h.Add(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	return h
}

// andList joins phrases as English does: "a", "a and b", "a, b and c".
func andList(items []string) string {
	if len(items) <= 1 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

// hasCredentials reports whether the command sends a credential.
func (c *common) hasCredentials() bool { return c.token != "" || c.apiKey != "" }
