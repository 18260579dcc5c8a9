package cli

import (
	"strings"
	"testing"

	"parley.dev/parley/a2a"
)

// TestDescribeNotificationPlurals: counts read "1 message", "2 messages",
// "0 artifacts".
func TestDescribeNotificationPlurals(t *testing.T) {
	t.Parallel()
	one := &a2a.Message{MessageId: "m", Role: a2a.Role_ROLE_USER, Parts: []*a2a.Part{a2a.TextPart("hi")}}
	for _, tc := range []struct {
		history []*a2a.Message
		want    string
	}{
		{[]*a2a.Message{one}, "1 message, 0 artifacts"},
		{[]*a2a.Message{one, one}, "2 messages, 0 artifacts"},
		{nil, "0 messages, 0 artifacts"},
	} {
		ev := &a2a.StreamResponse{Payload: &a2a.StreamResponse_Task{Task: &a2a.Task{Id: "t", ContextId: "c", History: tc.history,
			Status: &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_WORKING}}}}
		if got := describeNotification(ev); !strings.Contains(got, tc.want) {
			t.Errorf("describeNotification(%d messages) = %q, want it to contain %q", len(tc.history), got, tc.want)
		}
	}
	if got := plural(1, "part"); got != "1 part" {
		t.Errorf("plural(1, part) = %q, want 1 part", got)
	}
}
