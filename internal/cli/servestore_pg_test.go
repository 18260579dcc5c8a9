package cli_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"parley.dev/parley/internal/pgtest"
)

// TestServePostgres runs `parley serve --store postgres://…` on a database
// of its own: a task made by one server is there, whole, for the next one
// started on the database; a second server at once serves it too; the password of the URL appears in no log; and
// a database migrated by a newer Parley is refused with a message saying
// so.
func TestServePostgres(t *testing.T) {
	u, err := url.Parse(pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	password, ok := u.User.Password()
	if !ok {
		// The test server trusts local connections: a password is
		// accepted and ignored, and must not be logged.
		password = "PW-NOT-TO-BE-LOGGED-0123"
		u.User = url.UserPassword(u.User.Username(), password)
	}
	store := u.String()
	args := []string{"--agent", "conformance", "--store", store}

	a := serveKeyed(t, nil, true, args...)
	parked := a.call(t, "POST", "/message:send", `{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"input-required"}]}}`)
	task, _ := parked["task"].(map[string]any)
	taskID, _ := task["id"].(string)
	if taskID == "" {
		t.Fatalf("no task in %v", parked)
	}
	a.Stop()

	b := serveKeyed(t, nil, true, args...)
	got := b.call(t, "GET", "/tasks/"+taskID, "")
	if st, _ := got["status"].(map[string]any); st["state"] != "TASK_STATE_INPUT_REQUIRED" {
		t.Errorf("the task on the second server: %v", got)
	}
	if h, _ := got["history"].([]any); len(h) == 0 {
		t.Errorf("the task lost its history: %v", got)
	}
	list := b.call(t, "GET", "/tasks", "")
	if n, _ := list["totalSize"].(float64); n != 1 {
		t.Errorf("ListTasks on the second server: %v", list)
	}
	// A second server at once is another replica, serving the same tasks
	// (the cluster test is cluster_test.go).
	second := serveKeyed(t, nil, true, args...)
	if got := second.call(t, "GET", "/tasks/"+taskID, ""); got["id"] != taskID {
		t.Errorf("the task on a second server at once: %v", got)
	}
	second.Stop()
	b.Stop()
	for _, p := range []*keyedServer{a, b} {
		if strings.Contains(p.Stderr(), password) || strings.Contains(p.Stdout(), password) {
			t.Errorf("the database password is in the output:\n%s", p.Stderr())
		}
	}
	if !strings.Contains(a.Stderr(), `store="postgres://`) {
		t.Errorf("the log does not name the store:\n%s", a.Stderr())
	}

	conn, err := pgx.Connect(context.Background(), store)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(context.Background(), `UPDATE parley_schema SET version = 99`); err != nil {
		t.Fatal(err)
	}
	conn.Close(context.Background())
	c := serveKeyed(t, nil, false, args...)
	if c.Err() == nil || !strings.Contains(c.Stderr(), "schema version 99") || !strings.Contains(c.Stderr(), "newer") {
		t.Errorf("parley serve on a newer schema: %v\n%s\nwant a refusal naming the version", c.Err(), c.Stderr())
	}
	if strings.Contains(c.Stderr(), password) {
		t.Errorf("the refusal shows the database password:\n%s", c.Stderr())
	}
}
