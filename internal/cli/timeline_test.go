package cli_test

import (
	"strings"
	"testing"
)

// TestTaskGetTimeline: `task get --timeline` asks an A2A 1.1 agent for the
// task's timeline (a 1.1 call, whatever --a2a-version says) and shows it
// by generation, in text and in JSON; --timeline 1 the last entry only;
// without the flag, a 1.0 call shows none.
func TestTaskGetTimeline(t *testing.T) {
	t.Parallel()
	p := serve(t, "--agent", "conformance", "--store", "memory", "--protocol-versions", "1.1,1.0,0.3")
	url := "http://" + p.addr
	out, _ := mustRun(t, 0, "send", url, "input-required", "--json")
	id := field(jsonOf(t, out), "task", "id").(string)
	mustRun(t, 0, "send", url, "--task", id, "the missing piece")

	text, _ := mustRun(t, 0, "task", "get", url, id, "--timeline", "all")
	contains(t, "text", text, "Timeline:")
	contains(t, "text", text, "user  input-required")
	contains(t, "text", text, "user  the missing piece")
	if i, j := strings.Index(text, "user  input-required"), strings.Index(text, "user  the missing piece"); i < 0 || j < i {
		t.Errorf("the timeline is not in generation order:\n%s", text)
	}

	js, _ := mustRun(t, 0, "task", "get", url, id, "--timeline", "1", "--json")
	m := jsonOf(t, js)
	tl, ok := m["timeline"].([]any)
	if !ok || len(tl) != 1 || field(tl[0].(map[string]any), "generation") != m["generation"] {
		t.Errorf("--timeline 1 --json: %s; want the one last entry, at the task's generation", js)
	}

	plain, _ := mustRun(t, 0, "task", "get", url, id)
	if strings.Contains(plain, "Timeline") {
		t.Errorf("task get without --timeline (a 1.0 call) shows a timeline:\n%s", plain)
	}
	_, errs, code := parley(t, "task", "get", url, id, "--timeline", "-2")
	if code != 2 {
		t.Errorf("--timeline -2: exit %d, %s; want 2", code, errs)
	}
}
