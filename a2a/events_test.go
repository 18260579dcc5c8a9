package a2a

import "testing"

// taskEvent is a Task snapshot in state s with the artifacts.
func taskEvent(s TaskState, arts ...*Artifact) StreamEvent {
	return StreamEvent{Response: &StreamResponse{Payload: &StreamResponse_Task{Task: &Task{Id: "t-1", ContextId: "c-1",
		Status: &TaskStatus{State: s, Message: AgentMessage("snap")}, Artifacts: arts}}}}
}

// statusEvent is a status update to state s.
func statusEvent(s TaskState) StreamEvent {
	return StreamEvent{Response: &StreamResponse{Payload: &StreamResponse_StatusUpdate{StatusUpdate: &TaskStatusUpdateEvent{
		TaskId: "t-1", ContextId: "c-1", Status: &TaskStatus{State: s, Message: AgentMessage("news")}}}}}
}

// msgEvent is a direct Message reply.
func msgEvent() StreamEvent {
	m := AgentMessage("reply")
	m.ContextId = "c-2"
	return StreamEvent{Response: &StreamResponse{Payload: &StreamResponse_Message{Message: m}}}
}

func TestStreamEventHelpers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		ev            StreamEvent
		kind          EventKind
		task, context string
		state         TaskState
		snapshot      bool
		final         bool
		msg, art      string
	}{
		{"zero", StreamEvent{}, EventNone, "", "", StateUnspecified, false, false, "", ""},
		{"empty response", StreamEvent{Response: &StreamResponse{}}, EventNone, "", "", StateUnspecified, false, false, "", ""},
		{"snapshot working", taskEvent(StateWorking), EventTask, "t-1", "c-1", StateWorking, true, false, "snap", ""},
		{"snapshot input required", taskEvent(StateInputRequired), EventTask, "t-1", "c-1", StateInputRequired, true, false, "snap", ""},
		{"snapshot completed", taskEvent(StateCompleted), EventTask, "t-1", "c-1", StateCompleted, true, true, "snap", ""},
		{"status working", statusEvent(StateWorking), EventStatusUpdate, "t-1", "c-1", StateWorking, false, false, "news", ""},
		{"status input required", statusEvent(StateInputRequired), EventStatusUpdate, "t-1", "c-1", StateInputRequired, false, true, "news", ""},
		{"status auth required", statusEvent(StateAuthRequired), EventStatusUpdate, "t-1", "c-1", StateAuthRequired, false, true, "news", ""},
		{"status failed", statusEvent(StateFailed), EventStatusUpdate, "t-1", "c-1", StateFailed, false, true, "news", ""},
		{"artifact", chunkEvent("a", false, true, "x"), EventArtifactUpdate, "t-1", "c-1", StateUnspecified, false, false, "", "a"},
		{"message", msgEvent(), EventMessage, "", "c-2", StateUnspecified, false, true, "reply", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ev := tt.ev
			if got := ev.Kind(); got != tt.kind {
				t.Errorf("Kind() = %q, want %q", got, tt.kind)
			}
			if got := ev.TaskID(); got != tt.task {
				t.Errorf("TaskID() = %q, want %q", got, tt.task)
			}
			if got := ev.ContextID(); got != tt.context {
				t.Errorf("ContextID() = %q, want %q", got, tt.context)
			}
			if got := ev.State(); got != tt.state {
				t.Errorf("State() = %v, want %v", got, tt.state)
			}
			if got := ev.Snapshot(); got != tt.snapshot {
				t.Errorf("Snapshot() = %v, want %v", got, tt.snapshot)
			}
			if got := ev.Final(); got != tt.final {
				t.Errorf("Final() = %v, want %v", got, tt.final)
			}
			if got := FirstText(ev.Message()); got != tt.msg {
				t.Errorf("Message() text = %q, want %q", got, tt.msg)
			}
			if got := ev.Artifact().GetArtifactId(); got != tt.art {
				t.Errorf("Artifact() id = %q, want %q", got, tt.art)
			}
		})
	}
}

// TestStateNames: the short names are the generated values, and the
// predicates split the states into active, interrupted and terminal.
func TestStateNames(t *testing.T) {
	t.Parallel()
	if StateInputRequired != TaskState_TASK_STATE_INPUT_REQUIRED || RoleAgent != Role_ROLE_AGENT {
		t.Fatal("short names differ from the generated values")
	}
	for v := range TaskState_name {
		s := TaskState(v)
		n := 0
		for _, p := range []func(TaskState) bool{IsActive, IsInterrupted, IsTerminal} {
			if p(s) {
				n++
			}
		}
		want := 1
		if s == StateUnspecified {
			want = 0
		}
		if n != want {
			t.Errorf("%v matches %d of IsActive, IsInterrupted, IsTerminal, want %d", s, n, want)
		}
	}
}

func TestFollowUp(t *testing.T) {
	t.Parallel()
	m := FollowUp(&Task{Id: "t-1", ContextId: "c-1"}, "yes")
	if m.TaskId != "t-1" || m.ContextId != "c-1" || m.Role != RoleUser || FirstText(m) != "yes" || m.MessageId == "" {
		t.Errorf("FollowUp(t-1, yes) = %v", m)
	}
	if m2 := UserMessageFor("t-1", "", "no"); m2.TaskId != "t-1" || m2.ContextId != "" || m2.MessageId == m.MessageId {
		t.Errorf("UserMessageFor(t-1, \"\", no) = %v", m2)
	}
	defer func() {
		if recover() == nil {
			t.Error("FollowUp(nil) did not panic")
		}
	}()
	FollowUp(nil, "x")
}
