package acts

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"parley.dev/parley/a2a"
)

// Options configure Run.
type Options struct {
	// Drivers are the bindings to run the tests on, one report each.
	Drivers []Driver
	// SDK describes the implementation under test, for the reports.
	SDK SDKInfo
	// Vars are the runner-provided variables (webhookUrl,
	// insufficientAuthToken, otherUserTaskId, …). They take precedence
	// over a document's variables of the same name, which only hold
	// placeholders for them.
	Vars map[string]string
	// Credentials reports that the runner sends credentials (the
	// auth_credentials runner requirement, the authentication
	// precondition).
	Credentials bool
	// Progress, when set, is told of each test as it ends.
	Progress func(binding string, r *TestResult)
}

// Run runs every test of the document on every driver (at once, one
// goroutine per binding) and returns one report per binding, in the order
// of the drivers.
func Run(ctx context.Context, doc *Document, opts Options) []*Report {
	reps := make([]*Report, len(opts.Drivers))
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i, d := range opts.Drivers {
		wg.Go(func() {
			b := &bindingRun{doc: doc, opts: opts, d: d}
			b.progress = func(r *TestResult) {
				if opts.Progress != nil {
					mu.Lock()
					opts.Progress(d.Binding(), r)
					mu.Unlock()
				}
			}
			reps[i] = b.run(ctx)
		})
	}
	wg.Wait()
	return reps
}

// bindingRun runs the document on one binding.
type bindingRun struct {
	doc     *Document
	opts    Options
	d       Driver
	card    any    // the public card, in the JSON model (nil: none)
	cardErr string // why there is none
	// anonymousRaw: the current test's raw steps go without credentials.
	anonymousRaw bool
	progress     func(*TestResult)
}

func (b *bindingRun) run(ctx context.Context) *Report {
	start := time.Now()
	rep := newReport(b.doc, b.opts.SDK, b.d.Binding())
	if o := b.d.Card(ctx); o.Failure != "" || o.Err != nil || o.Body == nil {
		b.cardErr = "the agent card could not be read"
		if o.Failure != "" {
			b.cardErr += ": " + o.Failure
		}
	} else {
		b.card = o.Body
	}
	for _, s := range b.doc.Suites {
		sr := SuiteResult{ID: s.ID, Name: s.Name}
		for _, t := range s.Tests {
			r := b.runTest(ctx, s, t)
			sr.Tests = append(sr.Tests, r)
			b.progress(r)
		}
		rep.Suites = append(rep.Suites, sr)
	}
	rep.finish(time.Since(start))
	return rep
}

// runTest runs one test in a fresh scope (tests share no state, §4).
func (b *bindingRun) runTest(ctx context.Context, s *Suite, t *Test) *TestResult {
	start := time.Now()
	r := &TestResult{ID: t.ID, Name: t.Name, Level: t.Level}
	defer func() { r.DurationMS = time.Since(start).Milliseconds() }()
	if reason := b.skipReason(t); reason != "" {
		r.Result, r.SkipReason = Skip, reason
		return r
	}
	sc := &scope{captures: map[string]any{}, runner: b.opts.Vars, docVars: s.vars}
	// A test of authentication (its precondition, or its tag auth) sends
	// its raw requests as written, without the run's credentials; the
	// others carry them, as their operations do.
	b.anonymousRaw = slices.Contains(t.Tags, "auth") || (t.Preconditions != nil && t.Preconditions.Capabilities["authentication"] != nil)
	r.Result = Pass
	for i, st := range t.Steps {
		sr := b.runStep(ctx, sc, st)
		r.Steps = append(r.Steps, sr)
		for _, n := range sr.Notes {
			if !slices.Contains(r.Notes, n) {
				r.Notes = append(r.Notes, n)
			}
		}
		if sr.Result != Pass {
			r.Result, r.Failure = sr.Result, sr.Failure
			for _, rest := range t.Steps[i+1:] {
				r.Steps = append(r.Steps, StepResult{ID: rest.ID, Result: Skip, Failure: &Failure{Message: "an earlier step did not pass"}})
			}
			return r
		}
	}
	for _, a := range t.Assertions {
		if f, isErr := b.named(sc, a); f != nil {
			f.StepID = "assertions"
			r.Result, r.Failure = Fail, f
			if isErr {
				r.Result = Error
			}
			return r
		}
	}
	return r
}

// skipReason says why a test does not apply to this binding or agent
// (ACTS §3.2, §3.3, §12.3, §12.5), "" when it does.
func (b *bindingRun) skipReason(t *Test) string {
	binding := b.d.Binding()
	if len(t.Transport) > 0 && !slices.Contains(t.Transport, binding) {
		return "transport filter: " + strings.Join(t.Transport, ", ")
	}
	for _, req := range t.RunnerRequirements {
		switch req {
		case "webhook_endpoint":
			if b.opts.Vars["webhookUrl"] == "" {
				return "runner requirement webhook_endpoint: no webhook endpoint configured"
			}
		case "auth_credentials":
			if !b.opts.Credentials {
				return "runner requirement auth_credentials: no credentials given"
			}
		case "concurrent_streams", "stream_disconnect", "header_inspection":
		default:
			return "runner requirement " + req + ": not supported by this runner"
		}
	}
	p := t.Preconditions
	if p == nil {
		return ""
	}
	if len(p.Transport) > 0 && !slices.Contains(p.Transport, binding) {
		return "precondition transport: " + strings.Join(p.Transport, ", ")
	}
	if len(p.Capabilities) > 0 || len(p.Skills) > 0 || len(p.Extensions) > 0 {
		if b.card == nil {
			return "preconditions: " + b.cardErr
		}
	}
	for _, k := range slices.Sorted(maps.Keys(p.Capabilities)) {
		want := norm(p.Capabilities[k])
		if k == "authentication" {
			// Not a member of AgentCapabilities: the draft's suite uses it
			// for "the agent authenticates callers". It holds when the card
			// declares security requirements and the runner has credentials.
			has := b.authenticates()
			if truth(want) && !has {
				return "precondition authentication: the card declares no security requirement, or no credentials were given"
			}
			if !truth(want) && has {
				return "precondition authentication: false, but the agent authenticates callers"
			}
			continue
		}
		got, ok := lookupOne(b.card, "capabilities."+k)
		if !ok {
			got, ok = false, true // an absent capability is false (proto3 default)
		}
		if match("capabilities."+k, want, got, ok) != nil {
			return fmt.Sprintf("precondition capabilities.%s: %s, the card says %s", k, scalarText(want), scalarText(got))
		}
	}
	for _, sk := range p.Skills {
		ids, _ := lookup(b.card, "skills[*].id")
		if !slices.Contains(ids, any(sk["id"])) {
			return "precondition skill " + sk["id"] + ": not in the card"
		}
	}
	for _, ext := range p.Extensions {
		uris, _ := lookup(b.card, "capabilities.extensions[*].uri")
		if !slices.Contains(uris, any(ext)) {
			return "precondition extension " + ext + ": not in the card"
		}
	}
	return ""
}

// authenticates reports whether the card asks for credentials and the
// runner has some.
func (b *bindingRun) authenticates() bool {
	reqs, _ := lookup(b.card, "securityRequirements[*]")
	schemes, _ := lookupOne(b.card, "securitySchemes")
	m, _ := schemes.(map[string]any)
	return b.opts.Credentials && (len(reqs) > 0 || len(m) > 0)
}

// stepError is a runner error (not the agent's failure).
func stepError(id string, err error) StepResult {
	return StepResult{ID: id, Result: Error, Failure: &Failure{Message: err.Error(), StepID: id}}
}

// runStep runs one step and grades it.
func (b *bindingRun) runStep(ctx context.Context, sc *scope, st *Step) StepResult {
	start := time.Now()
	var sr StepResult
	switch {
	case st.Assertion != nil:
		sr = StepResult{ID: st.ID, Result: Pass}
		if f, isErr := b.named(sc, *st.Assertion); f != nil {
			sr.Result, sr.Failure = Fail, f
			if isErr {
				sr.Result = Error
			}
		}
	case st.ClientResponse != nil:
		sr = b.clientStep(sc, st)
	default:
		sr = b.wireStep(ctx, sc, st)
	}
	if sr.Failure != nil {
		sr.Failure.StepID = st.ID
	}
	sr.DurationMS = time.Since(start).Milliseconds()
	return sr
}

// wireStep runs an operation or raw step, with its repeat.
func (b *bindingRun) wireStep(ctx context.Context, sc *scope, st *Step) StepResult {
	sr := StepResult{ID: st.ID}
	if st.DelayMS > 0 && !sleep(ctx, time.Duration(st.DelayMS)*time.Millisecond) {
		return stepError(st.ID, ctx.Err())
	}
	attempts, delay := 1, time.Second
	var cond *until
	if st.Repeat != nil {
		cond, _ = parseUntil(st.Repeat.Until)
		attempts = 10
		if st.Repeat.MaxAttempts > 0 {
			attempts = st.Repeat.MaxAttempts
		}
		if st.Repeat.DelayMS != nil {
			delay = time.Duration(*st.Repeat.DelayMS) * time.Millisecond
		}
	}
	var (
		o    *Outcome
		root any
		err  error
	)
	for i := 0; i < attempts; i++ {
		if i > 0 && !sleep(ctx, backoff(st.Repeat.Backoff, delay, i)) {
			return stepError(st.ID, ctx.Err())
		}
		o, root, sr.Notes, err = b.perform(ctx, sc, st)
		if err != nil {
			return stepError(st.ID, err)
		}
		for _, k := range []string{"error_type", "code"} {
			sr.Notes = append(sr.Notes, draftErrorNotes(st.ExpectError[k])...)
		}
		if cond == nil || (o.Failure == "" && o.Err == nil && cond.holds(root)) {
			cond = nil
			break
		}
	}
	if cond != nil {
		sr.Result = Fail
		sr.Failure = &Failure{Message: fmt.Sprintf("repeat.until %q did not hold after %d attempts", st.Repeat.Until, attempts),
			Expected: st.Repeat.Until, Actual: outcomeText(o, root, cond.path), AssertionPath: cond.path}
		return sr
	}
	if f := b.grade(sc, st, o, root); f != nil {
		sr.Result, sr.Failure = Fail, f
		return sr
	}
	if f := capture(sc, st, o, root); f != nil {
		sr.Result, sr.Failure = Fail, f
		return sr
	}
	for _, a := range st.Assertions {
		if f, isErr := b.named(sc, a); f != nil {
			sr.Result, sr.Failure = Fail, f
			if isErr {
				sr.Result = Error
			}
			return sr
		}
	}
	sr.Result = Pass
	return sr
}

// outcomeText describes what a repeated step saw last.
func outcomeText(o *Outcome, root any, path string) string {
	switch {
	case o == nil:
		return "nothing"
	case o.Failure != "":
		return o.Failure
	case o.Err != nil:
		return "error " + o.Err.Name()
	}
	if v, ok := lookupOne(root, path); ok {
		return brief(v)
	}
	return "absent"
}

func backoff(kind string, d time.Duration, attempt int) time.Duration {
	switch kind {
	case "linear":
		return d * time.Duration(attempt)
	case "exponential":
		return d << min(attempt-1, 10)
	}
	return d
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// perform sends a step's request once. It returns the outcome, the
// assertion root (§4.2: the A2A object; a stream's events) and the notes
// on where the runner departed from the draft.
func (b *bindingRun) perform(ctx context.Context, sc *scope, st *Step) (*Outcome, any, []string, error) {
	version := b.doc.SpecVersion
	if st.Raw != nil {
		return b.performRaw(ctx, sc, st)
	}
	p, err := sc.expand(norm(st.Params))
	if err != nil {
		return nil, nil, nil, err
	}
	params, _ := p.(map[string]any)
	method, req, notes := request(st.Operation, params, b.d.Binding())
	opts := CallOptions{Version: version}
	switch {
	case method == "":
		o := b.d.Card(ctx)
		return o, o.Body, notes, nil
	case a2a.MethodByName(method).Streaming:
		o := b.d.Stream(ctx, method, req, opts, streamControl(st.ExpectStream))
		return o, streamRoot(o), notes, nil
	}
	o := b.d.Call(ctx, method, req, opts)
	return o, o.Body, notes, nil
}

// performRaw sends a raw step's request (ACTS §4.4).
func (b *bindingRun) performRaw(ctx context.Context, sc *scope, st *Step) (*Outcome, any, []string, error) {
	var notes []string
	r := RawRequest{Method: st.Raw.Method, Headers: map[string]string{}, Anonymous: b.anonymousRaw}
	pv, err := sc.expandString(st.Raw.Path)
	if err != nil {
		return nil, nil, nil, err
	}
	r.Path = scalarText(pv)
	for k, v := range st.Raw.Headers {
		hv, err := sc.expandString(v)
		if err != nil {
			return nil, nil, nil, err
		}
		r.Headers[k] = scalarText(hv)
	}
	var body []byte
	switch {
	case st.Raw.BodyRaw != nil:
		bv, err := sc.expandString(*st.Raw.BodyRaw)
		if err != nil {
			return nil, nil, nil, err
		}
		body = []byte(scalarText(bv))
	case st.Raw.Body != nil:
		bv, err := sc.expand(norm(st.Raw.Body))
		if err != nil {
			return nil, nil, nil, err
		}
		if note := rawMessageID(bv); note != "" {
			notes = append(notes, note)
		}
		if body, err = json.Marshal(bv); err != nil {
			return nil, nil, nil, err
		}
	}
	var ctl *StreamControl
	if st.ExpectStream != nil {
		c := streamControl(st.ExpectStream)
		ctl = &c
	}
	o := b.d.Raw(ctx, r, body, ctl)
	if o.Events != nil {
		return o, streamRoot(o), notes, nil
	}
	return o, o.Body, notes, nil
}

// rawMessageID gives the message of a raw request body (JSON-RPC:
// params.message; HTTP+JSON: message) a messageId when it has none, as
// ACTS §12.4 requires of every request the runner sends, and says so.
func rawMessageID(body any) string {
	top, _ := body.(map[string]any)
	if top == nil {
		return ""
	}
	m, _ := top["message"].(map[string]any)
	where := "message"
	if p, ok := top["params"].(map[string]any); ok {
		m, _ = p["message"].(map[string]any)
		where = "params.message"
	}
	if m == nil {
		return ""
	}
	if _, has := m["messageId"]; has {
		return ""
	}
	m["messageId"] = newUUID()
	return "the raw body's " + where + " had no messageId: the runner gave it one (ACTS §12.4; messageId is REQUIRED, spec §4.1.4)"
}

// streamRoot is a stream's assertion root: its events' views.
func streamRoot(o *Outcome) []any {
	var evs []any
	for _, e := range o.Events {
		if e.Body != nil {
			evs = append(evs, eventView(e.Body))
		}
	}
	return evs
}

// request maps an abstract operation and its parameters (ACTS §4.3) onto
// a method of the table and its request in the JSON model.
func request(op string, params map[string]any, binding string) (string, map[string]any, []string) {
	method := operations[op]
	req := maps.Clone(params)
	if req == nil {
		req = map[string]any{}
	}
	var notes []string
	switch method {
	case "":
		if truth(req["extended"]) {
			// The draft's suite asks for the extended card this way.
			method = a2a.MethodGetExtendedAgentCard
			req = map[string]any{}
		}
	case a2a.MethodSendMessage, a2a.MethodSendStreamingMessage:
		if m, ok := req["message"].(map[string]any); ok {
			m = maps.Clone(m)
			if _, has := m["messageId"]; !has {
				m["messageId"] = newUUID() // §4.3: the runner generates it
			}
			// The draft's suite puts a follow-up's taskId and contextId
			// beside the message; SendMessageRequest has no such members,
			// the message carries them (spec §3.1.1, §4.1.4).
			for _, k := range []string{"taskId", "contextId"} {
				if v, ok := req[k]; ok {
					delete(req, k)
					if _, has := m[k]; !has {
						m[k] = v
						notes = append(notes, "params."+k+" sent as message."+k+": SendMessageRequest has no "+k+" (spec §3.1.1, §4.1.4)")
					}
				}
			}
			req["message"] = m
		}
	case a2a.MethodCreateTaskPushNotificationConfig:
		// The draft nests the configuration (pushNotificationConfig); the
		// specification's request is the flat TaskPushNotificationConfig
		// (spec §3.1.7).
		if cfg, ok := req["pushNotificationConfig"].(map[string]any); ok {
			delete(req, "pushNotificationConfig")
			for k, v := range cfg {
				if _, set := req[k]; !set {
					req[k] = v
				}
			}
		}
	}
	if binding == REST && strings.Contains(method, "PushNotificationConfig") {
		notes = append(notes, draftRESTPushNote)
	}
	return method, req, notes
}

// capture stores a step's captures (ACTS §8.2) and its whole result as
// {{step.response}}. On a stream a path is looked up in each event, and
// the first that has it gives the value.
func capture(sc *scope, st *Step, o *Outcome, root any) *Failure {
	sc.captures[st.ID+".response"] = root
	for _, name := range slices.Sorted(maps.Keys(st.Capture)) {
		path := st.Capture[name]
		var (
			v  any
			ok bool
		)
		if evs, isStream := root.([]any); isStream && o != nil && o.Events != nil {
			for _, e := range evs {
				if v, ok = lookupOne(e, path); ok {
					break
				}
			}
		} else if o != nil && o.Err != nil && root == nil {
			v, ok = lookupOne(errorView(o.Err), path)
		} else {
			v, ok = lookupOne(root, path)
		}
		if !ok {
			return &Failure{Message: "capture " + name + ": nothing at " + path, AssertionPath: path, Expected: "a value", Actual: "absent"}
		}
		sc.captures[st.ID+"."+name] = v
	}
	return nil
}

// errorView is an error in the JSON model, for captures and assertions.
func errorView(e *WireError) map[string]any {
	m := map[string]any{"error_type": e.Name(), "code": e.Name(), "message": e.Message}
	if e.Details != nil {
		m["details"] = e.Details
	}
	return m
}

// grade applies a step's expect, expect_error and expect_stream.
func (b *bindingRun) grade(sc *scope, st *Step, o *Outcome, root any) *Failure {
	if o.Failure != "" {
		return &Failure{Message: "no protocol answer: " + o.Failure}
	}
	if st.ExpectError != nil {
		return b.gradeError(sc, st.ExpectError, o)
	}
	if st.Raw == nil && st.Expect != nil && st.Expect.WantsError() {
		// (A raw step's expect applies to the response as it is.)
		return gradeExpectedError(sc, st.Expect, o)
	}
	if o.Err != nil && st.Raw == nil {
		return &Failure{Message: "expected success, got " + o.Err.Name() + ": " + o.Err.Message, Expected: "success", Actual: o.Err.Name()}
	}
	if st.Expect != nil {
		if st.Expect.Status != nil {
			want, err := sc.expand(norm(st.Expect.Status))
			if err != nil {
				return &Failure{Message: err.Error()}
			}
			if f := match("status", want, float64(o.Status), true); f != nil {
				return f
			}
		}
		if st.Expect.Body != nil {
			want, err := sc.expand(norm(st.Expect.Body))
			if err != nil {
				return &Failure{Message: err.Error()}
			}
			if f := match("", want, root, root != nil); f != nil {
				return f
			}
		}
	}
	if st.ExpectStream != nil {
		return gradeStream(sc, st.ExpectStream, o)
	}
	return nil
}

// gradeExpectedError applies an expect block that expects an abstract
// operation to fail (Expect.WantsError): its body is matched against
// {error: {error_type, code, message, details}}, the error's view, and a
// status other than the word error against the HTTP status.
func gradeExpectedError(sc *scope, e *Expect, o *Outcome) *Failure {
	if o.Err == nil {
		return &Failure{Message: "expected an error, got success", Expected: "an error", Actual: "success"}
	}
	if s, word := e.Status.(string); e.Status != nil && !(word && s == "error") {
		want, err := sc.expand(norm(e.Status))
		if err != nil {
			return &Failure{Message: err.Error()}
		}
		if f := match("status", want, float64(o.Status), true); f != nil {
			return f
		}
	}
	if e.Body == nil {
		return nil
	}
	want, err := sc.expand(norm(e.Body))
	if err != nil {
		return &Failure{Message: err.Error()}
	}
	return match("", want, map[string]any{"error": errorView(o.Err)}, true)
}

// gradeError applies expect_error (ACTS §6.2). The error type is matched
// against the name of the specification's error the response carried,
// identified through Parley's one error table (a2a.CodeFromWire).
func (b *bindingRun) gradeError(sc *scope, want map[string]any, o *Outcome) *Failure {
	w, err := sc.expand(norm(want))
	if err != nil {
		return &Failure{Message: err.Error()}
	}
	wm := w.(map[string]any)
	if o.Err == nil {
		return &Failure{Message: "expected an error, got success", Expected: "an error", Actual: "success"}
	}
	for _, key := range []string{"error_type", "code"} {
		if t, ok := wm[key]; ok {
			if f := match(key, specNames(t), o.Err.Name(), true); f != nil {
				return f
			}
		}
	}
	if m, ok := wm["message"]; ok {
		if f := match("message", m, o.Err.Message, o.Err.Message != ""); f != nil {
			return f
		}
	}
	if d, ok := wm["details"]; ok {
		if f := match("details", d, o.Err.Details, o.Err.Details != nil); f != nil {
			return f
		}
	}
	return nil
}

// draftErrorNotes are the notes on the draft's error names an
// expect_error uses (draftErrorNames).
func draftErrorNotes(v any) []string {
	var notes []string
	switch x := v.(type) {
	case string:
		if n, ok := draftErrorNames[x]; ok {
			notes = append(notes, n.note)
		}
	case []any:
		for _, e := range x {
			notes = append(notes, draftErrorNotes(e)...)
		}
	case map[string]any:
		for _, k := range sortedKeys(x) {
			notes = append(notes, draftErrorNotes(x[k])...)
		}
	}
	return notes
}

// specNames rewrites the draft's error names in an assertion to the
// specification's (draftErrorNames).
func specNames(v any) any {
	switch x := v.(type) {
	case string:
		if n, ok := draftErrorNames[x]; ok {
			return n.spec
		}
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = specNames(e)
		}
		return l
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = specNames(e)
		}
		return m
	}
	return v
}

// clientStep feeds a canonical payload through the client's decoders
// (ACTS §10).
func (b *bindingRun) clientStep(sc *scope, st *Step) StepResult {
	sr := StepResult{ID: st.ID}
	payload, err := sc.expand(norm(st.ClientResponse.WirePayload))
	if err != nil {
		return stepError(st.ID, err)
	}
	raw, err := json.Marshal(payload)
	if err != nil {
		return stepError(st.ID, err)
	}
	got, perr := b.d.Parse(operations[st.ClientResponse.Operation], raw)
	if perr != nil {
		sr.Result, sr.Failure = Fail, &Failure{Message: "the client could not parse the payload: " + perr.Error()}
		return sr
	}
	want, err := sc.expand(norm(st.ExpectParsed))
	if err != nil {
		return stepError(st.ID, err)
	}
	if f := match("", want, got, got != nil); f != nil {
		sr.Result, sr.Failure = Fail, f
		return sr
	}
	sc.captures[st.ID+".response"] = got
	for _, a := range st.Assertions {
		if f, isErr := b.named(sc, a); f != nil {
			sr.Result, sr.Failure = Fail, f
			if isErr {
				sr.Result = Error
			}
			return sr
		}
	}
	sr.Result = Pass
	return sr
}

// named evaluates a named or inline assertion (ACTS §5.5). The boolean
// reports a runner error (an unresolvable source) rather than a failure.
func (b *bindingRun) named(sc *scope, a NamedAssertion) (*Failure, bool) {
	src := strings.TrimSpace(a.Source)
	var (
		v   any
		err error
	)
	if refRE.MatchString(src) {
		v, err = sc.expandString(src)
	} else if c, ok := sc.captures[src]; ok {
		v = c
	} else if c, ok := sc.captures[src+".response"]; ok {
		v = c
	} else {
		err = fmt.Errorf("assertion source %q resolves to nothing", src)
	}
	if err != nil {
		return &Failure{Message: err.Error()}, true
	}
	present := true
	if a.Path != "" {
		v, present = lookupOne(v, a.Path)
	}
	if a.Match != nil {
		want, err := sc.expand(norm(a.Match))
		if err != nil {
			return &Failure{Message: err.Error()}, true
		}
		if f := match(a.Path, want, v, present); f != nil {
			return f, false
		}
	}
	for _, c := range []struct {
		kind string
		cm   *CollectionMatch
	}{{"any", a.Any}, {"all", a.All}, {"none", a.None}} {
		if c.cm == nil {
			continue
		}
		if f, isErr := collection(sc, c.kind, c.cm, v); f != nil {
			return f, isErr
		}
	}
	return nil, false
}

// collection applies any, all or none over the elements a wildcard path
// selects. any and all fail when the path selects nothing.
func collection(sc *scope, kind string, cm *CollectionMatch, v any) (*Failure, bool) {
	els, err := lookup(v, cm.Path)
	if err != nil {
		return &Failure{Message: err.Error()}, true
	}
	want, err := sc.expand(norm(cm.Match))
	if err != nil {
		return &Failure{Message: err.Error()}, true
	}
	if len(els) == 0 && kind != "none" {
		return &Failure{Message: kind + ": the path selects nothing", AssertionPath: cm.Path, Expected: "elements", Actual: "none"}, false
	}
	passed := 0
	var first *Failure
	for _, e := range els {
		if f := match(cm.Path, want, e, true); f == nil {
			passed++
		} else if first == nil {
			first = f
		}
	}
	switch {
	case kind == "any" && passed == 0:
		return &Failure{Message: "any: no element matches (first: " + first.Error() + ")", AssertionPath: cm.Path, Expected: brief(want), Actual: fmt.Sprintf("%d elements, none matching", len(els))}, false
	case kind == "all" && passed < len(els):
		return &Failure{Message: "all: an element does not match: " + first.Error(), AssertionPath: cm.Path, Expected: brief(want), Actual: fmt.Sprintf("%d of %d matching", passed, len(els))}, false
	case kind == "none" && passed > 0:
		return &Failure{Message: "none: an element matches", AssertionPath: cm.Path, Expected: "no element matching " + brief(want), Actual: fmt.Sprintf("%d matching", passed)}, false
	}
	return nil, false
}
