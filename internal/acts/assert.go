package acts

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Failure says why an assertion failed (the failure-detail of ACTS §13.3).
type Failure struct {
	Message       string `json:"message"`
	StepID        string `json:"step_id,omitempty"`
	Expected      string `json:"expected,omitempty"`
	Actual        string `json:"actual,omitempty"`
	AssertionPath string `json:"assertion_path,omitempty"`
}

func (f *Failure) Error() string {
	s := f.Message
	if f.AssertionPath != "" {
		s = f.AssertionPath + ": " + s
	}
	if f.Expected != "" || f.Actual != "" {
		s += fmt.Sprintf(" (expected %s, got %s)", f.Expected, f.Actual)
	}
	return s
}

// operators are the keys of an assertion object (ACTS §5.1).
var operators = map[string]bool{
	"type": true, "exists": true, "absent": true, "contains": true, "matches": true, "starts_with": true,
	"ends_with": true, "gte": true, "lte": true, "gt": true, "lt": true, "count": true, "count_gte": true,
	"count_lte": true, "one_of": true, "all_of": true, "any_of": true, "not": true,
	// items is not in the draft's grammar, but its suite uses it: a map
	// applies to every element of an array, a list to the first elements
	// in order (as a YAML array does).
	"items": true,
}

var typeNames = []string{"string", "number", "boolean", "array", "object", "null"}

// isOperatorMap tells an assertion object from a nested expectation on
// the members of an object. A map is an assertion object when every key
// is an operator; `type` must then name a type, so that an object whose
// member is called "type" (a problem document's) is still matched member
// by member.
func isOperatorMap(m map[string]any) bool {
	if len(m) == 0 {
		return false
	}
	for k, v := range m {
		if !operators[k] {
			return false
		}
		if k == "type" {
			s, ok := v.(string)
			if !ok || !slices.Contains(typeNames, s) {
				return false
			}
		}
	}
	return true
}

// match applies an assertion (want) to a value (got, present or not) at
// path, and returns the first failure.
func match(path string, want, got any, present bool) *Failure {
	switch w := want.(type) {
	case map[string]any:
		if isOperatorMap(w) {
			return matchOps(path, w, got, present)
		}
		g, ok := got.(map[string]any)
		if !present || !ok {
			return fail(path, "expected an object", "object", got, present)
		}
		for _, k := range sortedKeys(w) {
			e, has := g[k]
			if f := match(join(path, k), w[k], e, has); f != nil {
				return f
			}
		}
		return nil
	case []any:
		g, ok := got.([]any)
		if !present || !ok {
			return fail(path, "expected an array", "array", got, present)
		}
		if len(g) < len(w) {
			return fail(path, fmt.Sprintf("expected at least %d elements", len(w)), strconv.Itoa(len(w))+" elements", got, present)
		}
		for i, e := range w {
			if f := match(fmt.Sprintf("%s[%d]", path, i), e, g[i], true); f != nil {
				return f
			}
		}
		return nil
	case nil:
		if present && got != nil {
			return fail(path, "expected null", "null", got, present)
		}
		return nil
	}
	if !present {
		return fail(path, "expected a value", scalarText(want), got, false)
	}
	if !equal(want, got) {
		return fail(path, "values differ", scalarText(want), got, true)
	}
	return nil
}

// matchOps applies the operators of an assertion object, all of which
// must pass (ACTS §5.4).
func matchOps(path string, ops map[string]any, got any, present bool) *Failure {
	for _, k := range sortedKeys(ops) {
		if f := matchOp(path, k, ops[k], got, present); f != nil {
			return f
		}
	}
	return nil
}

// matchOp applies one operator of an assertion object (ACTS §5.4). The
// presence and combining operators judge an absent member themselves; the
// others fail on one.
func matchOp(path, op string, arg, got any, present bool) *Failure {
	switch op {
	case "exists", "absent":
		return matchPresence(path, op, arg, got, present)
	case "not", "all_of", "any_of", "one_of":
		return matchCombined(path, op, arg, got, present)
	}
	if !present {
		return fail(path, op+": the member is absent", op+" "+brief(arg), nil, false)
	}
	switch op {
	case "type":
		if t := typeOf(got); t != arg {
			return fail(path, "wrong type", scalarText(arg), t, true)
		}
	case "contains", "starts_with", "ends_with", "matches":
		return matchText(path, op, arg, got)
	case "gte", "lte", "gt", "lt":
		return matchNumber(path, op, arg, got)
	case "items":
		return matchItems(path, arg, got)
	case "count", "count_gte", "count_lte":
		return matchCount(path, op, arg, got)
	}
	return nil
}

// matchPresence applies exists and absent: absent: x is exists: !x.
func matchPresence(path, op string, arg, got any, present bool) *Failure {
	want := truth(arg)
	if op == "absent" {
		want = !want
	}
	if want != present {
		return fail(path, op+": "+scalarText(arg), presence(want), got, present)
	}
	return nil
}

// matchCombined applies the operators over other assertions: not, all_of,
// any_of and one_of.
func matchCombined(path, op string, arg, got any, present bool) *Failure {
	switch op {
	case "not":
		if match(path, arg, got, present) == nil {
			return fail(path, "the negated assertion passed", "not "+brief(arg), got, present)
		}
	case "all_of":
		for _, a := range list(arg) {
			if f := match(path, a, got, present); f != nil {
				return f
			}
		}
	case "any_of":
		return matchAnyOf(path, arg, got, present)
	case "one_of":
		return matchOneOf(path, arg, got, present)
	}
	return nil
}

// matchAnyOf passes when one alternative passes, and reports the first
// alternative's failure when none does.
func matchAnyOf(path string, arg, got any, present bool) *Failure {
	var first *Failure
	for _, a := range list(arg) {
		f := match(path, a, got, present)
		if f == nil {
			return nil
		}
		if first == nil {
			first = f
		}
	}
	msg := "no alternative of any_of passed"
	if first != nil {
		msg += " (first: " + first.Error() + ")"
	}
	return fail(path, msg, "any of "+brief(arg), got, present)
}

// matchOneOf passes when the value equals one of the listed scalars or
// matches one of the listed assertions.
func matchOneOf(path string, arg, got any, present bool) *Failure {
	for _, a := range list(arg) {
		switch a.(type) {
		case map[string]any, []any:
			if match(path, a, got, present) == nil {
				return nil
			}
		default:
			if present && equal(a, got) {
				return nil
			}
		}
	}
	return fail(path, "not one of the listed values", "one of "+brief(arg), got, present)
}

// matchText applies the string operators: contains (also of an array's
// element), starts_with, ends_with and matches (a regular expression).
func matchText(path, op string, arg, got any) *Failure {
	s, ok := got.(string)
	want := scalarText(arg)
	if !ok {
		if l, isList := got.([]any); isList && op == "contains" {
			if slices.ContainsFunc(l, func(e any) bool { return equal(arg, e) }) {
				return nil
			}
			return fail(path, "the array does not contain the value", "contains "+want, got, true)
		}
		return fail(path, op+" needs a string", op+" "+want, got, true)
	}
	var pass bool
	switch op {
	case "contains":
		pass = strings.Contains(s, want)
	case "starts_with":
		pass = strings.HasPrefix(s, want)
	case "ends_with":
		pass = strings.HasSuffix(s, want)
	case "matches":
		re, err := regexp.Compile(want)
		if err != nil {
			return fail(path, "matches: bad regular expression: "+err.Error(), want, got, true)
		}
		pass = re.MatchString(s)
	}
	if !pass {
		return fail(path, op+" failed", op+" "+strconv.Quote(want), got, true)
	}
	return nil
}

// matchNumber applies the comparisons gte, lte, gt and lt.
func matchNumber(path, op string, arg, got any) *Failure {
	n, ok := number(got)
	w, wok := number(arg)
	if !ok || !wok {
		return fail(path, op+" needs numbers", op+" "+scalarText(arg), got, true)
	}
	pass := map[string]bool{"gte": n >= w, "lte": n <= w, "gt": n > w, "lt": n < w}[op]
	if !pass {
		return fail(path, op+" failed", op+" "+scalarText(arg), got, true)
	}
	return nil
}

// matchItems applies items: a list matches the array as a whole, any
// other assertion each of its elements.
func matchItems(path string, arg, got any) *Failure {
	l, ok := got.([]any)
	if !ok {
		return fail(path, "items needs an array", "array", got, true)
	}
	if _, isList := arg.([]any); isList {
		return match(path, arg, got, true)
	}
	for i, e := range l {
		if f := match(fmt.Sprintf("%s[%d]", path, i), arg, e, true); f != nil {
			return f
		}
	}
	return nil
}

// matchCount applies count, count_gte and count_lte to an array's length.
func matchCount(path, op string, arg, got any) *Failure {
	l, ok := got.([]any)
	w, wok := number(arg)
	if !ok || !wok {
		return fail(path, op+" needs an array", op+" "+scalarText(arg), got, true)
	}
	n := float64(len(l))
	pass := map[string]bool{"count": n == w, "count_gte": n >= w, "count_lte": n <= w}[op]
	if !pass {
		return fail(path, op+" failed", op+" "+scalarText(arg), fmt.Sprintf("%d elements", len(l)), true)
	}
	return nil
}

// equal compares an expected scalar with a value: numbers by value (a
// ProtoJSON int64 travels as a string), everything else exactly.
func equal(want, got any) bool {
	if w, ok := want.(float64); ok {
		g, ok := number(got)
		return ok && g == w
	}
	switch want.(type) {
	case map[string]any, []any:
		return match("", want, got, true) == nil
	}
	return want == got
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int:
		return float64(x), true
	case string:
		f, err := strconv.ParseFloat(x, 64)
		return f, err == nil
	}
	return 0, false
}

func typeOf(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case float64, int:
		return "number"
	case bool:
		return "boolean"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "null"
}

func truth(v any) bool { b, _ := v.(bool); return b }

func presence(present bool) string {
	if present {
		return "present"
	}
	return "absent"
}

func list(v any) []any { l, _ := v.([]any); return l }

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// fail builds a failure; actual is the value found, or "absent".
func fail(path, msg, expected string, got any, present bool) *Failure {
	actual := "absent"
	if present {
		actual = brief(got)
	}
	return &Failure{Message: msg, Expected: expected, Actual: actual, AssertionPath: path}
}

// brief renders a value for a report, at most 200 bytes.
func brief(v any) string {
	s := scalarText(v)
	if len(s) > 200 {
		s = s[:197] + "..."
	}
	return s
}
