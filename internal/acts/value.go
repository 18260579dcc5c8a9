package acts

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// Values are kept in the JSON model: nil, bool, float64, string,
// []any and map[string]any. norm brings a YAML value to it.
func norm(v any) any {
	switch x := v.(type) {
	case int:
		return float64(x)
	case int64:
		return float64(x)
	case uint64:
		return float64(x)
	case float32:
		return float64(x)
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = norm(e)
		}
		return m
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[fmt.Sprint(k)] = norm(e)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = norm(e)
		}
		return l
	}
	return v
}

// ── Paths (ACTS §5.2): a.b[0].c, with [*] wildcards ──────────────────

// pathSeg is one segment of a dot path: a member name, an index, or a
// wildcard over an array's elements.
type pathSeg struct {
	name  string
	index int // -1: none; -2: wildcard
}

var segRE = regexp.MustCompile(`^([^\[\]]*)((?:\[(?:\d+|\*)\])*)$`)

func parsePath(p string) ([]pathSeg, error) {
	var segs []pathSeg
	p = strings.TrimSpace(p)
	if p == "" {
		return nil, nil
	}
	for _, part := range strings.Split(p, ".") {
		m := segRE.FindStringSubmatch(part)
		if m == nil {
			return nil, fmt.Errorf("path %q: bad segment %q", p, part)
		}
		if m[1] != "" {
			segs = append(segs, pathSeg{name: m[1], index: -1})
		}
		for _, ix := range regexp.MustCompile(`\[(\d+|\*)\]`).FindAllStringSubmatch(m[2], -1) {
			if ix[1] == "*" {
				segs = append(segs, pathSeg{index: -2})
			} else {
				n, _ := strconv.Atoi(ix[1])
				segs = append(segs, pathSeg{index: n})
			}
		}
	}
	return segs, nil
}

// lookup returns the values a path selects in v: none when a member is
// missing, several when the path has wildcards.
func lookup(v any, p string) ([]any, error) {
	segs, err := parsePath(p)
	if err != nil {
		return nil, err
	}
	cur := []any{v}
	for _, s := range segs {
		var next []any
		for _, c := range cur {
			switch {
			case s.index == -1:
				if m, ok := c.(map[string]any); ok {
					if e, ok := m[s.name]; ok {
						next = append(next, e)
					}
				}
			case s.index == -2:
				if l, ok := c.([]any); ok {
					next = append(next, l...)
				}
			default:
				if l, ok := c.([]any); ok && s.index < len(l) {
					next = append(next, l[s.index])
				}
			}
		}
		cur = next
	}
	return cur, nil
}

// lookupOne returns the single value a path without wildcards selects.
func lookupOne(v any, p string) (any, bool) {
	got, err := lookup(v, p)
	if err != nil || len(got) != 1 {
		return nil, false
	}
	return got[0], true
}

// ── Variables (ACTS §8, §12.2) ──────────────────────────────────────

var refRE = regexp.MustCompile(`\{\{\s*([^{}]+?)\s*\}\}`)

// scope resolves {{…}} references in one test: captures and step results
// first, then the runner's values, the document's variables, the
// environment and the built-in generators (§12.2; the runner's values
// come before the document's, which only hold placeholders for them).
type scope struct {
	captures map[string]any // "step.var" and "step.response"
	runner   map[string]string
	docVars  map[string]string
	depth    int
}

// resolveRef resolves one reference.
func (s *scope) resolveRef(name string) (any, error) {
	if v, ok := s.captures[name]; ok {
		return v, nil
	}
	if v, ok := s.runner[name]; ok {
		return v, nil
	}
	if v, ok := s.docVars[name]; ok {
		if s.depth > 8 {
			return nil, fmt.Errorf("variable %q refers to itself", name)
		}
		s.depth++
		defer func() { s.depth-- }()
		return s.expandString(v)
	}
	if env, ok := strings.CutPrefix(name, "env."); ok {
		if v, ok := os.LookupEnv(env); ok {
			return v, nil
		}
		return nil, fmt.Errorf("environment variable %s is not set", env)
	}
	if name == "$uuid" {
		return newUUID(), nil
	}
	return nil, fmt.Errorf("unresolved variable {{%s}}", name)
}

// expandString replaces the references in a string. A string that is one
// reference becomes the referenced value itself (an object, a number).
func (s *scope) expandString(str string) (any, error) {
	if m := refRE.FindStringSubmatchIndex(str); m != nil && m[0] == 0 && m[1] == len(str) {
		return s.resolveRef(str[m[2]:m[3]])
	}
	var firstErr error
	out := refRE.ReplaceAllStringFunc(str, func(ref string) string {
		v, err := s.resolveRef(refRE.FindStringSubmatch(ref)[1])
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			return ref
		}
		if str, ok := v.(string); ok {
			return str
		}
		b, _ := json.Marshal(v)
		return string(b)
	})
	return out, firstErr
}

// expand replaces the references in every string of a value.
func (s *scope) expand(v any) (any, error) {
	switch x := v.(type) {
	case string:
		return s.expandString(x)
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			r, err := s.expand(e)
			if err != nil {
				return nil, err
			}
			m[k] = r
		}
		return m, nil
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			r, err := s.expand(e)
			if err != nil {
				return nil, err
			}
			l[i] = r
		}
		return l, nil
	}
	return v, nil
}

// newUUID returns a random (version 4) UUID.
func newUUID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// ── until (ACTS §9.1) ───────────────────────────────────────────────

// until is a parsed repeat condition: path == v, path != v, path in [..].
type until struct {
	path   string
	op     string
	values []string
}

var untilRE = regexp.MustCompile(`^\s*(\S+)\s*(==|!=|\bin\b)\s*(.+?)\s*$`)

func parseUntil(s string) (*until, error) {
	m := untilRE.FindStringSubmatch(s)
	if m == nil {
		return nil, fmt.Errorf("repeat.until %q: expected `path == value`, `path != value` or `path in [a, b]`", s)
	}
	u := &until{path: m[1], op: m[2]}
	if u.op == "in" {
		list := strings.TrimSpace(m[3])
		if !strings.HasPrefix(list, "[") || !strings.HasSuffix(list, "]") {
			return nil, fmt.Errorf("repeat.until %q: `in` takes [a, b, …]", s)
		}
		for _, v := range strings.Split(list[1:len(list)-1], ",") {
			u.values = append(u.values, unquote(v))
		}
	} else {
		u.values = []string{unquote(m[3])}
	}
	return u, nil
}

func unquote(s string) string {
	s = strings.TrimSpace(s)
	if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0] {
		return s[1 : len(s)-1]
	}
	return s
}

// holds evaluates the condition on a response.
func (u *until) holds(root any) bool {
	v, ok := lookupOne(root, u.path)
	got := "<absent>"
	if ok {
		got = scalarText(v)
	}
	in := false
	for _, w := range u.values {
		if w == got {
			in = true
		}
	}
	if u.op == "!=" {
		return ok && !in
	}
	return in
}

// scalarText renders a value for comparisons with literals and reports.
func scalarText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(x)
	}
	b, _ := json.Marshal(v)
	return string(b)
}
