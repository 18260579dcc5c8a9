package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
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
agent cannot be reached, 0 otherwise.

--acts PATH runs ACTS tests instead (the A2A Conformance Test
Specification, draft 0.1.0: an .acts.yaml file, or a folder holding
suite.acts.yaml), on every binding, and prints a few lines per binding;
--acts-report DIR writes each binding's JSON report there (ACTS §13),
--json prints them. The exit status is 1 when a must-level test failed.
See docs/acts.md.`

// checkCmd runs `parley check URL`: grade an A2A server.
func checkCmd(ctx context.Context, e *env, args []string) error {
	fs, c := e.newFlags(checkSynopsis, false)
	token2 := fs.String("token2", "", "a second principal's bearer `TOKEN`, for the task scoping checks (B12)")
	token2File := fs.String("token2-file", "", "like --token2, with the token read from `FILE`")
	insufficient := fs.String("insufficient-token", "", "a bearer `TOKEN` the agent accepts but that lacks the rights to send messages and to read the extended card (ACTS's insufficientAuthToken; parley serve: --auth-token NAME=TOKEN:tasks:read)")
	insufficientFile := fs.String("insufficient-token-file", "", "like --insufficient-token, with the token read from `FILE`")
	webhookAddr := fs.String("webhook-addr", "", "listen on `HOST:PORT` for push notifications during the push delivery checks (B3)")
	contract := fs.String("contract", "", "the behaviour contract the agent speaks, which the behaviour checks drive it through: conformance (Parley's conformance agent), acts (ACTS's tck-* prefixes) or none (default: detected)")
	verbose := fs.Bool("verbose", false, "show every check with what was sent, what came back and the requirement")
	brief := fs.Bool("brief", false, "print only the verdict line (the verdict and the counts)")
	actsPath := fs.String("acts", "", "run the ACTS tests at `PATH` (a .acts.yaml file, or a folder with suite.acts.yaml) instead of the checks")
	actsReport := fs.String("acts-report", "", "with --acts: write each binding's JSON report into `DIR`")
	var actsVars multiFlag
	fs.Var(&actsVars, "acts-var", "with --acts: a runner-provided ACTS variable, `NAME=VALUE` (e.g. insufficientAuthToken=T); repeatable")
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
	if *insufficient, err = valueOrFile("insufficient-token", *insufficient, *insufficientFile, c.warn); err != nil {
		return err
	}
	opts := []conformance.Option{
		conformance.WithToken(c.token), conformance.WithSecondToken(*token2), conformance.WithWebhookAddr(*webhookAddr),
		conformance.WithInsufficientToken(*insufficient),
		conformance.WithContract(*contract),
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

	if *actsPath != "" {
		for _, kv := range actsVars {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				return usageError{fmt.Errorf("--acts-var %q: want NAME=VALUE", kv)}
			}
			opts = append(opts, conformance.WithACTSVariable(k, v))
		}
		return e.runACTS(ctx, pos[0], *actsPath, *actsReport, c.json, opts)
	}
	if *actsReport != "" || len(actsVars) > 0 {
		return usageError{errors.New("--acts-report and --acts-var go with --acts")}
	}
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

// runACTS runs `parley check URL --acts PATH`.
func (e *env) runACTS(ctx context.Context, url, path, reportDir string, asJSON bool, opts []conformance.Option) error {
	reps, err := conformance.RunACTS(ctx, url, path, opts...)
	if err != nil {
		var ue *conformance.UnreachableError
		if errors.As(err, &ue) || errors.Is(err, context.DeadlineExceeded) {
			return codeError{err, ExitTransport}
		}
		return err
	}
	conformant := true
	var docs []json.RawMessage
	for _, r := range reps {
		conformant = conformant && r.Conformant()
		if reportDir != "" {
			f, err := os.Create(filepath.Join(reportDir, r.FileName()))
			if err != nil {
				return err
			}
			err = r.WriteJSON(f)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		}
		if asJSON {
			var b bytes.Buffer
			err = r.WriteJSON(&b)
			docs = append(docs, b.Bytes())
		} else {
			err = r.WriteSummary(e.stdout)
		}
		if err != nil {
			return err
		}
	}
	if asJSON {
		// One array of the reports, one per binding.
		b, err := json.MarshalIndent(docs, "", "  ")
		if err != nil {
			return err
		}
		if _, err := e.stdout.Write(append(b, '\n')); err != nil {
			return err
		}
	}
	if !conformant {
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
