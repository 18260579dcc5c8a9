package cli

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
)

// Exit codes of the client commands (card, send, task, push, check), in
// addition to ExitOK, ExitError and ExitUsage.
const (
	ExitTransport = 3 // the agent could not be reached, or the connection broke
	ExitA2A       = 4 // the agent answered with an A2A (or JSON-RPC) error
	// ExitTaskFailed: the task ended FAILED, REJECTED or CANCELED, the
	// terminal states other than COMPLETED (spec §4.1.3).
	ExitTaskFailed = 5
	// ExitTaskPaused: the task stopped INPUT_REQUIRED or AUTH_REQUIRED,
	// the interrupted states (spec §4.1.3). The command returns; the task
	// waits at the agent for a follow-up message.
	ExitTaskPaused = 6
	// ExitInterrupted: the user interrupted the command (Ctrl-C); a task
	// it was following goes on at the agent. 128+SIGINT, as shells report.
	ExitInterrupted = 130
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

// stateExit is the exit code of a command that leaves a task in state st,
// the one rule every client command applies: ExitTaskFailed for FAILED,
// REJECTED and CANCELED, ExitTaskPaused for INPUT_REQUIRED and
// AUTH_REQUIRED, ExitOK otherwise (COMPLETED; no task at all, as when the
// agent replied with a message; a task still SUBMITTED or WORKING, which a
// command shows only when it was asked not to wait).
func stateExit(st a2a.TaskState) int {
	switch {
	case st == a2a.TaskState_TASK_STATE_COMPLETED:
		return ExitOK
	case a2a.IsTerminal(st):
		return ExitTaskFailed
	case a2a.IsInterrupted(st):
		return ExitTaskPaused
	}
	return ExitOK
}

// stateResult is the error a command returns after it has shown a task
// it leaves in state st: nil when stateExit is ExitOK, else an error that
// carries the code and prints nothing more (the task, shown, says why).
func stateResult(st a2a.TaskState) error {
	if code := stateExit(st); code != ExitOK {
		return codeError{errReported, code}
	}
	return nil
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

// reportError prints err: one line on stderr, and with --json an error
// object on stdout.
func (e *env) reportError(err error, code int) {
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
