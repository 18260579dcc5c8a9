package cli

import (
	"bytes"
	"strings"
	"testing"

	"parley.dev/parley/a2a"
)

// TestOutcome: a command that leaves a task in a state other than
// COMPLETED names it in a warning on stderr, and nothing else; the exit
// status does not depend on it (A2A CLI SPEC §6.6).
func TestOutcome(t *testing.T) {
	for st, want := range map[a2a.TaskState]string{
		a2a.TaskState_TASK_STATE_UNSPECIFIED:    "", // a direct reply: no task
		a2a.TaskState_TASK_STATE_SUBMITTED:      "",
		a2a.TaskState_TASK_STATE_WORKING:        "",
		a2a.TaskState_TASK_STATE_COMPLETED:      "",
		a2a.TaskState_TASK_STATE_FAILED:         "warning: task t-1 ended FAILED",
		a2a.TaskState_TASK_STATE_REJECTED:       "warning: task t-1 ended REJECTED",
		a2a.TaskState_TASK_STATE_CANCELED:       "warning: task t-1 ended CANCELED",
		a2a.TaskState_TASK_STATE_INPUT_REQUIRED: "warning: task t-1 stopped INPUT_REQUIRED; reply with: parley send -a http://h --task-id t-1 TEXT",
		a2a.TaskState_TASK_STATE_AUTH_REQUIRED:  "warning: task t-1 stopped AUTH_REQUIRED",
	} {
		var out, errs bytes.Buffer
		e := &env{name: "send", stdout: &out, stderr: &errs}
		e.outcome("http://h", "t-1", st)
		if out.Len() != 0 || (want == "") != (errs.Len() == 0) || !strings.Contains(errs.String(), want) {
			t.Errorf("outcome(%v): stdout %q, stderr %q; want a warning with %q", st, out.String(), errs.String(), want)
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
// starts a stream are shown once each: whole at the last chunk that
// continues one, or at the end of the stream.
func TestStreamPrinterSnapshotArtifacts(t *testing.T) {
	var out bytes.Buffer
	o := &output{w: &out, errw: &out}
	p := newStreamPrinter(o)
	for _, ev := range snapshotEvents() {
		p.event(ev)
	}
	p.done()
	want := "Task ID: t-1\nContext ID: c-1\nState: TASK_STATE_WORKING\n" +
		"Artifact ID: story\nArtifact:\n  Once upon a time.\n\n" +
		"State: TASK_STATE_COMPLETED\n" +
		"Artifact ID: notes\nArtifact:\n  together\n\n"
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
	for _, want := range []string{"Artifact ID: notes\nArtifact:\n  together\n\n", "Artifact ID: story\nArtifact:\n  Once upon a time.\n\n"} {
		if !strings.Contains(s, want) {
			t.Errorf("terminal output lacks %q:\n%q", want, s)
		}
	}
	if strings.Count(s, "together") != 1 {
		t.Errorf("the finished artifact should be shown once:\n%q", s)
	}
}
