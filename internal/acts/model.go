package acts

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// SuiteFile is the file a folder given to Load must hold.
const SuiteFile = "suite.acts.yaml"

// maxIncludeDepth bounds nested includes (a cycle is refused earlier).
const maxIncludeDepth = 16

// Document is one ACTS file (ACTS §2) with its includes resolved: Suites
// holds its own suites and those of the files it includes, in order.
type Document struct {
	ACTSVersion string            `yaml:"acts_version"`
	SpecVersion string            `yaml:"spec_version"`
	SpecRef     string            `yaml:"spec_ref"`
	Metadata    map[string]any    `yaml:"metadata"`
	Variables   map[string]string `yaml:"variables"`
	Include     []string          `yaml:"include"`
	Suites      []*Suite          `yaml:"suites"`
}

// Suite is a named group of tests (ACTS §3.1).
type Suite struct {
	ID          string   `yaml:"id"`
	Name        string   `yaml:"name"`
	Description string   `yaml:"description"`
	Tags        []string `yaml:"tags"`
	Tests       []*Test  `yaml:"tests"`

	// vars are the variables of the document that defined the suite,
	// over those of the documents that include it.
	vars map[string]string
}

// Test is one scenario (ACTS §3.2).
type Test struct {
	ID                 string           `yaml:"id"`
	Name               string           `yaml:"name"`
	Description        string           `yaml:"description"`
	SpecRef            string           `yaml:"spec_ref"`
	Level              string           `yaml:"level"`
	Tags               []string         `yaml:"tags"`
	Transport          []string         `yaml:"transport"`
	Preconditions      *Preconditions   `yaml:"preconditions"`
	RequiresBehaviors  []string         `yaml:"requires_behaviors"`
	Origin             string           `yaml:"origin"`
	RunnerRequirements []string         `yaml:"runner_requirements"`
	Steps              []*Step          `yaml:"steps"`
	Assertions         []NamedAssertion `yaml:"assertions"`
}

// Preconditions say what the agent must advertise for a test to apply
// (ACTS §3.3); a test whose preconditions fail is skipped.
type Preconditions struct {
	Capabilities map[string]any      `yaml:"capabilities"`
	Skills       []map[string]string `yaml:"skills"`
	Transport    []string            `yaml:"transport"`
	Extensions   []string            `yaml:"extensions"`
	Description  string              `yaml:"description"`
}

// Step is one action of a test (ACTS §4): an operation, a raw request, a
// client payload to parse, or an assertion over earlier steps.
type Step struct {
	ID          string `yaml:"id"`
	Description string `yaml:"description"`

	Operation    string            `yaml:"operation"`
	Params       map[string]any    `yaml:"params"`
	Raw          *RawRequest       `yaml:"raw"`
	Expect       *Expect           `yaml:"expect"`
	ExpectError  map[string]any    `yaml:"expect_error"`
	ExpectStream *ExpectStream     `yaml:"expect_stream"`
	Capture      map[string]string `yaml:"capture"`
	Assertions   []NamedAssertion  `yaml:"assertions"`
	Repeat       *Repeat           `yaml:"repeat"`
	DelayMS      int               `yaml:"delay_ms"`

	ClientResponse *ClientResponse `yaml:"client_response"`
	ExpectParsed   any             `yaml:"expect_parsed"`

	Assertion *NamedAssertion `yaml:"assertion"`
}

// RawRequest is a raw wire step's request (ACTS §4.4). Path is relative
// to the URL of the interface under test.
type RawRequest struct {
	Method  string            `yaml:"method"`
	Path    string            `yaml:"path"`
	Headers map[string]string `yaml:"headers"`
	Body    any               `yaml:"body"`
	BodyRaw *string           `yaml:"body_raw"`
	// Anonymous, set by the runner, sends the request without the run's
	// credentials (the tests whose precondition is authentication).
	Anonymous bool `yaml:"-"`
}

// Expect asserts a response (ACTS §6.1): its HTTP status and its body
// (the A2A object of §4.2, or a raw step's body).
//
// The draft's grammar puts the body's assertions under body, but its own
// examples (§5.2) and most of its suite write them beside status
// (expect: {task: …}): members other than status and body are read as
// members of body. The suite also writes status: error with an error
// member for an operation that must fail (see Expect.WantsError).
type Expect struct {
	Status any `yaml:"status"`
	Body   any `yaml:"body"`
}

// UnmarshalYAML reads an expect block, members beside status and body
// joining body.
func (e *Expect) UnmarshalYAML(n *yaml.Node) error {
	var m map[string]any
	if err := n.Decode(&m); err != nil {
		return err
	}
	e.Status, e.Body = m["status"], m["body"]
	delete(m, "status")
	delete(m, "body")
	if len(m) == 0 {
		return nil
	}
	if e.Body == nil {
		e.Body = m
		return nil
	}
	body, ok := e.Body.(map[string]any)
	if !ok {
		return fmt.Errorf("expect: members beside body (%s) need body to be a map", strings.Join(slices.Sorted(maps.Keys(m)), ", "))
	}
	for k, v := range m {
		if _, dup := body[k]; dup {
			return fmt.Errorf("expect: %s is both in body and beside it", k)
		}
		body[k] = v
	}
	return nil
}

// WantsError reports whether the block expects the operation to fail: its
// status is the word error, or its body asserts an error member (an
// abstract operation's result has none; its error has).
func (e *Expect) WantsError() bool {
	if s, ok := e.Status.(string); ok && s == "error" {
		return true
	}
	b, ok := e.Body.(map[string]any)
	_, has := b["error"]
	return ok && has
}

// ExpectStream asserts a stream's events (ACTS §7).
type ExpectStream struct {
	MinCount   *int             `yaml:"min_count"`
	MaxCount   *int             `yaml:"max_count"`
	TimeoutMS  int              `yaml:"timeout_ms"`
	Ordering   string           `yaml:"ordering"`
	Events     []map[string]any `yaml:"events"`
	FinalEvent any              `yaml:"final_event"`
	EachEvent  any              `yaml:"each_event"`
}

// Repeat re-runs a step until a condition holds (ACTS §9).
type Repeat struct {
	Until       string `yaml:"until"`
	MaxAttempts int    `yaml:"max_attempts"`
	DelayMS     *int   `yaml:"delay_ms"`
	Backoff     string `yaml:"backoff"`
}

// ClientResponse is a canonical wire payload for the client to parse
// (ACTS §10).
type ClientResponse struct {
	Operation   string `yaml:"operation"`
	WirePayload any    `yaml:"wire_payload"`
}

// NamedAssertion is an assertion over a prior step's result (ACTS §5.5).
type NamedAssertion struct {
	ID          string           `yaml:"id"`
	Description string           `yaml:"description"`
	Source      string           `yaml:"source"`
	Path        string           `yaml:"path"`
	Match       any              `yaml:"match"`
	Any         *CollectionMatch `yaml:"any"`
	All         *CollectionMatch `yaml:"all"`
	None        *CollectionMatch `yaml:"none"`
}

// CollectionMatch applies an assertion to the elements a wildcard path
// selects.
type CollectionMatch struct {
	Path  string `yaml:"path"`
	Match any    `yaml:"match"`
}

// Load reads an ACTS file, or a folder holding suite.acts.yaml, with the
// files it includes (paths relative to the including file). It checks
// the structure (ACTS §12.1) and refuses a major acts_version other than
// 1 (§17).
func Load(path string) (*Document, error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		path = filepath.Join(path, SuiteFile)
	}
	return load(path, nil, map[string]bool{}, 0)
}

func load(path string, inherited map[string]string, open map[string]bool, depth int) (*Document, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	if open[abs] || depth > maxIncludeDepth {
		return nil, fmt.Errorf("%s: include cycle", path)
	}
	open[abs] = true
	defer delete(open, abs)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	d, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	vars := map[string]string{}
	for k, v := range inherited {
		vars[k] = v
	}
	for k, v := range d.Variables {
		vars[k] = v
	}
	for _, s := range d.Suites {
		s.vars = vars
	}
	for _, inc := range d.Include {
		p := inc
		if !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(path), p)
		}
		sub, err := load(p, vars, open, depth+1)
		if err != nil {
			return nil, err
		}
		d.Suites = append(d.Suites, sub.Suites...)
	}
	return d, nil
}

// Parse reads one ACTS document (YAML 1.2, or JSON) without resolving
// its includes, and checks its structure.
func Parse(b []byte) (*Document, error) {
	var d Document
	if err := yaml.Unmarshal(b, &d); err != nil {
		return nil, err
	}
	for _, s := range d.Suites {
		s.vars = d.Variables
	}
	return &d, d.validate()
}

// validate checks what ACTS requires of a document's structure.
func (d *Document) validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	major, _, _ := strings.Cut(strings.TrimSpace(d.ACTSVersion), ".")
	switch {
	case d.ACTSVersion == "":
		bad("acts_version is missing")
	case major != "1" && major != "0":
		bad("acts_version %q: this runner reads ACTS 1.x", d.ACTSVersion)
	}
	if d.SpecVersion == "" {
		bad("spec_version is missing")
	}
	if len(d.Suites) == 0 && len(d.Include) == 0 {
		bad("neither suites nor include")
	}
	ids := map[string]bool{}
	for _, s := range d.Suites {
		if s.ID == "" || len(s.Tests) == 0 {
			bad("suite %q: an id and tests are required", s.ID)
		}
		for _, t := range s.Tests {
			if err := t.validate(); err != nil {
				bad("suite %s: %v", s.ID, err)
			}
			if ids[t.ID] {
				bad("test %s: id used twice", t.ID)
			}
			ids[t.ID] = true
		}
	}
	return errors.Join(errs...)
}

func (t *Test) validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("test %q: "+format, append([]any{t.ID}, args...)...))
	}
	if t.ID == "" || t.Name == "" {
		bad("an id and a name are required")
	}
	switch t.Level {
	case "must", "should", "may":
	default:
		bad("level %q is none of must, should, may", t.Level)
	}
	for _, b := range append(append([]string(nil), t.Transport...), t.preTransport()...) {
		if !knownBinding(b) {
			bad("transport %q is none of jsonrpc, grpc, rest", b)
		}
	}
	if len(t.Steps) == 0 {
		bad("no steps")
	}
	ids := map[string]bool{}
	onlyRaw := true
	for _, s := range t.Steps {
		if s.ID == "" || ids[s.ID] {
			bad("step %q: a step needs an id unique in its test", s.ID)
		}
		ids[s.ID] = true
		kinds := 0
		for _, k := range []bool{s.Operation != "", s.Raw != nil, s.ClientResponse != nil, s.Assertion != nil} {
			if k {
				kinds++
			}
		}
		if kinds != 1 {
			bad("step %s: exactly one of operation, raw, client_response, assertion", s.ID)
		}
		if s.Operation != "" {
			onlyRaw = false
			if _, ok := operations[s.Operation]; !ok {
				bad("step %s: unknown operation %q", s.ID, s.Operation)
			}
		}
		if s.ClientResponse != nil {
			onlyRaw = false
			if _, ok := operations[s.ClientResponse.Operation]; !ok {
				bad("step %s: unknown operation %q", s.ID, s.ClientResponse.Operation)
			}
		}
		if s.Expect != nil && s.ExpectError != nil {
			bad("step %s: expect and expect_error are exclusive", s.ID)
		}
		if s.Repeat != nil {
			if _, err := parseUntil(s.Repeat.Until); err != nil {
				bad("step %s: %v", s.ID, err)
			}
		}
	}
	if onlyRaw && len(t.Transport) == 0 {
		bad("only raw steps and no transport filter (ACTS §4.4)")
	}
	return errors.Join(errs...)
}

func (t *Test) preTransport() []string {
	if t.Preconditions == nil {
		return nil
	}
	return t.Preconditions.Transport
}

// The ACTS names of the bindings.
const (
	JSONRPC = "jsonrpc"
	GRPC    = "grpc"
	REST    = "rest"
)

func knownBinding(b string) bool { return b == JSONRPC || b == GRPC || b == REST }
