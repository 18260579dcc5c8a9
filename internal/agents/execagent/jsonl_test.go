package execagent_test

import (
	"encoding/json"
	"strings"
	"testing"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/agents/execagent"
	"parley.dev/parley/internal/testkit"
)

// askThenEcho asks a question on a new task; on the follow-up it returns
// the request it read as a data part.
const askThenEcho = `read -r req
if [ -z "$PARLEY_TASK_STATE" ]; then
  echo '{"state":"input-required","message":"which colour?"}'
  exit 0
fi
printf '{"artifact":{"artifactId":"req","parts":[{"data":%s}]},"lastChunk":true}\n' "$req"
echo '{"state":"COMPLETED"}'`

func TestJSONLinesInputRequiredThenFollowUp(t *testing.T) {
	c := start(t, askThenEcho, execagent.Options{Format: execagent.JSONLines})
	ctx := ctxFor(t)
	task := testkit.SendTask(t, ctx, c, "paint it", nil)
	if task.GetStatus().GetState() != a2a.TaskState_TASK_STATE_INPUT_REQUIRED || statusText(task) != "which colour?" {
		t.Fatalf("first answer %v, want INPUT_REQUIRED asking which colour", task.GetStatus())
	}
	resp, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.FollowUp(task, "blue")})
	if err != nil {
		t.Fatal(err)
	}
	done := resp.GetTask()
	if done.GetStatus().GetState() != a2a.TaskState_TASK_STATE_COMPLETED || len(done.GetArtifacts()) != 1 {
		t.Fatalf("follow-up answer %v, want COMPLETED with the request artifact", done)
	}
	raw, err := a2a.Marshal(done.GetArtifacts()[0].GetParts()[0].GetData())
	if err != nil {
		t.Fatal(err)
	}
	var req struct {
		TaskID  string          `json:"taskId"`
		Message json.RawMessage `json:"message"`
		Task    json.RawMessage `json:"task"`
	}
	if err := json.Unmarshal(raw, &req); err != nil {
		t.Fatalf("the program's request %s: %v", raw, err)
	}
	msg, prev := &a2a.Message{}, &a2a.Task{}
	if err := a2a.Unmarshal(req.Message, msg); err != nil {
		t.Fatal(err)
	}
	if err := a2a.Unmarshal(req.Task, prev); err != nil {
		t.Fatal(err)
	}
	if req.TaskID != task.GetId() || a2a.FirstText(msg) != "blue" || prev.GetStatus().GetState() != a2a.TaskState_TASK_STATE_INPUT_REQUIRED {
		t.Fatalf("request %s: want this task, the follow-up, the task as it was", raw)
	}
	var texts []string
	for _, m := range prev.GetHistory() {
		texts = append(texts, a2a.FirstText(m))
	}
	if !strings.Contains(strings.Join(texts, "|"), "paint it") {
		t.Errorf("history %q, want the first message in it", texts)
	}
}

func TestJSONLinesParts(t *testing.T) {
	script := `cat >/dev/null
echo '{"state":"WORKING","message":"starting"}'
echo '{"artifact":{"artifactId":"t","parts":[{"text":"Hel"}]}}'
echo '{"artifact":{"artifactId":"t","parts":[{"text":"lo"}]},"append":true,"lastChunk":true}'
echo '{"artifact":{"artifactId":"d","parts":[{"data":{"k":1}}]},"lastChunk":true}'
echo '{"artifact":{"artifactId":"f","parts":[{"raw":"aGk=","filename":"hi.txt","mediaType":"text/plain"}]},"lastChunk":true}'
echo
echo '{"state":"TASK_STATE_COMPLETED","message":"done"}'`
	c := start(t, script, execagent.Options{Format: execagent.JSONLines})
	task := testkit.SendTask(t, ctxFor(t), c, "x", nil)
	if task.GetStatus().GetState() != a2a.TaskState_TASK_STATE_COMPLETED || statusText(task) != "done" {
		t.Fatalf("status %v, want COMPLETED done", task.GetStatus())
	}
	arts := map[string]*a2a.Artifact{}
	for _, a := range task.GetArtifacts() {
		arts[a.GetArtifactId()] = a
	}
	if a2a.ArtifactText(arts["t"]) != "Hello" || arts["d"].GetParts()[0].GetData().GetStructValue().GetFields()["k"].GetNumberValue() != 1 ||
		string(arts["f"].GetParts()[0].GetRaw()) != "hi" || arts["f"].GetParts()[0].GetFilename() != "hi.txt" {
		t.Fatalf("artifacts %v", task.GetArtifacts())
	}
}

// TestJSONLinesBadLine: a line that breaks the protocol fails the task with
// a status message naming it; what came before it stays.
func TestJSONLinesBadLine(t *testing.T) {
	for name, tc := range map[string]struct{ line, want string }{
		"not json":      {`not json`, `line 2 of the program's output is not a valid event`},
		"unknown field": {`{"stat":"COMPLETED"}`, `unknown field`},
		"bad state":     {`{"state":"DONE"}`, `unknown state "DONE"`},
		"bad artifact":  {`{"artifact":{"parts":[{"text":"x"}]}}`, `artifactId`},
		"refused":       {`{"state":"WORKING"}` + "\n" + `{"artifact":{"artifactId":"` + strings.Repeat("x", 5000) + `","parts":[{"text":"x"}]}}`, `line 3 of the program's output was refused`},
	} {
		t.Run(name, func(t *testing.T) {
			script := "cat >/dev/null\necho '{\"artifact\":{\"artifactId\":\"kept\",\"parts\":[{\"text\":\"kept\"}]},\"lastChunk\":true}'\necho '" +
				strings.ReplaceAll(tc.line, "\n", "'\necho '") + "'\necho '{\"state\":\"COMPLETED\"}'"
			c := start(t, script, execagent.Options{Format: execagent.JSONLines})
			task := testkit.SendTask(t, ctxFor(t), c, "x", nil)
			if task.GetStatus().GetState() != a2a.TaskState_TASK_STATE_FAILED || !strings.Contains(statusText(task), tc.want) {
				t.Fatalf("status %v %q; want FAILED containing %q", task.GetStatus().GetState(), statusText(task), tc.want)
			}
			if len(task.GetArtifacts()) != 1 || a2a.ArtifactText(task.GetArtifacts()[0]) != "kept" {
				t.Errorf("artifacts %v; want the one sent before the bad line", task.GetArtifacts())
			}
		})
	}
}

// TestJSONLinesExitWithoutState: exit 0 without a final state completes the
// task; a non-zero exit fails it.
func TestJSONLinesExitWithoutState(t *testing.T) {
	c := start(t, `cat >/dev/null; echo '{"state":"WORKING"}'`, execagent.Options{Format: execagent.JSONLines})
	if task := testkit.SendTask(t, ctxFor(t), c, "x", nil); task.GetStatus().GetState() != a2a.TaskState_TASK_STATE_COMPLETED {
		t.Fatalf("status %v, want COMPLETED", task.GetStatus())
	}
	c = start(t, `cat >/dev/null; echo '{"state":"WORKING"}'; exit 1`, execagent.Options{Format: execagent.JSONLines})
	if task := testkit.SendTask(t, ctxFor(t), c, "x", nil); task.GetStatus().GetState() != a2a.TaskState_TASK_STATE_FAILED {
		t.Fatalf("status %v, want FAILED", task.GetStatus())
	}
}
