package cli

import (
	"bytes"
	"strings"
	"testing"

	"parley.dev/parley/a2a"
)

// TestStateExit: the one mapping from the state a command leaves a task
// in to its exit code.
func TestStateExit(t *testing.T) {
	for st, want := range map[a2a.TaskState]int{
		a2a.TaskState_TASK_STATE_UNSPECIFIED:    ExitOK, // a direct reply: no task
		a2a.TaskState_TASK_STATE_SUBMITTED:      ExitOK,
		a2a.TaskState_TASK_STATE_WORKING:        ExitOK,
		a2a.TaskState_TASK_STATE_COMPLETED:      ExitOK,
		a2a.TaskState_TASK_STATE_FAILED:         ExitTaskFailed,
		a2a.TaskState_TASK_STATE_REJECTED:       ExitTaskFailed,
		a2a.TaskState_TASK_STATE_CANCELED:       ExitTaskFailed,
		a2a.TaskState_TASK_STATE_INPUT_REQUIRED: ExitTaskPaused,
		a2a.TaskState_TASK_STATE_AUTH_REQUIRED:  ExitTaskPaused,
	} {
		if got := stateExit(st); got != want {
			t.Errorf("stateExit(%v) = %d, want %d", st, got, want)
		}
		err := stateResult(st)
		if got := exitCode(err); got != want {
			t.Errorf("exitCode(stateResult(%v)) = %d, want %d", st, got, want)
		}
		if (err == nil) != (want == ExitOK) {
			t.Errorf("stateResult(%v) = %v", st, err)
		}
	}
}

// snapshotEvents is a subscription's stream: the Task snapshot holding a
// finished artifact and the first chunk of one under way, then the rest.
func snapshotEvents() []a2a.StreamEvent {
	ev := func(r *a2a.StreamResponse) a2a.StreamEvent { return a2a.StreamEvent{Response: r} }
	notes := &a2a.Artifact{ArtifactId: "notes", Parts: []*a2a.Part{a2a.TextPart("to"), a2a.TextPart("gether")}}
	return []a2a.StreamEvent{
		ev(&a2a.StreamResponse{Payload: &a2a.StreamResponse_Task{Task: &a2a.Task{Id: "t-1", ContextId: "c-1",
			Status:    &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_WORKING},
			Artifacts: []*a2a.Artifact{notes, a2a.TextArtifact("story", "Once ")}}}}),
		ev(&a2a.StreamResponse{Payload: &a2a.StreamResponse_ArtifactUpdate{ArtifactUpdate: &a2a.TaskArtifactUpdateEvent{
			TaskId: "t-1", ContextId: "c-1", Artifact: a2a.TextArtifact("story", "upon a time."), Append: true, LastChunk: true}}}),
		ev(&a2a.StreamResponse{Payload: &a2a.StreamResponse_StatusUpdate{StatusUpdate: &a2a.TaskStatusUpdateEvent{
			TaskId: "t-1", ContextId: "c-1", Status: &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_COMPLETED}}}}),
	}
}

// TestStreamPrinterSnapshotArtifacts: the artifacts of the Task that
// starts a stream are shown, piped as text the later chunks continue, on a
// terminal whole.
func TestStreamPrinterSnapshotArtifacts(t *testing.T) {
	var out bytes.Buffer
	o := &output{w: &out, errw: &out}
	p := newStreamPrinter(o)
	for _, ev := range snapshotEvents() {
		p.event(ev)
	}
	p.done()
	want := "task t-1  WORKING  context c-1\n" +
		"artifact notes: together\n" +
		"artifact story: Once upon a time.\n" +
		"status COMPLETED\n"
	if out.String() != want {
		t.Fatalf("piped:\n%s\nwant:\n%s", out.String(), want)
	}

	tty := &lockedBuffer{}
	o = &output{w: tty, errw: tty, tty: true}
	p = newStreamPrinter(o)
	for _, ev := range snapshotEvents() {
		p.event(ev)
	}
	p.done()
	s := tty.String()
	for _, want := range []string{"artifact notes\n    together\n", "artifact story\n    Once upon a time.\n"} {
		if !strings.Contains(s, want) {
			t.Errorf("terminal output lacks %q:\n%q", want, s)
		}
	}
	if strings.Count(s, "together") != 1 {
		t.Errorf("the finished artifact should be shown once:\n%q", s)
	}
}
