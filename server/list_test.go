package server_test

// ListTasks (spec §3.1.4; docs/decisions.md#b5): order, paging, page tokens,
// filters.

import (
	"encoding/base64"
	"fmt"
	"slices"
	"sort"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"parley.dev/parley/a2a"
	"parley.dev/parley/server"
)

// stepClock is an Options.Now that advances one millisecond per call, so
// every status timestamp differs and the list order is known.
type stepClock struct {
	base time.Time
	n    atomic.Int64
}

func newStepClock() *stepClock {
	return &stepClock{base: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)}
}

func (c *stepClock) Now() time.Time {
	return c.base.Add(time.Duration(c.n.Add(1)) * time.Millisecond)
}

// listOrder sorts tasks the way ListTasks must: status timestamp
// descending, then id descending.
func listOrder(tasks []*a2a.Task) []string {
	tasks = slices.Clone(tasks)
	sort.Slice(tasks, func(i, j int) bool {
		ti, tj := tasks[i].GetStatus().GetTimestamp().AsTime(), tasks[j].GetStatus().GetTimestamp().AsTime()
		if !ti.Equal(tj) {
			return ti.After(tj)
		}
		return tasks[i].Id > tasks[j].Id
	})
	ids := make([]string, len(tasks))
	for i, t := range tasks {
		ids[i] = t.Id
	}
	return ids
}

func ids(tasks []*a2a.Task) []string {
	out := make([]string, len(tasks))
	for i, t := range tasks {
		out[i] = t.Id
	}
	return out
}

// walk lists every page with the request's filters and page size; between
// pages it calls between (which may create tasks).
func walk(t *testing.T, s a2a.Service, req *a2a.ListTasksRequest, between func()) (all []string, pages int) {
	t.Helper()
	for {
		res, err := s.ListTasks(anon(t), proto.Clone(req).(*a2a.ListTasksRequest))
		if err != nil {
			t.Fatalf("ListTasks page %d: %v", pages, err)
		}
		pages++
		all = append(all, ids(res.Tasks)...)
		if res.NextPageToken == "" {
			return all, pages
		}
		if pages > 1000 {
			t.Fatal("ListTasks never ends")
		}
		req.PageToken = res.NextPageToken
		if between != nil {
			between()
		}
	}
}

func TestListTasksPaging(t *testing.T) {
	t.Parallel()
	clock := newStepClock()
	s := newServer(t, server.Options{Now: clock.Now})
	var tasks []*a2a.Task
	for i := range 23 {
		tasks = append(tasks, sendTask(t, s, anon(t), fmt.Sprint("task ", i)))
	}
	want := listOrder(tasks)

	first, err := s.ListTasks(anon(t), &a2a.ListTasksRequest{PageSize: i32(5)})
	if err != nil {
		t.Fatal(err)
	}
	if first.TotalSize != 23 || first.PageSize != 5 || len(first.Tasks) != 5 || first.NextPageToken == "" {
		t.Errorf("first page: total %d, pageSize %d, %d tasks, token %q", first.TotalSize, first.PageSize, len(first.Tasks), first.NextPageToken)
	}

	created := 0
	got, pages := walk(t, s, &a2a.ListTasksRequest{PageSize: i32(5)}, func() {
		sendTask(t, s, anon(t), "created during the walk")
		created++
	})
	if !slices.Equal(got, want) {
		t.Errorf("walk with tasks created in between returned\n%v\nwant\n%v", got, want)
	}
	if pages != 5 || created != 4 {
		t.Errorf("%d pages, %d created; want 5 pages", pages, created)
	}

	// An exact multiple of the page size ends with an empty token, not an
	// empty extra page.
	res, err := s.ListTasks(anon(t), &a2a.ListTasksRequest{PageSize: i32(100)})
	if err != nil || len(res.Tasks) != 27 || res.NextPageToken != "" || res.TotalSize != 27 {
		t.Errorf("one full page: %d tasks, token %q, total %d, err %v", len(res.GetTasks()), res.GetNextPageToken(), res.GetTotalSize(), err)
	}
	all, _ := walk(t, s, &a2a.ListTasksRequest{PageSize: i32(9)}, nil)
	if len(all) != 27 {
		t.Errorf("walk with 27 tasks / 9 per page got %d", len(all))
	}
}

func TestListTasksTiesAndDefaultPage(t *testing.T) {
	t.Parallel()
	fixed := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	s := newServer(t, server.Options{Now: func() time.Time { return fixed }})
	var tasks []*a2a.Task
	for i := range 55 {
		tasks = append(tasks, sendTask(t, s, anon(t), fmt.Sprint("same time ", i)))
	}
	want := listOrder(tasks) // all timestamps equal: id descending

	res, err := s.ListTasks(anon(t), &a2a.ListTasksRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tasks) != server.DefaultPageSize || res.PageSize != 50 || res.TotalSize != 55 || res.NextPageToken == "" {
		t.Errorf("default page: %d tasks, pageSize %d, total %d, token %q", len(res.Tasks), res.PageSize, res.TotalSize, res.NextPageToken)
	}
	got, _ := walk(t, s, &a2a.ListTasksRequest{PageSize: i32(7)}, nil)
	if !slices.Equal(got, want) {
		t.Errorf("walk over equal timestamps returned\n%v\nwant\n%v", got, want)
	}
}

func TestListTasksValidation(t *testing.T) {
	t.Parallel()
	s := newServer(t, server.Options{RequireAuth: true})
	for range 3 {
		sendTask(t, s, as(t, "alice"), "hello")
	}
	sendTask(t, s, as(t, "alice"), "fail")
	first, err := s.ListTasks(as(t, "alice"), &a2a.ListTasksRequest{PageSize: i32(1)})
	if err != nil || first.NextPageToken == "" {
		t.Fatalf("ListTasks: %v, %v", first, err)
	}
	tok := first.NextPageToken
	// flip changes one character of the token; the last character of
	// unpadded base64 may carry bits a decoder ignores, so the last byte is
	// changed through a decode and re-encode instead (see flipLast).
	flip := func(s string, i int) string {
		b := []byte(s)
		if b[i] == 'A' {
			b[i] = 'B'
		} else {
			b[i] = 'A'
		}
		return string(b)
	}
	flipLast := func(s string) string {
		b, err := base64.RawURLEncoding.DecodeString(s)
		if err != nil {
			return flip(s, 0)
		}
		b[len(b)-1] ^= 1
		return base64.RawURLEncoding.EncodeToString(b)
	}
	for _, tc := range []struct {
		name string
		who  string
		req  *a2a.ListTasksRequest
	}{
		{"pageSize 0", "alice", &a2a.ListTasksRequest{PageSize: i32(0)}},
		{"pageSize 101", "alice", &a2a.ListTasksRequest{PageSize: i32(101)}},
		{"pageSize -1", "alice", &a2a.ListTasksRequest{PageSize: i32(-1)}},
		{"historyLength -1", "alice", &a2a.ListTasksRequest{HistoryLength: i32(-1)}},
		{"garbage token", "alice", &a2a.ListTasksRequest{PageToken: "not-a-token"}},
		{"token first byte changed", "alice", &a2a.ListTasksRequest{PageSize: i32(1), PageToken: flip(tok, 0)}},
		{"token middle byte changed", "alice", &a2a.ListTasksRequest{PageSize: i32(1), PageToken: flip(tok, len(tok)/2)}},
		{"token last byte changed", "alice", &a2a.ListTasksRequest{PageSize: i32(1), PageToken: flipLast(tok)}},
		{"token truncated", "alice", &a2a.ListTasksRequest{PageSize: i32(1), PageToken: tok[:len(tok)-4]}},
		{"token with a status filter", "alice", &a2a.ListTasksRequest{PageSize: i32(1), PageToken: tok, Status: a2a.TaskState_TASK_STATE_COMPLETED}},
		{"token with a context filter", "alice", &a2a.ListTasksRequest{PageSize: i32(1), PageToken: tok, ContextId: "c"}},
		{"token with a time filter", "alice", &a2a.ListTasksRequest{PageSize: i32(1), PageToken: tok, StatusTimestampAfter: timestamppb.New(time.Unix(0, 0))}},
		{"token of another principal", "bob", &a2a.ListTasksRequest{PageSize: i32(1), PageToken: tok}},
		{"unknown status", "alice", &a2a.ListTasksRequest{Status: a2a.TaskState(99)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.ListTasks(as(t, tc.who), tc.req)
			wantErr(t, "ListTasks", err, a2a.ErrInvalidParams)
		})
	}
	// The untouched token works, including with a different page size.
	if _, err := s.ListTasks(as(t, "alice"), &a2a.ListTasksRequest{PageSize: i32(2), PageToken: tok}); err != nil {
		t.Errorf("valid token refused: %v", err)
	}
	// A token from another server (another key) is refused.
	other := newServer(t, server.Options{RequireAuth: true})
	_, err = other.ListTasks(as(t, "alice"), &a2a.ListTasksRequest{PageSize: i32(1), PageToken: tok})
	wantErr(t, "token of another server", err, a2a.ErrInvalidParams)
}

func TestListTasksFilters(t *testing.T) {
	t.Parallel()
	clock := newStepClock()
	s := newServer(t, server.Options{Now: clock.Now})
	inCtx := func(text, ctxID string) *a2a.Task {
		req := msgReq(text)
		req.Message.ContextId = ctxID
		return taskOf(t)(s.SendMessage(anon(t), req))
	}
	a1 := inCtx("hello", "ctx-a")
	a2 := inCtx("fail", "ctx-a")
	a3 := inCtx("input-required", "ctx-a")
	b1 := inCtx("hello", "ctx-b")
	b2 := inCtx("reject", "ctx-b")
	c1 := sendTask(t, s, anon(t), "hello")
	all := []*a2a.Task{a1, a2, a3, b1, b2, c1}

	list := func(req *a2a.ListTasksRequest) *a2a.ListTasksResponse {
		t.Helper()
		res, err := s.ListTasks(anon(t), req)
		if err != nil {
			t.Fatalf("ListTasks(%v): %v", req, err)
		}
		return res
	}
	check := func(name string, req *a2a.ListTasksRequest, want ...*a2a.Task) {
		t.Helper()
		res := list(req)
		if got, w := ids(res.Tasks), listOrder(want); !slices.Equal(got, w) {
			t.Errorf("%s: got %v, want %v", name, got, w)
		}
		if int(res.TotalSize) != len(want) || res.NextPageToken != "" {
			t.Errorf("%s: totalSize %d, token %q; want %d and \"\"", name, res.TotalSize, res.NextPageToken, len(want))
		}
	}
	check("context a", &a2a.ListTasksRequest{ContextId: "ctx-a"}, a1, a2, a3)
	check("context b", &a2a.ListTasksRequest{ContextId: "ctx-b"}, b1, b2)
	check("completed", &a2a.ListTasksRequest{Status: a2a.TaskState_TASK_STATE_COMPLETED}, a1, b1, c1)
	check("failed", &a2a.ListTasksRequest{Status: a2a.TaskState_TASK_STATE_FAILED}, a2)
	check("context a, completed", &a2a.ListTasksRequest{ContextId: "ctx-a", Status: a2a.TaskState_TASK_STATE_COMPLETED}, a1)
	check("no match", &a2a.ListTasksRequest{ContextId: "ctx-none"})

	// statusTimestampAfter is inclusive: b2's own timestamp includes b2.
	check("since b2", &a2a.ListTasksRequest{StatusTimestampAfter: b2.Status.Timestamp}, b2, c1)
	after := b2.Status.Timestamp.AsTime().Add(time.Millisecond)
	check("just after b2", &a2a.ListTasksRequest{StatusTimestampAfter: timestamppb.New(after)}, c1)
	check("since b2, ctx-b", &a2a.ListTasksRequest{StatusTimestampAfter: b2.Status.Timestamp, ContextId: "ctx-b"}, b2)

	// Artifacts are omitted unless asked for; history follows historyLength.
	for _, tk := range list(&a2a.ListTasksRequest{}).Tasks {
		if tk.Artifacts != nil {
			t.Errorf("task %s listed with artifacts without includeArtifacts", tk.Id)
		}
	}
	for _, tk := range list(&a2a.ListTasksRequest{IncludeArtifacts: proto.Bool(false)}).Tasks {
		if tk.Artifacts != nil {
			t.Errorf("task %s listed with artifacts with includeArtifacts false", tk.Id)
		}
	}
	withArt := list(&a2a.ListTasksRequest{IncludeArtifacts: proto.Bool(true), Status: a2a.TaskState_TASK_STATE_COMPLETED})
	for _, tk := range withArt.Tasks {
		if len(tk.Artifacts) != 1 || a2a.JoinText(tk.Artifacts[0].Parts) != "hello" {
			t.Errorf("task %s listed with artifacts %v, want the echo artifact", tk.Id, tk.Artifacts)
		}
	}
	if len(all) != 6 || list(&a2a.ListTasksRequest{}).TotalSize != 6 {
		t.Error("totalSize of the unfiltered list is not 6")
	}
}
