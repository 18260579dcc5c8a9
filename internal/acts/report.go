package acts

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"time"
)

// The results of a test or step (ACTS §13.3).
const (
	Pass  = "pass"
	Fail  = "fail"
	Skip  = "skip"
	Error = "error"
)

// SDKInfo names the implementation under test (ACTS §13.1).
type SDKInfo struct {
	Name       string `json:"name"`
	Version    string `json:"version"`
	Language   string `json:"language"`
	Repository string `json:"repository,omitempty"`
}

// Report is the JSON report of one binding (ACTS §13.1).
type Report struct {
	ACTSVersion string            `json:"acts_version"`
	SpecVersion string            `json:"spec_version"`
	GeneratedAt string            `json:"generated_at"`
	SDK         SDKInfo           `json:"sdk"`
	Transport   string            `json:"transport"`
	Environment map[string]string `json:"environment,omitempty"`
	Summary     Summary           `json:"summary"`
	Suites      []SuiteResult     `json:"suites"`
}

// Summary counts the results (ACTS §13.2).
type Summary struct {
	LevelSummary
	DurationMS int64                   `json:"duration_ms"`
	ByLevel    map[string]LevelSummary `json:"by_level"`
}

// LevelSummary counts the results of one level.
type LevelSummary struct {
	Total   int `json:"total"`
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Skipped int `json:"skipped"`
	Errors  int `json:"errors"`
}

// SuiteResult holds a suite's tests (ACTS §13.3).
type SuiteResult struct {
	ID    string        `json:"id"`
	Name  string        `json:"name"`
	Tests []*TestResult `json:"tests"`
}

// TestResult is one test's result (ACTS §13.3). Notes, Parley's
// addition, say where the runner followed the A2A specification rather
// than the draft.
type TestResult struct {
	ID         string       `json:"id"`
	Name       string       `json:"name"`
	Level      string       `json:"level"`
	Result     string       `json:"result"`
	DurationMS int64        `json:"duration_ms"`
	SkipReason string       `json:"skip_reason,omitempty"`
	Failure    *Failure     `json:"failure,omitempty"`
	Notes      []string     `json:"notes,omitempty"`
	Steps      []StepResult `json:"steps,omitempty"`
}

// StepResult is one step's result.
type StepResult struct {
	ID         string   `json:"id"`
	Result     string   `json:"result"`
	DurationMS int64    `json:"duration_ms"`
	Failure    *Failure `json:"failure,omitempty"`
	Notes      []string `json:"notes,omitempty"`
}

func newReport(doc *Document, sdk SDKInfo, binding string) *Report {
	return &Report{ACTSVersion: doc.ACTSVersion, SpecVersion: doc.SpecVersion, SDK: sdk, Transport: binding,
		GeneratedAt: time.Now().UTC().Format(time.RFC3339),
		Environment: map[string]string{"runner": "parley check --acts", "os": runtime.GOOS + "/" + runtime.GOARCH, "runtime": runtime.Version()}}
}

// finish counts the results.
func (r *Report) finish(d time.Duration) {
	r.Summary.DurationMS = d.Milliseconds()
	r.Summary.ByLevel = map[string]LevelSummary{}
	for _, lvl := range []string{"must", "should", "may"} {
		r.Summary.ByLevel[lvl] = LevelSummary{}
	}
	for _, s := range r.Suites {
		for _, t := range s.Tests {
			l := r.Summary.ByLevel[t.Level]
			l.add(t.Result)
			r.Summary.ByLevel[t.Level] = l
			r.Summary.add(t.Result)
		}
	}
}

func (l *LevelSummary) add(result string) {
	l.Total++
	switch result {
	case Pass:
		l.Passed++
	case Fail:
		l.Failed++
	case Skip:
		l.Skipped++
	default:
		l.Errors++
	}
}

// FileName is the report's name after ACTS §13.5:
// acts-report-{sdk}-{transport}-{timestamp}.json.
func (r *Report) FileName() string {
	ts := strings.NewReplacer("-", "", ":", "").Replace(r.GeneratedAt)
	return fmt.Sprintf("acts-report-%s-%s-%s.json", slug(r.SDK.Name), r.Transport, ts)
}

var unsafeRE = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

func slug(s string) string {
	s = strings.Trim(unsafeRE.ReplaceAllString(strings.TrimSpace(s), "-"), "-")
	if s == "" {
		return "sut"
	}
	return s
}

// Write writes the report into dir under FileName and returns its path.
func (r *Report) Write(dir string) (string, error) {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, r.FileName())
	return p, os.WriteFile(p, append(b, '\n'), 0o644)
}

// Summarize writes the few lines of ACTS §12.7 for a report, and the
// failed tests.
func (r *Report) Summarize(w io.Writer) {
	fmt.Fprintf(w, "ACTS on %s: %d tests, %d passed, %d failed, %d skipped, %d errors (%d ms)\n", r.Transport,
		r.Summary.Total, r.Summary.Passed, r.Summary.Failed, r.Summary.Skipped, r.Summary.Errors, r.Summary.DurationMS)
	for _, lvl := range []string{"must", "should", "may"} {
		l := r.Summary.ByLevel[lvl]
		fmt.Fprintf(w, "  %-7s %d/%d passed (%d failed, %d skipped, %d errors)\n", strings.ToUpper(lvl)+":", l.Passed, l.Total, l.Failed, l.Skipped, l.Errors)
	}
	for _, s := range r.Suites {
		for _, t := range s.Tests {
			if t.Result == Fail || t.Result == Error {
				msg := ""
				if t.Failure != nil {
					msg = t.Failure.Error()
					if t.Failure.StepID != "" {
						msg = "step " + t.Failure.StepID + ": " + msg
					}
				}
				fmt.Fprintf(w, "  %s %s [%s]: %s\n", strings.ToUpper(t.Result), t.ID, t.Level, msg)
			}
		}
	}
}
