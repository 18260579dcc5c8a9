package acts

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"
)

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
		sr = StepResult{ID: st.ID}
		sr.Result, sr.Failure = b.assertAll(sc, []NamedAssertion{*st.Assertion})
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
	sr.Result, sr.Failure = b.assertAll(sc, st.Assertions)
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
	sr.Result, sr.Failure = b.assertAll(sc, st.Assertions)
	return sr
}
