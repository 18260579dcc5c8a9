package a2a

import (
	"fmt"
	"slices"
	"strings"
)

// Right is a permission a caller's credential grants: spec §3.3.2 has a
// server refuse an authenticated caller that "lacks required permissions",
// and §13.1 asks for authorization checks on every operation, without
// naming any. Parley's rights are few and coarse, one per kind of
// operation; the right each operation needs is its Method.Right, the one
// place that says so.
type Right string

// The rights. RightAll stands for all of them, those added later included.
const (
	// RightTasksRead reads tasks: GetTask, ListTasks, SubscribeToTask.
	RightTasksRead Right = "tasks:read"
	// RightTasksWrite sends messages and cancels tasks: SendMessage,
	// SendStreamingMessage, CancelTask. Their answers (the task a send
	// made or continued, the canceled task) come with the right.
	RightTasksWrite Right = "tasks:write"
	// RightPush manages push notification configurations: the four
	// *TaskPushNotificationConfig operations, and a send that carries one
	// (SendMessageConfiguration.task_push_notification_config).
	RightPush Right = "push"
	// RightExtendedCard reads the extended agent card
	// (GetExtendedAgentCard; spec §13.3: "Agents MUST validate that
	// clients have appropriate permissions before returning privileged
	// information in extended cards").
	RightExtendedCard Right = "card:extended"
	// RightAll grants every right.
	RightAll Right = "*"
)

// rightNames are the rights ParseRights knows, in the order they are
// documented.
var rightNames = []Right{RightTasksRead, RightTasksWrite, RightPush, RightExtendedCard, RightAll}

// KnownRights returns the rights ParseRights accepts.
func KnownRights() []Right { return slices.Clone(rightNames) }

// Rights is what a credential allows. A nil Rights is a credential that
// declares none, which keeps every right (a plain bearer token, an API key
// without rights, the Go API in process): rights only ever narrow what a
// caller may do. An empty, non-nil Rights allows nothing.
type Rights []Right

// AllRights is the Rights of a credential that declares none.
var AllRights Rights

// Has reports whether the rights include r: a nil Rights, or one holding
// RightAll or r.
func (rs Rights) Has(r Right) bool {
	return rs == nil || slices.Contains(rs, RightAll) || slices.Contains(rs, r)
}

// String lists the rights, comma-separated ("*" for a nil Rights).
func (rs Rights) String() string {
	if rs == nil {
		return string(RightAll)
	}
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = string(r)
	}
	return strings.Join(s, ",")
}

// ParseRights reads a list of rights separated by commas or white space,
// as operators write them ("tasks:read,card:extended", "*"). Every name
// must be a known right; the result is never nil (a list that names no
// right is an error).
func ParseRights(s string) (Rights, error) {
	f := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })
	if len(f) == 0 {
		return nil, fmt.Errorf("no rights in %q: want some of %s", s, Rights(rightNames))
	}
	out := Rights{}
	for _, name := range f {
		r := Right(name)
		if !slices.Contains(rightNames, r) {
			return nil, fmt.Errorf("unknown right %q: want some of %s", name, Rights(rightNames))
		}
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out, nil
}

// RightsOf picks the known rights among a token's scopes (an OAuth 2.0
// "scope" or "scp" claim: RFC 8693 §4.2, RFC 9068 §2.2.3), ignoring the
// others ("openid", an issuer's own scopes). The result is never nil:
// scopes that name no right of Parley's allow nothing.
func RightsOf(scopes []string) Rights {
	out := Rights{}
	for _, s := range scopes {
		r := Right(s)
		if slices.Contains(rightNames, r) && !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

// Authorize checks that the call's caller holds the right r (spec §3.3.2):
// nil when it does, a PermissionDeniedError otherwise, whose message names
// the right (§3.3.2: servers "SHOULD indicate what permission or scope is
// missing"). It carries no metadata, so no ErrorInfo: its code alone says
// what it is on every binding, which is how the official Go SDK's client
// reads it too. A CallInfo of nil (the Go API in process) holds every
// right.
func Authorize(ci *CallInfo, r Right) error {
	if ci == nil || ci.Rights.Has(r) {
		return nil
	}
	return NewError(CodePermissionDenied, "permission denied: this credential lacks the right %q", r)
}
