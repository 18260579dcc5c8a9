package client

import (
	"fmt"
	"testing"
	"time"

	"parley.dev/parley/a2a"
)

// TestAnswers: the history tells whether a status message comes after a
// message, before it, or cannot tell.
func TestAnswers(t *testing.T) {
	t.Parallel()
	msg := func(id string) *a2a.Message { return &a2a.Message{MessageId: id} }
	task := func(status string, history ...string) *a2a.Task {
		t := &a2a.Task{Status: &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_INPUT_REQUIRED}}
		if status != "" {
			t.Status.Message = msg(status)
		}
		for _, h := range history {
			t.History = append(t.History, msg(h))
		}
		return t
	}
	cases := []struct {
		task *a2a.Task
		mine string
		want int
	}{
		{task("q2", "m1", "q1", "m2", "q2"), "m2", 1},
		{task("q1", "m1", "q1", "m2"), "m2", -1},
		{task("", "m1", "q1", "m2"), "m2", 0},
		{task("q2", "q2"), "m2", 0}, // history trimmed: the follow-up is not in it
		{task("q2", "m2"), "m2", 0}, // the status message is not in the history
		{task("q2", "m2", "q2"), "", 0},
	}
	for i, tc := range cases {
		if got := answers(tc.task, tc.mine); got != tc.want {
			t.Errorf("case %d: answers(%v, %q) = %d, want %d", i, tc.task, tc.mine, got, tc.want)
		}
	}
}

// TestNotesCurrent: an interrupted state older than the pending follow-up
// is not current; a later timestamp, or a working state seen since, clears
// the follow-up.
func TestNotesCurrent(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1000, 0)
	at := func(state a2a.TaskState, ts time.Time) *a2a.Task {
		return &a2a.Task{Id: "t", Status: &a2a.TaskStatus{State: state, Timestamp: a2a.Timestamp(ts)}}
	}
	input := a2a.TaskState_TASK_STATE_INPUT_REQUIRED
	var n notes
	n.observe("t", at(input, t0).Status)
	n.sent("m", at(input, t0), n.seenAt("t"))
	if n.current(at(input, t0)) {
		t.Fatal("current(the state the follow-up found) = true, want false")
	}
	if !n.current(at(input, t0.Add(time.Millisecond))) {
		t.Fatal("current(a later interrupted state) = false, want true")
	}
	if !n.current(at(input, t0)) {
		t.Fatal("current after the answer was seen = false, want true (nothing pending)")
	}

	// A reply that is already newer than what was seen before the send
	// is the answer.
	n.sent("m2", at(input, t0.Add(time.Second)), n.seenAt("t"))
	if p := n.pendingOn("t"); p != "" {
		t.Fatalf("pending after a newer reply = %q, want none", p)
	}

	// Without timestamps, a working state seen since clears the follow-up.
	n.sent("m3", &a2a.Task{Id: "t", Status: &a2a.TaskStatus{State: input}}, nil)
	if n.current(&a2a.Task{Id: "t", Status: &a2a.TaskStatus{State: input}}) {
		t.Fatal("current(unstamped old state) = true, want false")
	}
	if n.current(at(a2a.TaskState_TASK_STATE_WORKING, t0)) {
		t.Fatal("current(WORKING) = true, want false")
	}
	if !n.current(&a2a.Task{Id: "t", Status: &a2a.TaskStatus{State: input}}) {
		t.Fatal("current(interrupted after WORKING) = false, want true")
	}

	// A terminal task is forgotten.
	if !n.current(at(a2a.TaskState_TASK_STATE_COMPLETED, t0)) || n.get("t", false) != nil {
		t.Fatal("a completed task is still remembered")
	}
}

// TestNotesBounded: the Client remembers a bounded number of tasks.
func TestNotesBounded(t *testing.T) {
	t.Parallel()
	var n notes
	st := &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_INPUT_REQUIRED, Timestamp: a2a.Timestamp(time.Unix(1, 0))}
	for i := range 3 * maxNotes {
		n.observe(fmt.Sprint("t", i), st)
	}
	if len(n.tasks) > maxNotes {
		t.Fatalf("%d tasks remembered, want at most %d", len(n.tasks), maxNotes)
	}
}
