package acts

import (
	"encoding/json"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// y reads a YAML value into the JSON model.
func y(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := yaml.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return norm(v)
}

// j reads a JSON value.
func j(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestMatch: every operator of ACTS §5.1 (and items), each passing on one
// value and failing on another, with the path and text of its failure.
func TestMatch(t *testing.T) {
	const got = `{"id":"t-1","n":3,"big":"9007199254740993","ok":true,"nil":null,"list":[1,2,3],
		"obj":{"type":"about:blank","title":"x"},"text":"hello world","parts":[{"text":"a"},{"data":{}}]}`
	cases := []struct {
		name, want string
		fail       string // "" passes; else a piece of the failure
	}{
		{"exact string", `{id: t-1}`, ""},
		{"exact string differs", `{id: t-2}`, "id: values differ (expected t-2, got t-1)"},
		{"exact number", `{n: 3}`, ""},
		{"exact int64 as string", `{big: 9007199254740993}`, ""},
		{"exact number differs", `{n: 4}`, "n: values differ"},
		{"exact bool", `{ok: true}`, ""},
		{"exact bool differs", `{ok: false}`, "ok: values differ"},
		{"exact null", `{nil: null, nowhere: null}`, ""},
		{"exact null differs", `{id: null}`, "id: expected null"},
		{"absent member", `{nowhere: x}`, "nowhere: expected a value (expected x, got absent)"},
		{"type", `{id: {type: string}, n: {type: number}, ok: {type: boolean}, list: {type: array}, obj: {type: object}, nil: {type: "null"}}`, ""},
		{"type differs", `{id: {type: number}}`, "id: wrong type (expected number, got string)"},
		{"exists", `{id: {exists: true}, nowhere: {exists: false}}`, ""},
		{"exists fails", `{nowhere: {exists: true}}`, "nowhere: exists: true"},
		{"absent", `{nowhere: {absent: true}}`, ""},
		{"absent fails", `{id: {absent: true}}`, "id: absent: true"},
		{"contains", `{text: {contains: "lo wo"}, list: {contains: 2}}`, ""},
		{"contains fails", `{text: {contains: bye}}`, `text: contains failed (expected contains "bye"`},
		{"matches", `{text: {matches: "^hel+o"}}`, ""},
		{"matches fails", `{text: {matches: "^world"}}`, "text: matches failed"},
		{"starts_with and ends_with", `{text: {starts_with: hello, ends_with: world}}`, ""},
		{"starts_with fails", `{text: {starts_with: world}}`, "starts_with failed"},
		{"ends_with fails", `{text: {ends_with: hello}}`, "ends_with failed"},
		{"numbers", `{n: {gte: 3, lte: 3, gt: 2, lt: 4}}`, ""},
		{"gte fails", `{n: {gte: 4}}`, "n: gte failed"},
		{"lte fails", `{n: {lte: 2}}`, "n: lte failed"},
		{"gt fails", `{n: {gt: 3}}`, "n: gt failed"},
		{"lt fails", `{n: {lt: 3}}`, "n: lt failed"},
		{"counts", `{list: {count: 3, count_gte: 3, count_lte: 3}}`, ""},
		{"count fails", `{list: {count: 2}}`, "list: count failed (expected count 2, got 3 elements)"},
		{"count_gte fails", `{list: {count_gte: 4}}`, "count_gte failed"},
		{"count_lte fails", `{list: {count_lte: 2}}`, "count_lte failed"},
		{"one_of", `{id: {one_of: [x, t-1]}}`, ""},
		{"one_of fails", `{id: {one_of: [x, y]}}`, "id: not one of the listed values"},
		{"one_of of objects", `{obj: {one_of: [{title: y}, {title: x}]}}`, ""},
		{"all_of", `{id: {all_of: [{type: string}, {starts_with: t}]}}`, ""},
		{"all_of fails", `{id: {all_of: [{type: string}, {starts_with: x}]}}`, "id: starts_with failed"},
		{"any_of", `{id: {any_of: [{type: number}, {starts_with: t}]}}`, ""},
		{"any_of fails", `{id: {any_of: [{type: number}, {absent: true}]}}`, "id: no alternative of any_of passed"},
		{"not", `{id: {not: {type: number}}}`, ""},
		{"not fails", `{id: {not: {type: string}}}`, "id: the negated assertion passed"},
		{"nested arrays by position", `{parts: [{text: a}, {data: {}}]}`, ""},
		{"nested array too short", `{parts: [{}, {}, {}]}`, "parts: expected at least 3 elements"},
		{"nested array element differs", `{parts: [{text: b}]}`, "parts[0].text: values differ"},
		{"an object expected", `{id: {first: x}}`, "id: expected an object"},
		{"a member named type is a member", `{obj: {type: about:blank, title: x}}`, ""},
		{"items over every element", `{list: {items: {gte: 1}}}`, ""},
		{"items fails", `{list: {items: {lt: 3}}}`, "list[2]: lt failed"},
		{"items by position", `{parts: {items: [{text: a}]}}`, ""},
		{"operators on the root", `{any_of: [{id: x}, {id: t-1}]}`, ""},
	}
	root := j(t, got)
	for _, c := range cases {
		f := match("", y(t, c.want), root, true)
		switch {
		case c.fail == "" && f != nil:
			t.Errorf("%s: failed: %v", c.name, f)
		case c.fail != "" && f == nil:
			t.Errorf("%s: passed, want a failure with %q", c.name, c.fail)
		case c.fail != "" && !strings.Contains(f.Error(), c.fail):
			t.Errorf("%s: %q, want %q in it", c.name, f.Error(), c.fail)
		}
	}
}

// TestLookup: dot paths with indexes and wildcards (ACTS §5.2).
func TestLookup(t *testing.T) {
	v := j(t, `{"task":{"artifacts":[{"parts":[{"text":"a"},{"text":"b"}]},{"parts":[{"text":"c"}]}]}}`)
	for path, want := range map[string]string{
		"task.artifacts[0].parts[1].text": `["b"]`,
		"task.artifacts[*].parts[*].text": `["a","b","c"]`,
		"task.artifacts[1].parts[*]":      `[{"text":"c"}]`,
		"task.artifacts[9]":               `null`,
		"task.nothing.deeper":             `null`,
	} {
		got, err := lookup(v, path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(got)
		if string(b) != want {
			t.Errorf("%s: %s, want %s", path, b, want)
		}
	}
	if _, err := lookup(v, "task.[x]"); err == nil {
		t.Error("a bad path was accepted")
	}
}

// TestUntil: the three forms of ACTS §9.1, and what is refused.
func TestUntil(t *testing.T) {
	root := j(t, `{"status":{"state":"TASK_STATE_WORKING"},"n":2}`)
	for expr, want := range map[string]bool{
		"status.state == TASK_STATE_WORKING":                         true,
		"status.state == 'TASK_STATE_WORKING'":                       true,
		"status.state == TASK_STATE_COMPLETED":                       false,
		"status.state != TASK_STATE_COMPLETED":                       true,
		"status.state != TASK_STATE_WORKING":                         false,
		"status.state in [TASK_STATE_COMPLETED, TASK_STATE_WORKING]": true,
		"status.state in [TASK_STATE_COMPLETED]":                     false,
		"n == 2":                                                     true,
		"missing != x":                                               false,
	} {
		u, err := parseUntil(expr)
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		if got := u.holds(root); got != want {
			t.Errorf("%s: %v, want %v", expr, got, want)
		}
	}
	for _, bad := range []string{"", "status.state", "status.state ~ x", "x in y"} {
		if _, err := parseUntil(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestVariables: the order of ACTS §12.2 (captures, then the runner's
// values, the document's variables, the environment, $uuid), whole-string
// references keeping their type, and unresolved references refused.
func TestVariables(t *testing.T) {
	t.Setenv("ACTS_TEST_ENV", "from-env")
	sc := &scope{
		captures: map[string]any{"send.taskId": "t-1", "send.response": map[string]any{"n": 1.0}},
		runner:   map[string]string{"webhookUrl": "http://runner"},
		docVars:  map[string]string{"webhookUrl": "http://doc", "base": "{{env.ACTS_TEST_ENV}}/x", "loop": "{{loop}}"},
	}
	for in, want := range map[string]any{
		"{{send.taskId}}":                "t-1",
		"id={{ send.taskId }}":           "id=t-1",
		"{{webhookUrl}}":                 "http://runner",
		"{{base}}":                       "from-env/x",
		"{{send.response}}":              map[string]any{"n": 1.0},
		"r={{send.response}}":            `r={"n":1}`,
		"{{env.ACTS_TEST_ENV}}-{{base}}": "from-env-from-env/x",
	} {
		got, err := sc.expandString(in)
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		gb, _ := json.Marshal(got)
		wb, _ := json.Marshal(want)
		if string(gb) != string(wb) {
			t.Errorf("%s: %s, want %s", in, gb, wb)
		}
	}
	a, _ := sc.expandString("{{$uuid}}")
	b, _ := sc.expandString("{{$uuid}}")
	if a == b || len(a.(string)) != 36 {
		t.Errorf("$uuid: %v, %v", a, b)
	}
	for _, bad := range []string{"{{nobody}}", "{{env.ACTS_TEST_NEVER_SET}}", "{{loop}}", "x {{send.nothing}}"} {
		if _, err := sc.expandString(bad); err == nil {
			t.Errorf("%s resolved", bad)
		}
	}
}
