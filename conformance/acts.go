package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"io"

	"parley.dev/parley/client"
	"parley.dev/parley/internal/acts"
	"parley.dev/parley/internal/check"
)

// WithACTSVariable gives an ACTS variable the runner provides (ACTS §8).
// It overrides a document's variable of the same name; webhookUrl,
// otherUserTaskId and insufficientAuthToken are provided without it when
// WithWebhookAddr, WithSecondToken and WithInsufficientToken are given.
func WithACTSVariable(name, value string) Option {
	return optionFunc(func(o *check.Options) {
		if o.Vars == nil {
			o.Vars = map[string]string{}
		}
		o.Vars[name] = value
	})
}

// ACTSReport is the result of an ACTS run on one binding: the JSON report
// of ACTS §13.
type ACTSReport struct{ rep *acts.Report }

// RunACTS runs the ACTS tests at path (an .acts.yaml file, or a folder
// holding suite.acts.yaml) against the agent at url, on every interface
// its card declares (WithBindings selects them), and returns one report
// per binding. The options are Run's; WithProgress is not used. Where the
// ACTS draft contradicts the A2A specification, the runner follows the
// specification and the report's notes say so. The error is that of Run,
// or one for a document that does not load.
func RunACTS(ctx context.Context, url, path string, opts ...Option) ([]*ACTSReport, error) {
	doc, err := acts.Load(path)
	if err != nil {
		return nil, err
	}
	o := check.Options{URL: url}
	for _, opt := range opts {
		opt.apply(&o)
	}
	reps, err := check.RunACTS(ctx, o, doc, o.Vars)
	if err != nil {
		if ue, ok := errors.AsType[*check.UnreachableError](err); ok {
			u, _ := client.CardURL(url)
			return nil, &UnreachableError{URL: u, Err: ue.Err}
		}
		return nil, err
	}
	out := make([]*ACTSReport, len(reps))
	for i, r := range reps {
		out[i] = &ACTSReport{rep: r}
	}
	return out, nil
}

// Binding is the binding the report is about: jsonrpc, grpc or rest.
func (r *ACTSReport) Binding() string { return r.rep.Transport }

// FileName is the report's file name after ACTS §13.5.
func (r *ACTSReport) FileName() string { return r.rep.FileName() }

// Conformant reports whether every must-level test passed or was skipped
// (ACTS §12.7).
func (r *ACTSReport) Conformant() bool {
	l := r.rep.Summary.ByLevel["must"]
	return l.Failed == 0 && l.Errors == 0
}

// WriteJSON writes the report (ACTS §13).
func (r *ACTSReport) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r.rep)
}

// WriteSummary writes the report's few lines: the counts by level (ACTS
// §12.7) and each failed test.
func (r *ACTSReport) WriteSummary(w io.Writer) error {
	cw := &countingWriter{w: w}
	r.rep.Summarize(cw)
	return cw.err
}

type countingWriter struct {
	w   io.Writer
	err error
}

func (c *countingWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	c.err = err
	return n, err
}
