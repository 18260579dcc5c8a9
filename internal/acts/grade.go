package acts

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
