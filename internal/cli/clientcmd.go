package cli

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"unicode"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
)

// Exit codes of the client commands (card, send, task, push, check), in
// addition to ExitOK, ExitError and ExitUsage: the reserved codes of the
// A2A CLI specification (SPEC §11.6). An exit code says whether the
// command did its job, not how the task turned out: a task that ends
// FAILED, REJECTED or CANCELED, or stops INPUT_REQUIRED or AUTH_REQUIRED,
// is an outcome the command reports (exit 0, with a warning on stderr).
const (
	ExitTransport = 3 // the agent or its card could not be reached or resolved
	ExitAuth      = 4 // authentication was required and not supplied, or refused
	ExitTimeout   = 5 // --timeout expired
	// ExitInterrupted: the user interrupted the command (Ctrl-C); a task
	// it was following goes on at the agent. 128+SIGINT, as shells report.
	ExitInterrupted = 130
)

// clientCommand runs one of the client commands and returns its exit code.
// It prints its own errors: a line on stderr, and with -o json the error
// envelope on stdout.
func clientCommand(ctx context.Context, name string, args []string, stdout, stderr io.Writer) int {
	cmds := map[string]func(context.Context, *env, []string) error{
		"card": cardCmd, "send": sendCmd, "task": taskCmd, "push": pushCmd, "check": checkCmd, "config": configCmd, "mcp": mcpCmd,
	}
	e := &env{name: name, stdout: stdout, stderr: stderr}
	err := cmds[name](ctx, e, args)
	f := e.classify(err)
	if err != nil && !errors.Is(err, flag.ErrHelp) && !errors.Is(err, errReported) {
		e.reportError(err, f)
	}
	return f.exit
}

// errReported is returned by a command that already told the user what
// went wrong (parley check with a MUST failure).
var errReported = errors.New("reported")

// failure is how a client command reports an error (A2A CLI SPEC §11.4,
// Appendix B, Appendix D): its code, exit status, the A2A error's number
// and advice.
type failure struct {
	// code is the A2A error name (TaskNotFoundError, …) for a failure
	// the agent reported, an A2ACLI_ERR_* code for the command's own, or a
	// PARLEY_* code for an error only Parley's table names.
	code string
	exit int
	// a2aCode is the A2A error's JSON-RPC number, the same whichever
	// binding carried it (so one error reads the same on every binding,
	// SPEC §11.4); 0 when none.
	a2aCode int
	hint    string
}

// The CLI's own error codes (A2A CLI SPEC Appendix D).
const (
	errUsage              = "A2ACLI_ERR_USAGE"
	errCardNotFound       = "A2ACLI_ERR_CARD_NOT_FOUND"
	errCardInvalid        = "A2ACLI_ERR_CARD_INVALID"
	errUnreachable        = "A2ACLI_ERR_UNREACHABLE"
	errCredentialsMissing = "A2ACLI_ERR_CREDENTIALS_MISSING"
	errAuthFailed         = "A2ACLI_ERR_AUTH_FAILED"
	errTimeout            = "A2ACLI_ERR_TIMEOUT"
	errInternal           = "A2ACLI_ERR_INTERNAL"
)

// classify is the one mapping from a command's error to its code and exit
// status; every client command's failure goes through it.
func (e *env) classify(err error) failure {
	var (
		ue usageError
		ae *a2a.Error
		te *client.TransportError
		se *client.StreamEndedError
		ce codeError
		cd *client.CardError
	)
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return failure{exit: ExitOK}
	case errors.As(err, &ce):
		f := e.classify(ce.error)
		f.exit = ce.code
		return f
	case errors.As(err, &ue):
		return failure{code: errUsage, exit: ExitUsage, hint: e.helpHint()}
	case errors.Is(err, context.DeadlineExceeded):
		return failure{code: errTimeout, exit: ExitTimeout, hint: "give it longer: --timeout DURATION"}
	case errors.As(err, &cd) && (cd.StatusCode == http.StatusUnauthorized || cd.StatusCode == http.StatusForbidden):
		return e.authFailure(cd.StatusCode)
	case errors.As(err, &cd) && cd.StatusCode == http.StatusNotFound:
		return failure{code: errCardNotFound, exit: ExitTransport, hint: "give the agent's base URL or its card's URL: --agent-card URL"}
	case errors.As(err, &cd):
		return failure{code: errCardInvalid, exit: ExitError}
	case errors.As(err, &se), errors.As(err, &te):
		return failure{code: errUnreachable, exit: ExitTransport}
	case errors.As(err, &ae) && ae.Code == a2a.CodeUnauthenticated:
		return e.authFailure(ae.Code.HTTPStatus())
	case errors.As(err, &ae) && specNamed(ae.Code):
		return failure{code: ae.Code.Name(), exit: ExitError, a2aCode: ae.Code.JSONRPC(), hint: debugHint}
	case errors.As(err, &ae):
		// An error only Parley's table names (413, 429, 503): a vendor code.
		return failure{code: vendorCode(ae.Code), exit: ExitError, a2aCode: ae.Code.JSONRPC()}
	}
	return failure{code: errInternal, exit: ExitError}
}

// specNamed reports whether the A2A specification names c: its own errors
// (spec §3.3.2) and the JSON-RPC ones it maps (spec §5.4, §9.5).
func specNamed(c a2a.Code) bool {
	switch c {
	case a2a.CodeParseError, a2a.CodeInvalidRequest, a2a.CodeMethodNotFound, a2a.CodeInvalidParams, a2a.CodeInternal:
		return true
	}
	return c.IsA2A()
}

// vendorCode is the code of an error the A2A specification does not name:
// PARLEY_ and its name in upper snake case without "Error"
// (RateLimitedError → PARLEY_RATE_LIMITED), outside the A2ACLI_ERR_
// namespace as SPEC §11.4 asks of vendor codes.
func vendorCode(c a2a.Code) string {
	var b strings.Builder
	b.WriteString("PARLEY")
	for _, r := range strings.TrimSuffix(c.Name(), "Error") {
		if unicode.IsUpper(r) {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToUpper(r))
	}
	return b.String()
}

// debugHint points at the command's wire log for an error the agent
// returned (A2A CLI SPEC §8.1).
const debugHint = "run it again with --debug to see the exchange"

// authFailure is the failure of a call the agent refused for want of
// credentials: missing when the command sent none, refused when it did.
// A2A names no error for it (the binding's own status says it: HTTP 401,
// gRPC UNAUTHENTICATED, spec §3.3.2), so its a2aCode is the HTTP status,
// 401 or 403.
func (e *env) authFailure(a2aCode int) failure {
	if e.c == nil || !e.c.hasCredentials() {
		return failure{code: errCredentialsMissing, exit: ExitAuth, a2aCode: a2aCode, hint: "give a credential: --bearer TOKEN (or $A2ACLI_BEARER), or --api-key KEY"}
	}
	return failure{code: errAuthFailed, exit: ExitAuth, a2aCode: a2aCode, hint: "the agent refused the credential given: check it, and the card's security schemes (parley card get)"}
}

// helpHint names the command's help.
func (e *env) helpHint() string {
	if e.name == "" {
		return ""
	}
	return "parley " + e.name + " -h"
}

// outcome reports the state a command leaves a task in, when it is not
// success: a warning on stderr naming it (A2A CLI SPEC §6.6, §11.6). The
// command still exits 0: it did its job, and the state is in its output.
// An INPUT_REQUIRED warning names the command that replies (SPEC §8.2).
func (e *env) outcome(url, id string, st a2a.TaskState) {
	switch {
	case st == a2a.TaskState_TASK_STATE_COMPLETED:
	case a2a.IsTerminal(st):
		fmt.Fprintf(e.stderr, "parley %s: warning: task %s ended %s\n", e.name, id, stateName(st))
	case st == a2a.TaskState_TASK_STATE_INPUT_REQUIRED:
		fmt.Fprintf(e.stderr, "parley %s: warning: task %s stopped INPUT_REQUIRED; reply with: parley send -a %s --task-id %s TEXT\n", e.name, id, url, id)
	case a2a.IsInterrupted(st):
		fmt.Fprintf(e.stderr, "parley %s: warning: task %s stopped %s; once authorized: parley task get -a %s --wait %s\n", e.name, id, stateName(st), url, id)
	}
}

// codeError carries an explicit exit code.
type codeError struct {
	error
	code int
}

// Unwrap returns the error the code was given to.
func (e codeError) Unwrap() error { return e.error }

// env is what a client command works with: its name (with the
// subcommand), its streams, its common flags and its output.
type env struct {
	name           string
	stdout, stderr io.Writer
	c              *common
	out            *output
}

// reportError prints err: one line on stderr, and with -o json the error
// envelope on stdout (A2A CLI SPEC Appendix B).
func (e *env) reportError(err error, f failure) {
	msg := err.Error()
	var te *client.TransportError
	var se *client.StreamEndedError
	var ce *client.CardError
	switch {
	case errors.As(err, &se):
		msg = "" // showStream printed it, with advice
	case errors.Is(err, context.DeadlineExceeded) && e.c != nil:
		msg = fmt.Sprintf("timed out after %v (--timeout): %v", e.c.timeout, err)
	case e.c != nil && e.c.tlsHint(err) != "":
		msg += "\n  " + e.c.tlsHint(err)
	case errors.As(err, &te) && notTLS(te.Err):
		msg = fmt.Sprintf("cannot connect to %s: the server there does not speak TLS (use an http:// URL)", te.URL)
	case errors.As(err, &te) && te.Phase == client.PhaseConnect:
		msg = connectFailure(te)
	case errors.As(err, &ce) && ce.StatusCode == http.StatusNotFound:
		msg += " (no agent card there: is it an A2A agent's base URL?)"
	}
	if msg != "" {
		fmt.Fprintf(e.stderr, "parley %s: %s\n", e.name, msg)
	}
	if f.hint == debugHint && e.c != nil && !e.c.debug {
		fmt.Fprintf(e.stderr, "  %s\n", debugHint) // the agent's error: where to see the exchange (SPEC §8.1)
	}
	if e.c != nil && e.c.json {
		fmt.Fprintln(e.stdout, errorJSON(err, f))
	}
}

// errorJSON renders the error envelope of A2A CLI SPEC Appendix B:
// {"error":{"code","message","hint","a2aCode"}}, hint and a2aCode null
// when there are none.
func errorJSON(err error, f failure) string {
	msg := err.Error()
	var ae *a2a.Error
	if errors.As(err, &ae) {
		msg = ae.WireMessage()
	}
	env := struct {
		Error struct {
			Code    string  `json:"code"`
			Message string  `json:"message"`
			Hint    *string `json:"hint"`
			A2ACode *int    `json:"a2aCode"`
		} `json:"error"`
	}{}
	env.Error.Code, env.Error.Message = f.code, msg
	if f.hint != "" {
		env.Error.Hint = &f.hint
	}
	if f.a2aCode != 0 {
		env.Error.A2ACode = &f.a2aCode
	}
	b, _ := json.Marshal(env)
	return string(b)
}

// connectFailure says in one line that the agent at te.URL could not be
// reached, with the innermost cause (the system's words for it, without
// the layers that repeat the URL) and what to look at.
func connectFailure(te *client.TransportError) string {
	var (
		sys *os.SyscallError
		dns *net.DNSError
	)
	why := te.Err.Error()
	switch {
	case errors.As(te.Err, &dns):
		why = "no such host " + dns.Name
		if !dns.IsNotFound {
			why = dns.Error()
		}
	case errors.As(te.Err, &sys):
		why = sys.Err.Error()
	}
	return fmt.Sprintf("cannot connect to %s: %s (is the agent running, and is the URL right?)", te.URL, why)
}

// notTLS reports whether err says an https:// URL reached a server that
// answered in cleartext: a TLS record that is not one, or net/http's own
// words for an HTTP answer to the handshake.
func notTLS(err error) bool {
	var rec tls.RecordHeaderError
	return errors.As(err, &rec) || strings.Contains(err.Error(), "server gave HTTP response to HTTPS client")
}
