package acts

import (
	"fmt"
	"maps"
	"slices"
	"time"
)

// defaultStreamTimeout bounds a stream whose step sets no timeout_ms.
const defaultStreamTimeout = 10 * time.Second

// eventView is an event in the JSON model as the draft's assertions see
// it: the StreamResponse, with the draft's payload names beside the
// wire's (ACTS §7 names status_update and artifact_update what ProtoJSON
// calls statusUpdate and artifactUpdate), and the members of its payload
// (the task, message or update) at the top too, since the draft's suite
// asserts final_event: {status: …} of whichever payload the event has.
func eventView(b map[string]any) map[string]any {
	v := map[string]any{}
	inner := b
	if r, ok := b["result"].(map[string]any); ok {
		inner = r // a raw JSON-RPC envelope: its result's payload too
		maps.Copy(v, r)
	}
	for _, k := range []string{"task", "message", "statusUpdate", "artifactUpdate"} {
		if p, ok := inner[k].(map[string]any); ok {
			maps.Copy(v, p)
		}
	}
	maps.Copy(v, b)
	if x, ok := b["statusUpdate"]; ok {
		v["status_update"] = x
	}
	if x, ok := b["artifactUpdate"]; ok {
		v["artifact_update"] = x
	}
	return v
}

// The task states (spec §4.1.3), by the ordering rule's classes (ACTS
// §7.1).
var (
	terminalStates    = []string{"TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED", "TASK_STATE_REJECTED"}
	interruptedStates = []string{"TASK_STATE_INPUT_REQUIRED", "TASK_STATE_AUTH_REQUIRED"}
)

// eventState returns the task state an event reports, "" if none.
func eventState(b map[string]any) string {
	for _, p := range []string{"task.status.state", "statusUpdate.status.state", "result.task.status.state", "result.statusUpdate.status.state"} {
		if v, ok := lookupOne(b, p); ok {
			s, _ := v.(string)
			return s
		}
	}
	return ""
}

// streamControl says how long to read a step's stream: until the
// server ends it, max_count is exceeded, the timeout passes, or, a second
// after the task settles (a terminal or interrupted state, or a message),
// the server has still not ended it. A step that asserts nothing about
// the end of the stream (no events, final_event, each_event, ordering or
// max_count) stops once min_count events (at least one) arrived.
func streamControl(es *ExpectStream) StreamControl {
	ctl := StreamControl{Max: defaultStreamTimeout}
	if es != nil && es.TimeoutMS > 0 {
		ctl.Max = time.Duration(es.TimeoutMS) * time.Millisecond
	}
	ctl.Settle = func(evs []Event) bool {
		last := evs[len(evs)-1]
		if last.Body == nil {
			return true
		}
		st := eventState(last.Body)
		_, isMsg := last.Body["message"]
		return isMsg || slices.Contains(terminalStates, st) || slices.Contains(interruptedStates, st)
	}
	wantsEnd := es != nil && (len(es.Events) > 0 || es.FinalEvent != nil || es.EachEvent != nil || es.Ordering != "" || es.MaxCount != nil)
	enough := 1
	if es != nil && es.MinCount != nil {
		enough = max(*es.MinCount, 1)
	}
	ctl.Stop = func(evs []Event) bool {
		if es != nil && es.MaxCount != nil && len(evs) > *es.MaxCount {
			return true
		}
		return !wantsEnd && len(evs) >= enough
	}
	return ctl
}

// gradeStream applies expect_stream (ACTS §7) to a stream's events.
func gradeStream(sc *scope, es *ExpectStream, o *Outcome) *Failure {
	var views []map[string]any
	for i, e := range o.Events {
		switch {
		case e.Err != nil:
			return &Failure{Message: fmt.Sprintf("event %d carries an error: %s: %s", i, e.Err.Name(), e.Err.Message), AssertionPath: fmt.Sprintf("events[%d]", i)}
		case e.Failure != "":
			return &Failure{Message: fmt.Sprintf("event %d: %s", i, e.Failure), AssertionPath: fmt.Sprintf("events[%d]", i)}
		}
		views = append(views, eventView(e.Body))
	}
	n := len(views)
	if es.MinCount != nil && n < *es.MinCount {
		return &Failure{Message: "too few events", Expected: fmt.Sprintf("at least %d", *es.MinCount), Actual: fmt.Sprint(n), AssertionPath: "events"}
	}
	if es.MaxCount != nil && n > *es.MaxCount {
		return &Failure{Message: "too many events", Expected: fmt.Sprintf("at most %d", *es.MaxCount), Actual: fmt.Sprint(n), AssertionPath: "events"}
	}
	if es.Ordering != "" {
		if es.Ordering != "monotonic_state" {
			return &Failure{Message: "unknown ordering rule " + es.Ordering}
		}
		if f := monotonic(views); f != nil {
			return f
		}
	}
	expand := func(v any) (any, *Failure) {
		w, err := sc.expand(norm(v))
		if err != nil {
			return nil, &Failure{Message: err.Error()}
		}
		return w, nil
	}
	if es.EachEvent != nil {
		want, f := expand(es.EachEvent)
		if f != nil {
			return f
		}
		for i, v := range views {
			if f := match(fmt.Sprintf("events[%d]", i), want, v, true); f != nil {
				return f
			}
		}
	}
	for i, ea := range es.Events {
		a := maps.Clone(ea)
		mode, _ := a["match"].(string)
		idx := i
		if x, ok := a["index"]; ok {
			f, _ := number(norm(x))
			idx = int(f)
		}
		delete(a, "match")
		delete(a, "index")
		delete(a, "description")
		want, f := expand(a)
		if f != nil {
			return f
		}
		if mode == "any_position" {
			if !slices.ContainsFunc(views, func(v map[string]any) bool { return match("", want, v, true) == nil }) {
				return &Failure{Message: fmt.Sprintf("events[%d] (any_position): no event matches", i), Expected: brief(want), Actual: fmt.Sprintf("%d events", n), AssertionPath: "events"}
			}
			continue
		}
		if idx >= n {
			return &Failure{Message: fmt.Sprintf("no event at position %d", idx), Expected: brief(want), Actual: fmt.Sprintf("%d events", n), AssertionPath: fmt.Sprintf("events[%d]", idx)}
		}
		if f := match(fmt.Sprintf("events[%d]", idx), want, views[idx], true); f != nil {
			return f
		}
	}
	if es.FinalEvent != nil {
		want, f := expand(es.FinalEvent)
		if f != nil {
			return f
		}
		if n == 0 {
			return &Failure{Message: "no final event: the stream carried none", AssertionPath: "final_event", Expected: brief(want), Actual: "no events"}
		}
		if f := match("final_event", want, views[n-1], true); f != nil {
			return f
		}
	}
	return nil
}

// monotonic checks the monotonic_state rule (ACTS §7.1): no state after a
// terminal one, and SUBMITTED only first.
func monotonic(views []map[string]any) *Failure {
	prev := ""
	for i, v := range views {
		st := eventState(v)
		if st == "" {
			continue
		}
		path := fmt.Sprintf("events[%d]", i)
		switch {
		case prev != "" && slices.Contains(terminalStates, prev) && st != prev:
			return &Failure{Message: "monotonic_state: a state after the terminal " + prev, AssertionPath: path, Expected: "no state after " + prev, Actual: st}
		case prev != "" && st == "TASK_STATE_SUBMITTED" && prev != st:
			return &Failure{Message: "monotonic_state: back to SUBMITTED", AssertionPath: path, Expected: "no return to TASK_STATE_SUBMITTED", Actual: prev + " → " + st}
		}
		prev = st
	}
	return nil
}
