package cli

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
)

// Exit codes of the client commands (card, send, task, push, check), in
// addition to ExitOK, ExitError and ExitUsage.
const (
	ExitTransport = 3 // the agent could not be reached, or the connection broke
	ExitA2A       = 4 // the agent answered with an A2A (or JSON-RPC) error
)

// clientCommand runs one of the client commands and returns its exit code.
// It prints its own errors: a line on stderr, and with --json an error
// object on stdout.
func clientCommand(ctx context.Context, name string, args []string, stdout, stderr io.Writer) int {
	cmds := map[string]func(context.Context, *env, []string) error{
		"card": cardCmd, "send": sendCmd, "task": taskCmd, "push": pushCmd, "check": checkCmd,
	}
	e := &env{name: name, stdout: stdout, stderr: stderr}
	err := cmds[name](ctx, e, args)
	code := exitCode(err)
	if err != nil && !errors.Is(err, flag.ErrHelp) && !errors.Is(err, errReported) {
		e.reportError(err, code)
	}
	return code
}

// errReported is returned by a command that already told the user what
// went wrong (parley check with a MUST failure).
var errReported = errors.New("reported")

// exitCode maps a command's error to its exit status.
func exitCode(err error) int {
	var (
		ue usageError
		ae *a2a.Error
		te *client.TransportError
		se *client.StreamEndedError
		ce codeError
	)
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return ExitOK
	case errors.As(err, &ce):
		return ce.code
	case errors.As(err, &ue):
		return ExitUsage
	case errors.As(err, &se), errors.As(err, &te), errors.Is(err, context.DeadlineExceeded):
		return ExitTransport
	case errors.As(err, &ae):
		return ExitA2A
	}
	return ExitError
}

// codeError carries an explicit exit code.
type codeError struct {
	error
	code int
}

func (e codeError) Unwrap() error { return e.error }

// env is what a client command works with.
type env struct {
	name           string
	stdout, stderr io.Writer
	c              *common
	out            *output
}

// reportError prints err: one line on stderr, and with --json an error
// object on stdout.
func (e *env) reportError(err error, code int) {
	msg := err.Error()
	var te *client.TransportError
	var se *client.StreamEndedError
	switch {
	case errors.As(err, &se):
		msg = "" // showStream printed it, with advice
	case errors.Is(err, context.DeadlineExceeded) && e.c != nil:
		msg = fmt.Sprintf("timed out after %v (--timeout): %v", e.c.timeout, err)
	case errors.As(err, &te) && te.Phase == client.PhaseConnect:
		msg += " (is the agent running, and is the URL right?)"
	}
	if msg != "" {
		fmt.Fprintf(e.stderr, "parley %s: %s\n", e.name, msg)
	}
	if e.c != nil && e.c.json {
		fmt.Fprintln(e.stdout, errorJSON(err, code))
	}
}

// errorJSON renders an error for --json output.
func errorJSON(err error, code int) string {
	var b bytes.Buffer
	kind := map[int]string{ExitUsage: "usage", ExitTransport: "transport", ExitA2A: "a2a"}[code]
	if kind == "" {
		kind = "error"
	}
	b.WriteString(`{"error":{"kind":`)
	b.WriteString(jsonQuote(kind))
	var ae *a2a.Error
	if errors.As(err, &ae) {
		fmt.Fprintf(&b, `,"code":%d,"name":%s`, ae.Code.JSONRPC(), jsonQuote(ae.Code.Name()))
		if r := ae.Code.Reason(); r != "" {
			b.WriteString(`,"reason":` + jsonQuote(r))
		}
		b.WriteString(`,"message":` + jsonQuote(ae.WireMessage()))
	} else {
		b.WriteString(`,"message":` + jsonQuote(err.Error()))
	}
	fmt.Fprintf(&b, `,"exitCode":%d}}`, code)
	return b.String()
}

// common are the flags every client command takes.
type common struct {
	binding    string
	token      string
	headers    multiFlag
	version    string
	versionSet bool
	json       bool
	timeout    time.Duration
}

// newFlags returns a flag set for a client command with the common flags.
// usage is the command's synopsis and notes, printed by -h.
func (e *env) newFlags(usage string, withVersion bool) (*flag.FlagSet, *common) {
	fs := flag.NewFlagSet("parley "+e.name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	c := &common{}
	fs.StringVar(&c.binding, "binding", "", "use this binding: jsonrpc, rest or grpc (default: the card's order)")
	fs.StringVar(&c.token, "token", "", "bearer `TOKEN` sent as Authorization: Bearer TOKEN")
	fs.Var(&c.headers, "header", "extra request header `K=V` (repeatable)")
	if withVersion {
		fs.StringVar(&c.version, "a2a-version", a2a.ProtocolVersion, "A2A-Version header to send (\"\" sends none)")
	}
	fs.BoolVar(&c.json, "json", false, "machine-readable output: one JSON document per line")
	fs.DurationVar(&c.timeout, "timeout", 0, "give up after `DURATION` (default 30s; streams and check: no limit)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: parley %s\n\nflags (anywhere after the command):\n", strings.TrimSpace(usage))
		fs.PrintDefaults()
	}
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
		return nil, usageError{fmt.Errorf("%v (run 'parley %s -h' for the flags)", err, e.name)}
	}
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "a2a-version" {
			e.c.versionSet = true
		}
	})
	for _, h := range e.c.headers {
		if k, _, ok := strings.Cut(h, "="); !ok || strings.TrimSpace(k) == "" {
			return nil, usageError{fmt.Errorf("--header %q: want K=V", h)}
		}
	}
	if _, err := e.c.transports(); err != nil {
		return nil, err
	}
	e.out = newOutput(e.stdout, e.stderr, e.c.json)
	return pos, nil
}

// args checks the number of positional arguments.
func wantArgs(pos []string, min, max int, what string) error {
	switch {
	case len(pos) < min:
		return usageError{fmt.Errorf("missing %s", what)}
	case max >= 0 && len(pos) > max:
		return usageError{fmt.Errorf("unexpected argument %q", pos[max])}
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

// transports returns the transports --binding allows.
func (c *common) transports() ([]client.TransportFactory, error) {
	all := client.DefaultTransports() // JSON-RPC, HTTP+JSON, gRPC
	switch strings.ToLower(c.binding) {
	case "":
		return all, nil
	case "jsonrpc", "json-rpc":
		return all[:1], nil
	case "rest", "http+json", "httpjson", "http":
		return all[1:2], nil
	case "grpc":
		return all[2:3], nil
	}
	return nil, usageError{fmt.Errorf("--binding %q: want jsonrpc, rest or grpc", c.binding)}
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

// httpClient returns the HTTP client of the command: it applies
// --a2a-version to every request (gRPC calls included, where it is the
// a2a-version metadata) and keeps the body of the card response for `card
// --json`.
func (c *common) httpClient(capture *cardCapture) *http.Client {
	return &http.Client{Transport: &cliTransport{base: http.DefaultTransport, h2: h2Transport(), c: c, capture: capture}}
}

// h2Transport is a copy of the default transport that speaks HTTP/2 only:
// over TLS for https URLs, cleartext (h2c, prior knowledge) for http ones,
// as gRPC needs.
func h2Transport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	p := new(http.Protocols)
	p.SetHTTP2(true)
	p.SetUnencryptedHTTP2(true)
	t.Protocols = p
	return t
}

// cliTransport rewrites A2A-Version when --a2a-version was given, and
// sends gRPC calls over HTTP/2. The gRPC transport of package client uses
// a RoundTripper of its own making as it is, so this one must speak HTTP/2
// for them.
type cliTransport struct {
	base    http.RoundTripper
	h2      http.RoundTripper // gRPC calls
	c       *common
	capture *cardCapture
}

func (t *cliTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if t.c.versionSet {
		r = r.Clone(r.Context())
		if t.c.version == "" {
			r.Header.Del("A2A-Version")
		} else {
			r.Header.Set("A2A-Version", t.c.version)
		}
	}
	base := t.base
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/grpc") {
		base = t.h2
	}
	resp, err := base.RoundTrip(r)
	if err == nil && t.capture != nil && strings.HasSuffix(r.URL.Path, ".json") {
		resp.Body = t.capture.wrap(resp.Body)
	}
	return resp, err
}

// cardCapture keeps the raw body of the card response.
type cardCapture struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (c *cardCapture) wrap(rc io.ReadCloser) io.ReadCloser {
	c.mu.Lock()
	c.buf.Reset()
	c.mu.Unlock()
	return struct {
		io.Reader
		io.Closer
	}{io.TeeReader(rc, (*lockedBuf)(c)), rc}
}

func (c *cardCapture) bytes() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return bytes.Clone(c.buf.Bytes())
}

type lockedBuf cardCapture

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// resolve fetches the agent card at url.
func (c *common) resolve(ctx context.Context, url string, capture *cardCapture) (*a2a.AgentCard, error) {
	h := c.header()
	if c.token != "" {
		h.Set("Authorization", "Bearer "+c.token)
	}
	return client.Resolve(ctx, url, &client.ResolveOptions{HTTPClient: c.httpClient(capture), Header: h})
}

// connect resolves the card at url and returns a client for it.
func (c *common) connect(ctx context.Context, url string) (*client.Client, error) {
	card, err := c.resolve(ctx, url, nil)
	if err != nil {
		return nil, err
	}
	ts, err := c.transports()
	if err != nil {
		return nil, err
	}
	grpcOverTLS(card, url)
	return client.New(card, &client.Options{
		HTTPClient:  c.httpClient(nil),
		BearerToken: c.token,
		Header:      c.header(),
		Transports:  ts,
	})
}

// grpcOverTLS makes the card's gRPC dial targets (host:port, which say
// nothing about TLS) https URLs when the agent was reached over https: the
// command has no TLS settings of its own, and an agent served over TLS
// serves gRPC over TLS too.
func grpcOverTLS(card *a2a.AgentCard, agentURL string) {
	if !strings.HasPrefix(strings.ToLower(agentURL), "https://") {
		return
	}
	for _, in := range card.GetSupportedInterfaces() {
		u := in.GetUrl()
		if strings.EqualFold(in.GetProtocolBinding(), a2a.BindingGRPC) && u != "" && !strings.Contains(u, "://") {
			in.Url = "https://" + strings.TrimPrefix(u, "dns:///")
		}
	}
}

// isTerminal reports whether w is a terminal: a character device other
// than the null device (output sent to /dev/null is not shown to anyone).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	if null, err := os.Stat(os.DevNull); err == nil && os.SameFile(fi, null) {
		return false
	}
	return true
}
