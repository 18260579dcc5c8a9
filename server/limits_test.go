package server_test

// Request bounds (server.Limits): parts, identifiers, metadata, push
// configurations, enum values and header-unsafe characters, all refused
// with InvalidParams naming the field and the limit, before any store
// lookup.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"parley.dev/parley/a2a"
	"parley.dev/parley/server"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/memstore"
)

// violation returns the violation of err on field, failing the test when
// err is not InvalidParams or has none for the field. Every violation
// must also be in the error's message.
func violation(t testing.TB, what string, err error, field string) a2a.FieldViolation {
	t.Helper()
	var e *a2a.Error
	if !errors.As(err, &e) || e.Code != a2a.CodeInvalidParams {
		t.Errorf("%s: err = %v, want InvalidParams on %s", what, err, field)
		return a2a.FieldViolation{}
	}
	for _, v := range e.Violations {
		if v.Field == field {
			if !strings.Contains(e.Message, v.Description) {
				t.Errorf("%s: message %q does not carry the violation %q", what, e.Message, v.Description)
			}
			return v
		}
	}
	t.Errorf("%s: violations %v, want one on %s", what, e.Violations, field)
	return a2a.FieldViolation{}
}

// wantLimit checks err is InvalidParams on field naming the limit's name
// and value.
func wantLimit(t testing.TB, what string, err error, field, name string, limit int) {
	t.Helper()
	v := violation(t, what, err, field)
	if v.Field != "" && (!strings.Contains(v.Description, name) || !strings.Contains(v.Description, fmt.Sprint(limit))) {
		t.Errorf("%s: violation %q does not name the limit %s = %d", what, v.Description, name, limit)
	}
}

func parts(n int) []*a2a.Part {
	ps := make([]*a2a.Part, n)
	for i := range ps {
		ps[i] = a2a.TextPart("x")
	}
	return ps
}

// bigStruct is metadata whose encoding is at least n bytes.
func bigStruct(t testing.TB, n int) *structpb.Struct {
	st, err := structpb.NewStruct(map[string]any{"k": strings.Repeat("v", n)})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestMaxParts(t *testing.T) {
	t.Parallel()
	t.Run("default", func(t *testing.T) {
		t.Parallel()
		s := newServer(t, server.Options{})
		req := msgReq("x")
		req.Message.Parts = parts(server.DefaultMaxParts + 1)
		_, err := s.SendMessage(anon(t), req)
		wantLimit(t, "1001 parts", err, "message.parts", "maxParts", server.DefaultMaxParts)
		req.Message.Parts = parts(server.DefaultMaxParts)
		taskOf(t)(s.SendMessage(anon(t), req))
	})
	t.Run("configured", func(t *testing.T) {
		t.Parallel()
		s := newServer(t, server.Options{Limits: server.Limits{MaxParts: 3}})
		for _, tc := range []struct {
			field string
			mod   func(*a2a.SendMessageRequest)
		}{
			{"message.parts", func(r *a2a.SendMessageRequest) { r.Message.Parts = parts(4) }},
			{"message.referenceTaskIds", func(r *a2a.SendMessageRequest) { r.Message.ReferenceTaskIds = []string{"a", "b", "c", "d"} }},
			{"message.extensions", func(r *a2a.SendMessageRequest) { r.Message.Extensions = []string{"a", "b", "c", "d"} }},
			{"configuration.acceptedOutputModes", func(r *a2a.SendMessageRequest) {
				r.Configuration = &a2a.SendMessageConfiguration{AcceptedOutputModes: []string{"a/a", "b/b", "c/c", "d/d"}}
			}},
		} {
			req := msgReq("x")
			tc.mod(req)
			_, err := s.SendMessage(anon(t), req)
			wantLimit(t, tc.field, err, tc.field, "maxParts", 3)
			_, err = collect(s.SendStreamingMessage(anon(t), req))
			wantLimit(t, tc.field+" (stream)", err, tc.field, "maxParts", 3)
		}
		req := msgReq("x")
		req.Message.Parts = parts(3)
		req.Message.ReferenceTaskIds = []string{"a", "b", "c"}
		taskOf(t)(s.SendMessage(anon(t), req))
	})
	t.Run("off", func(t *testing.T) {
		t.Parallel()
		s := newServer(t, server.Options{Limits: server.Limits{MaxParts: -1}})
		req := msgReq("x")
		req.Message.Parts = parts(server.DefaultMaxParts + 5)
		taskOf(t)(s.SendMessage(anon(t), req))
	})
}

// spyStore counts the store calls that carry an identifier longer than
// long, which the core must refuse before looking anything up.
type spyStore struct {
	taskstore.Store
	long  int
	calls atomic.Int32
}

func (s *spyStore) saw(ids ...string) {
	for _, id := range ids {
		if len(id) > s.long {
			s.calls.Add(1)
		}
	}
}

func (s *spyStore) GetTask(ctx context.Context, sc taskstore.Scope, id string) (*a2a.Task, error) {
	s.saw(id, sc.Tenant)
	return s.Store.GetTask(ctx, sc, id)
}

func (s *spyStore) GetMessage(ctx context.Context, sc taskstore.Scope, id string) (*taskstore.MessageRecord, error) {
	s.saw(id, sc.Tenant)
	return s.Store.GetMessage(ctx, sc, id)
}

func (s *spyStore) PutMessage(ctx context.Context, sc taskstore.Scope, r *taskstore.MessageRecord) (*taskstore.MessageRecord, error) {
	s.saw(r.MessageID, sc.Tenant)
	return s.Store.PutMessage(ctx, sc, r)
}

func (s *spyStore) GetPushConfig(ctx context.Context, sc taskstore.Scope, taskID, id string) (*a2a.TaskPushNotificationConfig, error) {
	s.saw(taskID, id, sc.Tenant)
	return s.Store.GetPushConfig(ctx, sc, taskID, id)
}

func (s *spyStore) ListPushConfigs(ctx context.Context, sc taskstore.Scope, taskID string) ([]*a2a.TaskPushNotificationConfig, error) {
	s.saw(taskID, sc.Tenant)
	return s.Store.ListPushConfigs(ctx, sc, taskID)
}

func (s *spyStore) ListTasks(ctx context.Context, sc taskstore.Scope, q taskstore.ListQuery) (taskstore.ListResult, error) {
	s.saw(q.ContextID, sc.Tenant)
	return s.Store.ListTasks(ctx, sc, q)
}

func TestMaxIDBytes(t *testing.T) {
	t.Parallel()
	store := &spyStore{Store: memstore.New(), long: server.DefaultMaxIDBytes}
	s := newServer(t, server.Options{Store: store})
	parked := sendTask(t, s, anon(t), "input-required")
	long := strings.Repeat("L", 5<<20) // the 5 MB id of the review
	limit := server.DefaultMaxIDBytes
	fit := strings.Repeat("f", limit)

	withMsg := func(mod func(m *a2a.Message)) func(ctx context.Context) error {
		return func(ctx context.Context) error {
			req := msgReq("x")
			mod(req.Message)
			_, err := s.SendMessage(ctx, req)
			return err
		}
	}
	cfg := func(c *a2a.TaskPushNotificationConfig) func(ctx context.Context) error {
		return func(ctx context.Context) error {
			_, err := s.CreateTaskPushNotificationConfig(ctx, c)
			return err
		}
	}
	for _, tc := range []struct {
		name, field string
		call        func(ctx context.Context) error
	}{
		{"SendMessage messageId", "message.messageId", withMsg(func(m *a2a.Message) { m.MessageId = long })},
		{"SendMessage contextId", "message.contextId", withMsg(func(m *a2a.Message) { m.ContextId = long })},
		{"SendMessage taskId", "message.taskId", withMsg(func(m *a2a.Message) { m.TaskId = long })},
		{"SendMessage referenceTaskIds", "message.referenceTaskIds[1]", withMsg(func(m *a2a.Message) { m.ReferenceTaskIds = []string{"ok", long} })},
		{"SendMessage part mediaType", "message.parts[0].mediaType", withMsg(func(m *a2a.Message) { m.Parts[0].MediaType = long })},
		{"SendMessage tenant", "tenant", func(ctx context.Context) error {
			req := msgReq("x")
			req.Tenant = long
			_, err := s.SendMessage(ctx, req)
			return err
		}},
		{"SendMessage inline push id", "configuration.taskPushNotificationConfig.id", func(ctx context.Context) error {
			req := withConfig(msgReq("x"), &a2a.SendMessageConfiguration{TaskPushNotificationConfig: &a2a.TaskPushNotificationConfig{Id: long, Url: "https://hooks.example/"}})
			_, err := s.SendMessage(ctx, req)
			return err
		}},
		{"SendStreamingMessage messageId", "message.messageId", func(ctx context.Context) error {
			req := msgReq("x")
			req.Message.MessageId = long
			_, err := collect(s.SendStreamingMessage(ctx, req))
			return err
		}},
		{"GetTask", "id", func(ctx context.Context) error {
			_, err := s.GetTask(ctx, &a2a.GetTaskRequest{Id: long})
			return err
		}},
		{"GetTask tenant", "tenant", func(ctx context.Context) error {
			_, err := s.GetTask(ctx, &a2a.GetTaskRequest{Id: parked.Id, Tenant: long})
			return err
		}},
		{"ListTasks contextId", "contextId", func(ctx context.Context) error {
			_, err := s.ListTasks(ctx, &a2a.ListTasksRequest{ContextId: long})
			return err
		}},
		{"CancelTask", "id", func(ctx context.Context) error {
			_, err := s.CancelTask(ctx, &a2a.CancelTaskRequest{Id: long})
			return err
		}},
		{"SubscribeToTask", "id", func(ctx context.Context) error {
			_, err := collect(s.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{Id: long}))
			return err
		}},
		{"Create taskId", "taskId", cfg(&a2a.TaskPushNotificationConfig{TaskId: long, Url: "https://hooks.example/"})},
		{"Create id", "id", cfg(&a2a.TaskPushNotificationConfig{TaskId: parked.Id, Id: long, Url: "https://hooks.example/"})},
		{"Get taskId", "taskId", func(ctx context.Context) error {
			_, err := s.GetTaskPushNotificationConfig(ctx, &a2a.GetTaskPushNotificationConfigRequest{TaskId: long, Id: "c"})
			return err
		}},
		{"Get id", "id", func(ctx context.Context) error {
			_, err := s.GetTaskPushNotificationConfig(ctx, &a2a.GetTaskPushNotificationConfigRequest{TaskId: parked.Id, Id: long})
			return err
		}},
		{"List taskId", "taskId", func(ctx context.Context) error {
			_, err := s.ListTaskPushNotificationConfigs(ctx, &a2a.ListTaskPushNotificationConfigsRequest{TaskId: long})
			return err
		}},
		{"Delete id", "id", func(ctx context.Context) error {
			return s.DeleteTaskPushNotificationConfig(ctx, &a2a.DeleteTaskPushNotificationConfigRequest{TaskId: parked.Id, Id: long})
		}},
		{"GetExtendedAgentCard tenant", "tenant", func(ctx context.Context) error {
			_, err := s.GetExtendedAgentCard(ctx, &a2a.GetExtendedAgentCardRequest{Tenant: long})
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call(anon(t))
			wantLimit(t, tc.name, err, tc.field, "maxIdBytes", limit)
			if strings.Contains(err.Error(), "LLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLL") {
				t.Errorf("%s: the error echoes the over-long id (%d bytes of error)", tc.name, len(err.Error()))
			}
		})
	}
	if n := store.calls.Load(); n != 0 {
		t.Errorf("the store was asked %d times about an over-long identifier; want none", n)
	}

	// At the limit every identifier is accepted.
	req := msgReq("x")
	req.Message.MessageId, req.Message.ContextId, req.Message.ReferenceTaskIds = fit, fit, []string{fit}
	taskOf(t)(s.SendMessage(anon(t), req))
	_, err := s.GetTask(anon(t), &a2a.GetTaskRequest{Id: fit})
	wantErr(t, "GetTask of a 256-byte id", err, a2a.ErrTaskNotFound)
}

// TestLongIDNotEchoed: with the identifier limit off, a not-found error
// still quotes only the start of the id.
func TestLongIDNotEchoed(t *testing.T) {
	t.Parallel()
	s := newServer(t, server.Options{Limits: server.Limits{MaxIDBytes: -1}})
	long := strings.Repeat("L", 1<<20)
	_, err := s.GetTask(anon(t), &a2a.GetTaskRequest{Id: long})
	wantErr(t, "GetTask", err, a2a.ErrTaskNotFound)
	var e *a2a.Error
	if errors.As(err, &e) && (len(e.Message) > 200 || len(e.Metadata["taskId"]) > 100) {
		t.Errorf("TaskNotFound carries %d bytes of message and %d of metadata; want the id clipped", len(e.Message), len(e.Metadata["taskId"]))
	}
}

func TestMaxMetadataBytes(t *testing.T) {
	t.Parallel()
	s := newServer(t, server.Options{Limits: server.Limits{MaxMetadataBytes: 1024}})
	big, small := bigStruct(t, 2000), bigStruct(t, 900)
	for _, tc := range []struct {
		field string
		mod   func(*a2a.SendMessageRequest, *structpb.Struct)
	}{
		{"metadata", func(r *a2a.SendMessageRequest, st *structpb.Struct) { r.Metadata = st }},
		{"message.metadata", func(r *a2a.SendMessageRequest, st *structpb.Struct) { r.Message.Metadata = st }},
		{"message.parts[1].metadata", func(r *a2a.SendMessageRequest, st *structpb.Struct) {
			r.Message.Parts = append(r.Message.Parts, &a2a.Part{Content: &a2a.Part_Text{Text: "y"}, Metadata: st})
		}},
	} {
		req := msgReq("x")
		tc.mod(req, big)
		_, err := s.SendMessage(anon(t), req)
		wantLimit(t, tc.field, err, tc.field, "maxMetadataBytes", 1024)
		req = msgReq("x")
		tc.mod(req, small)
		taskOf(t)(s.SendMessage(anon(t), req))
	}
	// The default is 64 KiB.
	d := newServer(t, server.Options{})
	req := msgReq("x")
	req.Metadata = bigStruct(t, 70<<10)
	_, err := d.SendMessage(anon(t), req)
	wantLimit(t, "70 KiB metadata", err, "metadata", "maxMetadataBytes", server.DefaultMaxMetadataBytes)
	req.Metadata = bigStruct(t, 60<<10)
	taskOf(t)(d.SendMessage(anon(t), req))
}

func TestMaxPushConfigs(t *testing.T) {
	t.Parallel()
	s := newServer(t, server.Options{Limits: server.Limits{MaxPushConfigs: 3}})
	task := sendTask(t, s, anon(t), "input-required")
	create := func(id string) (*a2a.TaskPushNotificationConfig, error) {
		return s.CreateTaskPushNotificationConfig(anon(t), &a2a.TaskPushNotificationConfig{TaskId: task.Id, Id: id, Url: "https://hooks.example/" + id})
	}
	for _, id := range []string{"a", "b", "c"} {
		if _, err := create(id); err != nil {
			t.Fatalf("Create %s: %v", id, err)
		}
	}
	_, err := create("d")
	wantLimit(t, "a fourth config", err, "taskId", "maxPushConfigs", 3)
	if _, err := create("b"); err != nil {
		t.Errorf("replacing config b at the limit: %v; want it replaced", err)
	}
	// A follow-up with a fourth, inline, configuration is refused whole:
	// the message is not recorded.
	inline := withConfig(followReq(task.Id, "more"), &a2a.SendMessageConfiguration{TaskPushNotificationConfig: &a2a.TaskPushNotificationConfig{Url: "https://hooks.example/inline"}})
	_, err = followUp(t, s, "", inline)
	wantLimit(t, "an inline fourth config", err, "configuration.taskPushNotificationConfig", "maxPushConfigs", 3)
	got, _ := s.GetTask(anon(t), &a2a.GetTaskRequest{Id: task.Id})
	if n := len(got.GetHistory()); n != len(task.GetHistory()) {
		t.Errorf("history has %d messages after the refused follow-up; want %d", n, len(task.GetHistory()))
	}
	if err := s.DeleteTaskPushNotificationConfig(anon(t), &a2a.DeleteTaskPushNotificationConfigRequest{TaskId: task.Id, Id: "a"}); err != nil {
		t.Fatal(err)
	}
	if _, err := followUp(t, s, "", inline); err != nil {
		t.Errorf("the inline config after a delete: %v", err)
	}
	list, err := s.ListTaskPushNotificationConfigs(anon(t), &a2a.ListTaskPushNotificationConfigsRequest{TaskId: task.Id})
	if err != nil || len(list.Configs) != 3 {
		t.Errorf("List = %v, %v; want 3 configs", list, err)
	}
}

func TestPushConfigValues(t *testing.T) {
	t.Parallel()
	s := newServer(t, server.Options{})
	task := sendTask(t, s, anon(t), "input-required")
	type cfgMod func(*a2a.TaskPushNotificationConfig)
	auth := func(scheme, cred string) cfgMod {
		return func(c *a2a.TaskPushNotificationConfig) {
			c.Authentication = &a2a.AuthenticationInfo{Scheme: scheme, Credentials: cred}
		}
	}
	for _, tc := range []struct {
		name, field, limitName string
		limit                  int
		mod                    cfgMod
	}{
		{"long url", "url", "maxPushUrlBytes", server.DefaultMaxPushURLBytes, func(c *a2a.TaskPushNotificationConfig) {
			c.Url = "https://hooks.example/" + strings.Repeat("p", server.DefaultMaxPushURLBytes)
		}},
		{"long token", "token", "maxPushSecretBytes", server.DefaultMaxPushSecretBytes, func(c *a2a.TaskPushNotificationConfig) {
			c.Token = strings.Repeat("t", server.DefaultMaxPushSecretBytes+1)
		}},
		{"long credentials", "authentication.credentials", "maxPushSecretBytes", server.DefaultMaxPushSecretBytes, auth("Bearer", strings.Repeat("c", server.DefaultMaxPushSecretBytes+1))},
		{"CRLF in token", "token", "", 0, func(c *a2a.TaskPushNotificationConfig) { c.Token = "abc\r\nX-Evil: 1" }},
		{"LF in token", "token", "", 0, func(c *a2a.TaskPushNotificationConfig) { c.Token = "abc\n" }},
		{"NUL in token", "token", "", 0, func(c *a2a.TaskPushNotificationConfig) { c.Token = "a\x00b" }},
		{"DEL in token", "token", "", 0, func(c *a2a.TaskPushNotificationConfig) { c.Token = "a\x7fb" }},
		{"tab in token", "token", "", 0, func(c *a2a.TaskPushNotificationConfig) { c.Token = "a\tb" }},
		{"CR in credentials", "authentication.credentials", "", 0, auth("Bearer", "secret\r")},
		{"LF in scheme", "authentication.scheme", "", 0, auth("Bearer\n", "secret")},
		{"space in scheme", "authentication.scheme", "", 0, auth("Bearer x", "secret")},
		{"colon in scheme", "authentication.scheme", "", 0, auth("X-Auth:", "secret")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			check := func(what string, err error, field string) {
				t.Helper()
				if tc.limitName != "" {
					wantLimit(t, what, err, field, tc.limitName, tc.limit)
					return
				}
				v := violation(t, what, err, field)
				if strings.ContainsAny(v.Description, "\r\n") {
					t.Errorf("%s: the description %q carries the control character", what, v.Description)
				}
			}
			c := &a2a.TaskPushNotificationConfig{TaskId: task.Id, Url: "https://hooks.example/x"}
			tc.mod(c)
			_, err := s.CreateTaskPushNotificationConfig(anon(t), c)
			check("Create", err, tc.field)

			c = &a2a.TaskPushNotificationConfig{Url: "https://hooks.example/x"}
			tc.mod(c)
			_, err = s.SendMessage(anon(t), withConfig(msgReq("hello"), &a2a.SendMessageConfiguration{TaskPushNotificationConfig: c}))
			check("SendMessage inline", err, "configuration.taskPushNotificationConfig."+tc.field)
		})
	}
	// Printable values, a scheme with token punctuation and values at the
	// limits are accepted.
	ok := &a2a.TaskPushNotificationConfig{TaskId: task.Id, Url: "https://hooks.example/" + strings.Repeat("p", server.DefaultMaxPushURLBytes-len("https://hooks.example/")),
		Token:          strings.Repeat("t", server.DefaultMaxPushSecretBytes),
		Authentication: &a2a.AuthenticationInfo{Scheme: "X-Api_Key.v1", Credentials: "a b=c, d=\"e\" ~!"}}
	if _, err := s.CreateTaskPushNotificationConfig(anon(t), ok); err != nil {
		t.Errorf("Create at the limits: %v", err)
	}
}

func TestListPushConfigsPaging(t *testing.T) {
	t.Parallel()
	s := newServer(t, server.Options{})
	task := sendTask(t, s, anon(t), "input-required")
	other := sendTask(t, s, anon(t), "input-required")
	var want []string
	for i := range 7 {
		id := fmt.Sprintf("cfg-%02d", i)
		want = append(want, id)
		if _, err := s.CreateTaskPushNotificationConfig(anon(t), &a2a.TaskPushNotificationConfig{TaskId: task.Id, Id: id, Url: "https://hooks.example/" + id}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.CreateTaskPushNotificationConfig(anon(t), &a2a.TaskPushNotificationConfig{TaskId: other.Id, Id: "x", Url: "https://hooks.example/x"}); err != nil {
		t.Fatal(err)
	}
	list := func(ctx context.Context, taskID string, size int32, tok string) (*a2a.ListTaskPushNotificationConfigsResponse, error) {
		return s.ListTaskPushNotificationConfigs(ctx, &a2a.ListTaskPushNotificationConfigsRequest{TaskId: taskID, PageSize: size, PageToken: tok})
	}

	var got, sizes []string
	var tokens []string
	tok := ""
	for i := 0; ; i++ {
		page, err := list(anon(t), task.Id, 3, tok)
		if err != nil {
			t.Fatalf("page %d: %v", i, err)
		}
		sizes = append(sizes, fmt.Sprint(len(page.Configs)))
		for _, c := range page.Configs {
			got = append(got, c.Id)
		}
		if page.NextPageToken == "" {
			break
		}
		tok = page.NextPageToken
		tokens = append(tokens, tok)
		if i > 10 {
			t.Fatal("paging does not end")
		}
	}
	if strings.Join(got, ",") != strings.Join(want, ",") || strings.Join(sizes, ",") != "3,3,1" {
		t.Errorf("pages of 3 gave %v in pages of %v; want %v in pages of 3,3,1", got, sizes, want)
	}
	// A configuration deleted after its page was read does not move the
	// next page.
	if err := s.DeleteTaskPushNotificationConfig(anon(t), &a2a.DeleteTaskPushNotificationConfigRequest{TaskId: task.Id, Id: "cfg-02"}); err != nil {
		t.Fatal(err)
	}
	if page, err := list(anon(t), task.Id, 3, tokens[0]); err != nil || len(page.Configs) != 3 || page.Configs[0].Id != "cfg-03" {
		t.Errorf("the second page after deleting the first page's last config: %v, %v; want cfg-03..cfg-05", page, err)
	}
	if _, err := s.CreateTaskPushNotificationConfig(anon(t), &a2a.TaskPushNotificationConfig{TaskId: task.Id, Id: "cfg-02", Url: "https://hooks.example/cfg-02"}); err != nil {
		t.Fatal(err)
	}
	all, err := list(anon(t), task.Id, 0, "")
	if err != nil || len(all.Configs) != 7 || all.NextPageToken != "" {
		t.Errorf("default page size: %d configs, next %q, %v; want all 7 and no next page", len(all.GetConfigs()), all.GetNextPageToken(), err)
	}
	exact, err := list(anon(t), task.Id, 7, "")
	if err != nil || len(exact.Configs) != 7 || exact.NextPageToken != "" {
		t.Errorf("page size 7 of 7: next %q, %v; want none", exact.GetNextPageToken(), err)
	}

	for _, size := range []int32{-1, 101} {
		_, err := list(anon(t), task.Id, size, "")
		violation(t, fmt.Sprintf("pageSize %d", size), err, "pageSize")
	}
	for name, call := range map[string]func() error{
		"a forged token": func() error { _, err := list(anon(t), task.Id, 3, "bm90LWEtdG9rZW4"); return err },
		"another task's token": func() error {
			_, err := list(anon(t), other.Id, 3, tokens[0])
			return err
		},
		"a ListTasks token": func() error {
			for range 3 {
				sendTask(t, s, anon(t), "hello")
			}
			lt, err := s.ListTasks(anon(t), &a2a.ListTasksRequest{PageSize: i32(1)})
			if err != nil || lt.NextPageToken == "" {
				return fmt.Errorf("ListTasks gave no token: %v", err)
			}
			_, err = list(anon(t), task.Id, 3, lt.NextPageToken)
			return err
		},
	} {
		violation(t, name, call(), "pageToken")
	}
	// Another principal cannot use the token, and does not see the task.
	_, err = list(as(t, "mallory"), task.Id, 3, tokens[0])
	if !errors.Is(err, a2a.ErrInvalidParams) && !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("another principal with the token: %v; want InvalidParams or TaskNotFound", err)
	}
}

func TestUndefinedEnumNumbers(t *testing.T) {
	t.Parallel()
	s := newServer(t, server.Options{})
	req := msgReq("x")
	req.Message.Role = a2a.Role(99)
	_, err := s.SendMessage(anon(t), req)
	if v := violation(t, "role 99", err, "message.role"); v.Field != "" && !strings.Contains(v.Description, "99") {
		t.Errorf("violation %q does not name the value", v.Description)
	}
	_, err = s.ListTasks(anon(t), &a2a.ListTasksRequest{Status: a2a.TaskState(42)})
	violation(t, "status 42", err, "status")

	// An agent that emits an undefined role or state is told so.
	var roleErr, stateErr error
	agent := server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		m := a2a.AgentMessage("hi")
		m.Role = a2a.Role(7)
		roleErr = em.Status(a2a.TaskState_TASK_STATE_WORKING, m)
		stateErr = em.Status(a2a.TaskState(77), nil)
		return em.Status(a2a.TaskState_TASK_STATE_COMPLETED, nil)
	})
	a := newServer(t, server.Options{Agent: agent})
	if tk := sendTask(t, a, anon(t), "x"); state(tk) != a2a.TaskState_TASK_STATE_COMPLETED {
		t.Fatalf("task %v", tk)
	}
	if roleErr == nil || stateErr == nil {
		t.Errorf("emitting role 7: %v, state 77: %v; want errors", roleErr, stateErr)
	}
}

// TestAgentOutputLimits: what an agent emits is held to the same bounds;
// the emitter says why.
func TestAgentOutputLimits(t *testing.T) {
	t.Parallel()
	errs := make(chan error, 4)
	agent := server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		a := a2a.TextArtifact("a", "x")
		a.Parts = parts(3)
		errs <- em.Artifact(a)
		errs <- em.Artifact(a2a.TextArtifact(strings.Repeat("i", 41), "x"))
		b := a2a.TextArtifact("b", "x")
		b.Metadata = bigStruct(t, 100)
		errs <- em.Artifact(b)
		m := a2a.AgentMessage("x")
		m.Parts = parts(3)
		errs <- em.Status(a2a.TaskState_TASK_STATE_WORKING, m)
		return em.Status(a2a.TaskState_TASK_STATE_COMPLETED, nil)
	})
	s := newServer(t, server.Options{Agent: agent, Limits: server.Limits{MaxParts: 2, MaxIDBytes: 40, MaxMetadataBytes: 64}})
	tk := sendTask(t, s, anon(t), "x")
	if state(tk) != a2a.TaskState_TASK_STATE_COMPLETED || len(tk.Artifacts) != 0 {
		t.Errorf("task %v; want COMPLETED without artifacts", tk)
	}
	for _, want := range []string{"artifact.parts", "artifact.artifactId", "artifact.metadata", "message.parts"} {
		if err := <-errs; err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("emit over the limit of %s: %v", want, err)
		}
	}
}

// TestLimitsDoNotChangeValidRequests: a request within every limit is
// answered exactly as before (the conformance agent's echo), on a
// server with every limit set low.
func TestLimitsDoNotChangeValidRequests(t *testing.T) {
	t.Parallel()
	s := newServer(t, server.Options{Limits: server.Limits{MaxParts: 2, MaxIDBytes: 40, MaxMetadataBytes: 200, MaxPushConfigs: 1}})
	req := msgReq("hello")
	req.Message.Metadata = bigStruct(t, 10)
	req.Message.Parts = append(req.Message.Parts, a2a.TextPart("second"))
	tk := sendTask(t, s, anon(t), "hello")
	if len(tk.Artifacts) != 1 || a2a.FirstText(&a2a.Message{Parts: tk.Artifacts[0].Parts}) != "hello" {
		t.Errorf("task %v", tk)
	}
	got := taskOf(t)(s.SendMessage(anon(t), req))
	if !proto.Equal(got.History[0].Metadata, req.Message.Metadata) || len(got.History[0].Parts) != 2 {
		t.Errorf("stored message %v", got.History[0])
	}
}

func TestLimitsOptions(t *testing.T) {
	t.Parallel()
	nan := server.Options{Card: testCard(true, true), Agent: server.AgentFunc(func(context.Context, *server.Request, *server.Emitter) error { return nil }),
		Limits: server.Limits{TaskRate: zero() / zero()}}
	if _, err := server.New(&nan); err == nil {
		t.Error("New with TaskRate NaN succeeded; want an error")
	}
}

func zero() float64 { return 0 }
