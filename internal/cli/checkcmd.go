package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"parley.dev/parley/conformance"
)

const checkSynopsis = `check URL [flags]

Grades the A2A server at URL against the A2A v1.0 specification, binding by
binding (every interface of its card that this build speaks). Each check
gets a verdict: FAIL (a MUST failed), WARN (a SHOULD not met), PASS, N/A
(no requirement applies; the observed behaviour is reported) or SKIP (not
run, with the reason).

By default the report shows what needs attention, in at most 60 lines:
each FAIL and WARN with its spec section and one line of why, one line
per reason checks were skipped, and last the verdict line with the counts.
--verbose shows every check: what was sent, what came back, what the spec
requires (with its § in the project's fact brief), and "Parley:" notes
comparing with Parley's own choices where the SDKs split (B1-B14, listed
in docs/decisions.md; they are not requirements). --brief prints the
verdict line alone; --json the whole report as JSON.

Checks that need a known agent behaviour run when the target serves
Parley's conformance agent (parley serve --agent conformance); the others
run against any agent. The exit status is 1 when a MUST failed, 3 when the
agent cannot be reached, 0 otherwise.`

// checkCmd runs `parley check URL`: grade an A2A server.
func checkCmd(ctx context.Context, e *env, args []string) error {
	fs, c := e.newFlags(checkSynopsis, false)
	token2 := fs.String("token2", "", "a second principal's bearer `TOKEN`, for the task scoping checks (B12)")
	token2File := fs.String("token2-file", "", "like --token2, with the token read from `FILE`")
	webhookAddr := fs.String("webhook-addr", "", "listen on `HOST:PORT` for push notifications during the push delivery checks (B3)")
	verbose := fs.Bool("verbose", false, "show every check with what was sent, what came back and the requirement")
	brief := fs.Bool("brief", false, "print only the verdict line (the verdict and the counts)")
	pos, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if err := wantArgs(pos, 1, 1, "the agent URL"); err != nil {
		return err
	}
	if *verbose && *brief {
		return usageError{errors.New("--verbose and --brief: give one of them")}
	}
	if err := checkAgentURL(pos[0]); err != nil {
		return err
	}
	if *token2, err = valueOrFile("token2", *token2, *token2File, c.warn); err != nil {
		return err
	}
	opts := []conformance.Option{
		conformance.WithToken(c.token), conformance.WithSecondToken(*token2), conformance.WithWebhookAddr(*webhookAddr),
		// With --ca-cert or a client certificate; nil (the default) without.
		conformance.WithHTTPClient(c.checkHTTPClient()),
	}
	for k, vs := range c.header() {
		for _, v := range vs {
			opts = append(opts, conformance.WithHeader(k, v))
		}
	}
	if b, _ := bindingOf(c.binding); b != "" { // e.parse has checked it
		opts = append(opts, conformance.WithBindings(b))
	}
	ctx, cancel := c.context(ctx, 0)
	defer cancel()

	if !c.json {
		opts = append(opts, conformance.WithProgress(e.showCheckProgress(pos[0])))
	}
	rep, err := conformance.Run(ctx, pos[0], opts...)
	e.out.stopLiveLine()
	if err != nil {
		var ue *conformance.UnreachableError
		if errors.As(err, &ue) || errors.Is(err, context.DeadlineExceeded) {
			return codeError{err, ExitTransport}
		}
		return err
	}
	if c.json {
		err = rep.WriteJSON(e.stdout)
	} else {
		mode := conformance.Short
		switch {
		case *verbose:
			mode = conformance.Full
		case *brief:
			mode = conformance.VerdictOnly
		}
		err = rep.WriteText(e.stdout, conformance.TextOptions{Color: e.out.color, Mode: mode})
	}
	if err != nil {
		return err
	}
	if rep.Verdict() == conformance.Fail {
		return codeError{errReported, ExitError}
	}
	return nil
}

// showCheckProgress starts a live line that counts the results of the
// checks of url as they come, and returns the function conformance.Run
// reports each result to.
func (e *env) showCheckProgress(url string) func(conformance.Result) {
	var (
		mu    sync.Mutex
		n     int
		last  string
		frame int
	)
	e.out.startLive(func() string {
		mu.Lock()
		defer mu.Unlock()
		frame++
		return fmt.Sprintf("%c checking %s · %d results · %s", spinner[frame%len(spinner)], url, n, last)
	})
	return func(r conformance.Result) {
		mu.Lock()
		n++
		last = strings.TrimSpace(r.Binding + " " + r.ID)
		mu.Unlock()
	}
}
