package a2a

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// TestMethodRights: every operation of the method table needs exactly the
// right this table says, and a caller holding only that right passes
// Authorize while one holding every other right is refused with a
// PermissionDeniedError naming it.
func TestMethodRights(t *testing.T) {
	want := map[string]Right{
		MethodSendMessage:                      RightTasksWrite,
		MethodSendStreamingMessage:             RightTasksWrite,
		MethodGetTask:                          RightTasksRead,
		MethodListTasks:                        RightTasksRead,
		MethodCancelTask:                       RightTasksWrite,
		MethodSubscribeToTask:                  RightTasksRead,
		MethodCreateTaskPushNotificationConfig: RightPush,
		MethodGetTaskPushNotificationConfig:    RightPush,
		MethodListTaskPushNotificationConfigs:  RightPush,
		MethodDeleteTaskPushNotificationConfig: RightPush,
		MethodGetExtendedAgentCard:             RightExtendedCard,
	}
	n := 0
	for m := range Methods() {
		n++
		t.Run(m.Name, func(t *testing.T) {
			r, ok := want[m.Name]
			if !ok {
				t.Fatalf("%s: no right in this test's table", m.Name)
			}
			if m.Right != r {
				t.Fatalf("%s.Right = %q, want %q", m.Name, m.Right, r)
			}
			if err := Authorize(&CallInfo{Rights: Rights{r}}, m.Right); err != nil {
				t.Errorf("Authorize(only %s) = %v, want nil", r, err)
			}
			others := slices.DeleteFunc(KnownRights(), func(x Right) bool { return x == r || x == RightAll })
			err := Authorize(&CallInfo{Rights: others}, m.Right)
			var e *Error
			if !errors.As(err, &e) || e.Code != CodePermissionDenied || !strings.Contains(e.Message, `"`+string(r)+`"`) {
				t.Fatalf("Authorize(%v) = %v, want PermissionDeniedError naming %s", others, err, r)
			}
		})
	}
	if n != len(want) {
		t.Errorf("%d operations in the table, %d in this test", n, len(want))
	}
}

// TestRightsHas: nil has every right, "*" too, an empty set none.
func TestRightsHas(t *testing.T) {
	for _, c := range []struct {
		rs   Rights
		r    Right
		want bool
	}{
		{nil, RightPush, true},
		{Rights{RightAll}, RightExtendedCard, true},
		{Rights{}, RightTasksRead, false},
		{Rights{RightTasksRead}, RightTasksRead, true},
		{Rights{RightTasksRead}, RightTasksWrite, false},
	} {
		if got := c.rs.Has(c.r); got != c.want {
			t.Errorf("%#v.Has(%s) = %v, want %v", c.rs, c.r, got, c.want)
		}
	}
	if err := Authorize(nil, RightPush); err != nil {
		t.Errorf("Authorize(no CallInfo) = %v, want nil (the Go API in process)", err)
	}
}

// TestParseRights: lists by commas or spaces, duplicates dropped; unknown
// names and empty lists refused.
func TestParseRights(t *testing.T) {
	got, err := ParseRights("tasks:read, card:extended,tasks:read")
	if err != nil || !slices.Equal(got, Rights{RightTasksRead, RightExtendedCard}) {
		t.Errorf("ParseRights = %v %v", got, err)
	}
	for _, bad := range []string{"", " , ", "tasks:reed", "tasks:read,admin"} {
		if r, err := ParseRights(bad); err == nil {
			t.Errorf("ParseRights(%q) = %v, want an error", bad, r)
		}
	}
	if r := RightsOf([]string{"openid", "push", "push"}); !slices.Equal(r, Rights{RightPush}) {
		t.Errorf("RightsOf = %v, want [push]", r)
	}
	if r := RightsOf(nil); r == nil || len(r) != 0 {
		t.Errorf("RightsOf(nil) = %#v, want an empty, non-nil set", r)
	}
}
