package server_test

// The characters of identifiers: a control character, a format character,
// a line or paragraph separator or a byte that is not UTF-8 in any
// identifier of any operation is refused with InvalidParams
// naming the field, whatever Limits.MaxIDBytes says, and nothing is stored.

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"unicode"
	"unicode/utf8"

	"parley.dev/parley/a2a"
	"parley.dev/parley/server"
)

// badIDs are identifiers no request may carry, and what the refusal says.
var badIDs = []struct{ name, id, says string }{
	{"NUL", "msg\x00id", "control character (byte 3 is 0x00)"},
	{"first byte", "\x01", "control character (byte 0 is 0x01)"},
	{"LF", "a\nb", "control character (byte 1 is LF (0x0a))"},
	{"ESC", "\x1b[31mred", "control character (byte 0 is 0x1b)"},
	{"DEL", "a\x7f", "control character (byte 1 is 0x7f)"},
	{"C1 CSI", "a\u009b31m", "control character (U+009B at byte 1)"},
	{"invalid UTF-8", "a\xffb", "not valid UTF-8 (byte 1 is 0xff)"},
	{"cut UTF-8", "ok\xe2\x82", "not valid UTF-8 (byte 2 is 0xe2)"},
	{"surrogate", "a\xed\xa0\x80", "not valid UTF-8 (byte 1 is 0xed)"},
	{"zero width space", "a\u200bb", "format character (U+200B at byte 1)"},
	{"right-to-left override", "inv\u202eexe.pdf", "format character (U+202E at byte 3)"},
	{"byte order mark", "\ufeffid", "format character (U+FEFF at byte 0)"},
	{"soft hyphen", "a\u00adb", "format character (U+00AD at byte 1)"},
	{"tag character", "a\U000E0041", "format character (U+E0041 at byte 1)"},
	{"line separator", "a\u2028b", "line or paragraph separator (U+2028 at byte 1)"},
	{"paragraph separator", "a\u2029b", "line or paragraph separator (U+2029 at byte 1)"},
}

// TestIDCharacters: every identifier of every operation, with each bad
// identifier, on a server with the length limit on and on one with it off.
func TestIDCharacters(t *testing.T) {
	t.Parallel()
	for _, lim := range []server.Limits{{}, {MaxIDBytes: -1}} {
		s := newServer(t, server.Options{Limits: lim})
		parked := sendTask(t, s, anon(t), "input-required")
		for _, bad := range badIDs {
			var cases []idCase
			cases = append(cases, sendIDCases(s, bad.id)...)
			cases = append(cases, taskIDCases(s, parked.Id, bad.id)...)
			cases = append(cases, pushConfigIDCases(s, parked.Id, bad.id)...)
			cases = append(cases, moreIDCases(s, parked.Id, bad.id)...)
			for _, tc := range cases {
				what := tc.name + " " + bad.name
				v := violation(t, what, tc.call(anon(t)), tc.field)
				if v.Field != "" && !strings.HasSuffix(v.Description, bad.says) {
					t.Errorf("%s: %q, want it to say %q", what, v.Description, bad.says)
				}
				if strings.Contains(v.Description, bad.id) {
					t.Errorf("%s: the violation echoes the id", what)
				}
			}
		}
		list, err := s.ListTasks(anon(t), &a2a.ListTasksRequest{})
		if err != nil || len(list.Tasks) != 1 || list.Tasks[0].Id != parked.Id || len(list.Tasks[0].History) != len(parked.History) {
			t.Errorf("after the refusals the store holds %v (%v); want only the parked task, unchanged", list, err)
		}
		cfgs, err := s.ListTaskPushNotificationConfigs(anon(t), &a2a.ListTaskPushNotificationConfigsRequest{TaskId: parked.Id})
		if err != nil || len(cfgs.Configs) != 0 {
			t.Errorf("after the refusals the parked task has push configurations %v (%v)", cfgs, err)
		}
	}
}

// moreIDCases: the identifier-like strings the other tables leave out.
func moreIDCases(s *server.Server, parkedID, bad string) []idCase {
	send := func(mod func(r *a2a.SendMessageRequest)) func(ctx context.Context) error {
		return func(ctx context.Context) error {
			req := msgReq("x")
			mod(req)
			_, err := s.SendMessage(ctx, req)
			return err
		}
	}
	return []idCase{
		{"SendMessage extensions", "message.extensions[0]", send(func(r *a2a.SendMessageRequest) { r.Message.Extensions = []string{bad} })},
		{"SendMessage acceptedOutputModes", "configuration.acceptedOutputModes[1]", send(func(r *a2a.SendMessageRequest) {
			r.Configuration = &a2a.SendMessageConfiguration{AcceptedOutputModes: []string{"text/plain", bad}}
		})},
		{"SendMessage inline push taskId", "configuration.taskPushNotificationConfig.taskId", send(func(r *a2a.SendMessageRequest) {
			r.Configuration = &a2a.SendMessageConfiguration{TaskPushNotificationConfig: &a2a.TaskPushNotificationConfig{TaskId: bad, Url: "https://hooks.example/"}}
		})},
		{"SendMessage inline push tenant", "configuration.taskPushNotificationConfig.tenant", send(func(r *a2a.SendMessageRequest) {
			r.Configuration = &a2a.SendMessageConfiguration{TaskPushNotificationConfig: &a2a.TaskPushNotificationConfig{Tenant: bad, Url: "https://hooks.example/"}}
		})},
		{"Create tenant", "tenant", func(ctx context.Context) error {
			_, err := s.CreateTaskPushNotificationConfig(ctx, &a2a.TaskPushNotificationConfig{TaskId: parkedID, Tenant: bad, Url: "https://hooks.example/"})
			return err
		}},
		{"ListTasks tenant", "tenant", func(ctx context.Context) error {
			_, err := s.ListTasks(ctx, &a2a.ListTasksRequest{Tenant: bad})
			return err
		}},
		{"CancelTask tenant", "tenant", func(ctx context.Context) error {
			_, err := s.CancelTask(ctx, &a2a.CancelTaskRequest{Id: parkedID, Tenant: bad})
			return err
		}},
	}
}

// TestIDCharactersAccepted: identifiers of any printable text, spaces and
// characters outside ASCII included, are accepted and kept as sent.
func TestIDCharactersAccepted(t *testing.T) {
	t.Parallel()
	s := newServer(t, server.Options{})
	for _, id := range []string{"tâche 1", "日本語-ид", "🙂\u00a0x", "a~!@#$%^&*()", "שלום-1", "x\u3000y"} {
		req := msgReq("x")
		req.Message.MessageId, req.Message.ContextId = id, id
		tk := taskOf(t)(s.SendMessage(anon(t), req))
		if tk.ContextId != id || tk.History[0].MessageId != id {
			t.Errorf("%q: task context %q, message %q", id, tk.ContextId, tk.History[0].MessageId)
		}
	}
}

// TestAgentOutputIDCharacters: an agent's artifact and message ids are held
// to the same rule; the emitter says which field.
func TestAgentOutputIDCharacters(t *testing.T) {
	t.Parallel()
	errs := make(chan error, 2)
	agent := server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		errs <- em.Artifact(a2a.TextArtifact("art\x00", "x"))
		m := a2a.AgentMessage("x")
		m.MessageId = "m\xff"
		errs <- em.Status(a2a.TaskState_TASK_STATE_WORKING, m)
		return em.Status(a2a.TaskState_TASK_STATE_COMPLETED, nil)
	})
	s := newServer(t, server.Options{Agent: agent})
	tk := sendTask(t, s, anon(t), "x")
	if state(tk) != a2a.TaskState_TASK_STATE_COMPLETED || len(tk.Artifacts) != 0 {
		t.Errorf("task %v; want COMPLETED without artifacts", tk)
	}
	for _, want := range []string{"artifact.artifactId: contains a control character", "message.messageId: is not valid UTF-8"} {
		if err := <-errs; err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("emit: %v, want %q", err, want)
		}
	}
}

// FuzzIDText sends a message with the fuzzer's string as its messageId
// and contextId: one holding a control character (unicode.IsControl: C0,
// DEL, C1), a format character (unicode.Cf), U+2028, U+2029 or bytes
// that are not UTF-8 is InvalidParams on
// message.messageId; any other non-empty one within the length limit is
// accepted.
func FuzzIDText(f *testing.F) {
	for _, seed := range []string{"m-1", "a\x00b", "\x1b[0m", "x\x7f", "\u0085", "\u00a0", "\xff", "\xe2\x82", "日本\u200b", "\ufffd", "tab\there", "a\u2028", "\u202e", "\U000E0001"} {
		f.Add(seed)
	}
	s := newServer(f, server.Options{})
	var n atomic.Int64
	f.Fuzz(func(t *testing.T, id string) {
		if id == "" || len(id) > server.DefaultMaxIDBytes-16 {
			t.Skip("the REQUIRED and length checks are tested elsewhere")
		}
		id += "-" + strconv.FormatInt(n.Add(1), 36) // a fresh message each time
		req := msgReq("x")
		req.Message.MessageId, req.Message.ContextId = id, id
		_, err := s.SendMessage(anon(t), req)
		bad := !utf8.ValidString(id) || strings.ContainsFunc(id, func(r rune) bool {
			return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029'
		})
		if !bad {
			if err != nil {
				t.Fatalf("id %q: %v", id, err)
			}
			return
		}
		var e *a2a.Error
		if !errors.As(err, &e) || e.Code != a2a.CodeInvalidParams || len(e.Violations) == 0 || e.Violations[0].Field != "message.messageId" {
			t.Fatalf("id %q: err = %v, want InvalidParams on message.messageId", id, err)
		}
	})
}
