package server_test

// Push-configuration bounds: configurations per task, the lengths and
// characters of their url, token and credentials, and the signed page
// tokens of ListTaskPushNotificationConfigs.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"parley.dev/parley/a2a"
	"parley.dev/parley/server"
)

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

// listPageFunc lists the push configurations of taskID from the page tok,
// size to a page.
type listPageFunc func(ctx context.Context, taskID string, size int32, tok string) (*a2a.ListTaskPushNotificationConfigsResponse, error)

func TestListPushConfigsPaging(t *testing.T) {
	t.Parallel()
	s := newServer(t, server.Options{})
	task := sendTask(t, s, anon(t), "input-required")
	other := sendTask(t, s, anon(t), "input-required")
	want := createPushConfigs(t, s, task.Id, 7)
	if _, err := s.CreateTaskPushNotificationConfig(anon(t), &a2a.TaskPushNotificationConfig{TaskId: other.Id, Id: "x", Url: "https://hooks.example/x"}); err != nil {
		t.Fatal(err)
	}
	list := func(ctx context.Context, taskID string, size int32, tok string) (*a2a.ListTaskPushNotificationConfigsResponse, error) {
		return s.ListTaskPushNotificationConfigs(ctx, &a2a.ListTaskPushNotificationConfigsRequest{TaskId: taskID, PageSize: size, PageToken: tok})
	}

	got, sizes, tokens := readPushConfigPages(t, list, task.Id, 3)
	if strings.Join(got, ",") != strings.Join(want, ",") || strings.Join(sizes, ",") != "3,3,1" {
		t.Errorf("pages of 3 gave %v in pages of %v; want %v in pages of 3,3,1", got, sizes, want)
	}
	checkPageAfterDelete(t, s, list, task.Id, tokens[0])
	checkPageSizes(t, list, task.Id)
	checkBadPageTokens(t, s, list, task.Id, other.Id, tokens[0])
}

// createPushConfigs registers n configurations cfg-00, cfg-01, … on
// taskID and returns their ids in order.
func createPushConfigs(t *testing.T, s *server.Server, taskID string, n int) []string {
	t.Helper()
	var ids []string
	for i := range n {
		id := fmt.Sprintf("cfg-%02d", i)
		ids = append(ids, id)
		if _, err := s.CreateTaskPushNotificationConfig(anon(t), &a2a.TaskPushNotificationConfig{TaskId: taskID, Id: id, Url: "https://hooks.example/" + id}); err != nil {
			t.Fatal(err)
		}
	}
	return ids
}

// readPushConfigPages follows the pages of taskID, size to a page, to the
// end; it returns the ids read, the size of each page and the token of
// every page after the first.
func readPushConfigPages(t *testing.T, list listPageFunc, taskID string, size int32) (got, sizes, tokens []string) {
	t.Helper()
	tok := ""
	for i := 0; ; i++ {
		page, err := list(anon(t), taskID, size, tok)
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
	return got, sizes, tokens
}

// checkPageAfterDelete: a configuration deleted after its page was read
// does not move the next page (second, the token of the second page of
// 3). cfg-02 is registered again afterwards.
func checkPageAfterDelete(t *testing.T, s *server.Server, list listPageFunc, taskID, second string) {
	t.Helper()
	if err := s.DeleteTaskPushNotificationConfig(anon(t), &a2a.DeleteTaskPushNotificationConfigRequest{TaskId: taskID, Id: "cfg-02"}); err != nil {
		t.Fatal(err)
	}
	if page, err := list(anon(t), taskID, 3, second); err != nil || len(page.Configs) != 3 || page.Configs[0].Id != "cfg-03" {
		t.Errorf("the second page after deleting the first page's last config: %v, %v; want cfg-03..cfg-05", page, err)
	}
	if _, err := s.CreateTaskPushNotificationConfig(anon(t), &a2a.TaskPushNotificationConfig{TaskId: taskID, Id: "cfg-02", Url: "https://hooks.example/cfg-02"}); err != nil {
		t.Fatal(err)
	}
}

// checkPageSizes: the default page size and a page size of exactly the
// 7 configurations of taskID give them all with no next page; a page
// size out of range is refused.
func checkPageSizes(t *testing.T, list listPageFunc, taskID string) {
	t.Helper()
	all, err := list(anon(t), taskID, 0, "")
	if err != nil || len(all.Configs) != 7 || all.NextPageToken != "" {
		t.Errorf("default page size: %d configs, next %q, %v; want all 7 and no next page", len(all.GetConfigs()), all.GetNextPageToken(), err)
	}
	exact, err := list(anon(t), taskID, 7, "")
	if err != nil || len(exact.Configs) != 7 || exact.NextPageToken != "" {
		t.Errorf("page size 7 of 7: next %q, %v; want none", exact.GetNextPageToken(), err)
	}
	for _, size := range []int32{-1, 101} {
		_, err := list(anon(t), taskID, size, "")
		violation(t, fmt.Sprintf("pageSize %d", size), err, "pageSize")
	}
}

// checkBadPageTokens: a forged token, a token of another task (tok is
// one of taskID's) and a ListTasks token are refused; another principal
// cannot use tok, and does not see the task.
func checkBadPageTokens(t *testing.T, s *server.Server, list listPageFunc, taskID, otherID, tok string) {
	t.Helper()
	for name, call := range map[string]func() error{
		"a forged token": func() error { _, err := list(anon(t), taskID, 3, "bm90LWEtdG9rZW4"); return err },
		"another task's token": func() error {
			_, err := list(anon(t), otherID, 3, tok)
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
			_, err = list(anon(t), taskID, 3, lt.NextPageToken)
			return err
		},
	} {
		violation(t, name, call(), "pageToken")
	}
	_, err := list(as(t, "mallory"), taskID, 3, tok)
	if !errors.Is(err, a2a.ErrInvalidParams) && !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("another principal with the token: %v; want InvalidParams or TaskNotFound", err)
	}
}
