package acts

import (
	"fmt"
	"strings"
)

// assertAll evaluates assertions in order and returns the result of the
// first that fails, Fail or (for a runner error) Error, with its failure;
// Pass and nil when all hold.
func (b *bindingRun) assertAll(sc *scope, as []NamedAssertion) (string, *Failure) {
	for _, a := range as {
		if f, isErr := b.named(sc, a); f != nil {
			if isErr {
				return Error, f
			}
			return Fail, f
		}
	}
	return Pass, nil
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
