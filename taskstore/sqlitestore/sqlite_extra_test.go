package sqlitestore

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/internal/layout"
	"parley.dev/parley/taskstore/internal/sqlstore"
)

var scope = taskstore.Scope{Tenant: "t", Owner: "o"}

var epoch = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func newTask(id string, state a2a.TaskState, ms int) *a2a.Task {
	return &a2a.Task{
		Id:        id,
		ContextId: "ctx-" + id[len(id)-1:],
		Status:    &a2a.TaskStatus{State: state, Timestamp: timestamppb.New(epoch.Add(time.Duration(ms) * time.Millisecond))},
		History: []*a2a.Message{{MessageId: "m-" + id, Role: a2a.Role_ROLE_USER,
			Parts: []*a2a.Part{{Content: &a2a.Part_Text{Text: "hello " + id}}}}},
	}
}

// replace replaces a stored task with tk by appending a Task event after
// its last event.
func replace(ctx context.Context, s *Store, sc taskstore.Scope, tk *a2a.Task) error {
	seq, err := s.LastSeq(ctx, sc, tk.Id)
	if err != nil {
		return err
	}
	return s.Append(ctx, sc, tk.Id, taskstore.Event{Seq: seq + 1,
		Response: &a2a.StreamResponse{Payload: &a2a.StreamResponse_Task{Task: proto.Clone(tk).(*a2a.Task)}}})
}

func TestReopen(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "tasks.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	var want []*a2a.Task
	for i := range 20 {
		tk := newTask(fmt.Sprintf("task-%02d", i), a2a.TaskState_TASK_STATE_WORKING, i)
		want = append(want, tk)
		if err := s.CreateTask(ctx, scope, tk, taskstore.Event{}); err != nil {
			t.Fatal(err)
		}
	}
	want[3].Status.State = a2a.TaskState_TASK_STATE_COMPLETED
	if err := replace(ctx, s, scope, want[3]); err != nil {
		t.Fatal(err)
	}
	cfg := &taskstore.PushConfig{TaskPushNotificationConfig: &a2a.TaskPushNotificationConfig{Id: "p", TaskId: "task-05", Url: "https://h.example"}}
	if err := s.PutPushConfig(ctx, scope, cfg, taskstore.Event{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutMessage(ctx, scope, &taskstore.MessageRecord{MessageID: "m", Digest: "d", TaskID: "task-01", Created: epoch}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	// A clean close checkpoints the WAL and removes it.
	if _, err := os.Stat(path + "-wal"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("WAL file left after Close: %v", err)
	}

	s, err = Open(path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer s.Close()
	for _, tk := range want {
		got, err := s.GetTask(ctx, scope, tk.Id)
		if err != nil {
			t.Fatalf("GetTask(%s) after reopen: %v", tk.Id, err)
		}
		got.Generation = 0 // checked by the store kit
		if !proto.Equal(got, tk) {
			t.Errorf("task %s after reopen: %v, want %v", tk.Id, got, tk)
		}
	}
	res, err := s.ListTasks(ctx, scope, taskstore.ListQuery{Limit: 5, State: a2a.TaskState_TASK_STATE_WORKING})
	if err != nil || res.Total != 19 || len(res.Tasks) != 5 || !res.More || res.Tasks[0].Id != "task-19" {
		t.Errorf("ListTasks after reopen: %+v, %v", res, err)
	}
	if got, err := s.GetPushConfig(ctx, scope, "task-05", "p"); err != nil || !proto.Equal(got, cfg) {
		t.Errorf("GetPushConfig after reopen: %v, %v", got, err)
	}
	if got, err := s.GetMessage(ctx, scope, "m"); err != nil || got.Digest != "d" || !got.Created.Equal(epoch) {
		t.Errorf("GetMessage after reopen: %+v, %v", got, err)
	}
	var version int
	if err := s.reader.QueryRow("PRAGMA user_version").Scan(&version); err != nil || version != SchemaVersion {
		t.Errorf("user_version = %d, %v; want %d", version, err, SchemaVersion)
	}
}

func TestPragmas(t *testing.T) {
	s := openTemp(t)
	defer s.Close()
	var mode string
	var sync, fk int
	if err := s.writer.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q, %v; want wal", mode, err)
	}
	if err := s.writer.QueryRow("PRAGMA synchronous").Scan(&sync); err != nil || sync != 1 {
		t.Errorf("synchronous = %d, %v; want 1 (NORMAL)", sync, err)
	}
	full, err := OpenWith(filepath.Join(t.TempDir(), "full.db"), &Options{FullSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer full.Close()
	if err := full.writer.QueryRow("PRAGMA synchronous").Scan(&sync); err != nil || sync != 2 {
		t.Errorf("FullSync: synchronous = %d, %v; want 2 (FULL)", sync, err)
	}
	if err := s.writer.QueryRow("PRAGMA foreign_keys").Scan(&fk); err != nil || fk != 1 {
		t.Errorf("foreign_keys = %d, %v; want 1", fk, err)
	}
	// Readers refuse to write.
	if _, err := s.reader.Exec("DELETE FROM tasks"); err == nil {
		t.Error("a reader connection accepted a write")
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tasks.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.writer.Exec(fmt.Sprintf("PRAGMA user_version = %d", SchemaVersion+1)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s, err := Open(path); err == nil {
		s.Close()
		t.Fatal("Open accepted a database with a newer schema version")
	} else if !strings.Contains(err.Error(), "newer") {
		t.Errorf("unexpected error: %v", err)
	}
}

func TestOpenRejectsMemory(t *testing.T) {
	for _, p := range []string{"", ":memory:", "file::memory:"} {
		if s, err := Open(p); err == nil {
			s.Close()
			t.Errorf("Open(%q) succeeded", p)
		}
	}
}

func TestOddPath(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a dir?with#odd%chars")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "x.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.CreateTask(t.Context(), scope, newTask("a1", a2a.TaskState_TASK_STATE_WORKING, 1), taskstore.Event{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("database not at the given path: %v", err)
	}
}

// TestEmptyReply checks that an empty (but present) reply survives the
// round trip as an empty message rather than as no reply.
func TestEmptyReply(t *testing.T) {
	s := openTemp(t)
	defer s.Close()
	ctx := t.Context()
	if _, err := s.PutMessage(ctx, scope, &taskstore.MessageRecord{MessageID: "m", Reply: &a2a.Message{}}); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetMessage(ctx, scope, "m")
	if err != nil || got.Reply == nil {
		t.Fatalf("GetMessage = %+v, %v; want an empty reply", got, err)
	}
	if err := s.SetMessageReply(ctx, scope, "m", nil); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetMessage(ctx, scope, "m"); err != nil || got.Reply != nil {
		t.Fatalf("GetMessage after clearing = %+v, %v; want no reply", got, err)
	}
	if err := s.SetMessageReply(ctx, scope, "m", &a2a.Message{}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetMessage(ctx, scope, "m"); err != nil || got.Reply == nil {
		t.Fatalf("GetMessage after SetMessageReply = %+v, %v; want an empty reply", got, err)
	}
}

// TestQueryPlans checks on a populated database that every ListTasks
// variant finds its page through an index, without a table scan or a
// sort, and that the result is right.
func TestQueryPlans(t *testing.T) {
	s := openTemp(t)
	defer s.Close()
	ctx := context.Background()
	const n = 20000
	fill(t, s, n, []taskstore.Scope{scope, {Tenant: "t", Owner: "other"}})

	for f := range listFilter(len(s.list)) {
		q := taskstore.ListQuery{ContextID: "ctx-3", State: a2a.TaskState_TASK_STATE_WORKING,
			Since: epoch, After: &taskstore.Cursor{Time: epoch.Add(time.Hour), ID: "x"}}
		type plan struct {
			query string
			args  []any
		}
		plans := []plan{{dialect.ListSQL(f), append(sqlstore.ListArgs(f, scope, q), 51)}}
		if sqlstore.RangeCounted(f) && f&layout.WithAfter == 0 {
			plans = append(plans, plan{dialect.CountSQL(f), sqlstore.ListArgs(f, scope, q)})
		}
		for _, c := range plans {
			query := c.query
			p := explain(t, s, query, c.args)
			if !strings.Contains(p, "USING INDEX") && !strings.Contains(p, "USING COVERING INDEX") {
				t.Errorf("%s\n  plan %q uses no index", query, p)
			}
			if strings.Contains(p, "SCAN tasks") || strings.Contains(p, "TEMP B-TREE") {
				t.Errorf("%s\n  plan %q scans or sorts", query, p)
			}
			// A context's pages, in any state, walk the context's range.
			if f&layout.WithContext != 0 && !strings.Contains(p, "INDEX tasks_by_context ") {
				t.Errorf("%s\n  plan %q does not walk the context's index", query, p)
			}
			if testing.Verbose() {
				t.Logf("%-5b %s", f, p)
			}
		}
	}

	// Every other statement finds its rows through an index too.
	for _, query := range s.queries {
		p := explain(t, s, query, make([]any, strings.Count(query, "?")))
		// A page's parts are found by a list of ids given as JSON: its
		// scan is of the argument, not of a table; so is a multi-row
		// INSERT's of its VALUES.
		p2 := strings.ReplaceAll(p, "SCAN json_each VIRTUAL TABLE", "")
		p2 = regexp.MustCompile(`SCAN \d+-ROW VALUES CLAUSE`).ReplaceAllString(p2, "")
		if strings.Contains(p2, "SCAN") || strings.Contains(p, "TEMP B-TREE") {
			t.Errorf("%s\n  plan %q scans or sorts", query, p)
		}
		if testing.Verbose() {
			t.Logf("%s\n   -> %s", strings.Join(strings.Fields(query), " "), p)
		}
	}

	// The pages themselves: walk the newest 200 and check the order.
	q := taskstore.ListQuery{Limit: 50}
	var prev *a2a.Task
	for range 4 {
		res, err := s.ListTasks(ctx, scope, q)
		if err != nil {
			t.Fatal(err)
		}
		if res.Total != n/2 || len(res.Tasks) != 50 || !res.More {
			t.Fatalf("page: Total %d, %d tasks, More %v", res.Total, len(res.Tasks), res.More)
		}
		for _, tk := range res.Tasks {
			if prev != nil {
				pt, ct := prev.Status.Timestamp.AsTime(), tk.Status.Timestamp.AsTime()
				if ct.After(pt) || (ct.Equal(pt) && tk.Id >= prev.Id) {
					t.Fatalf("order: %s (%v) after %s (%v)", tk.Id, ct, prev.Id, pt)
				}
			}
			prev = tk
		}
		q.After = &taskstore.Cursor{Time: prev.Status.Timestamp.AsTime(), ID: prev.Id}
	}
}

// explain returns SQLite's query plan for the query with these arguments,
// its steps joined by "; ".
func explain(t *testing.T, s *Store, query string, args []any) string {
	t.Helper()
	rows, err := s.reader.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, notused int
		var detail string
		if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	return strings.Join(plan, "; ")
}

// fill inserts n tasks spread over the scopes in one transaction, which is
// much faster than n durable commits.
func fill(t testing.TB, s *Store, n int, scopes []taskstore.Scope) {
	t.Helper()
	tx, err := s.writer.Begin()
	if err != nil {
		t.Fatal(err)
	}
	st, hist := tx.Stmt(s.createTask), tx.Stmt(s.putHistory.stmts[len(rowCounts)-1]) // one row
	states := []a2a.TaskState{a2a.TaskState_TASK_STATE_WORKING, a2a.TaskState_TASK_STATE_COMPLETED, a2a.TaskState_TASK_STATE_FAILED}
	for i := range n {
		sc := scopes[i%len(scopes)]
		tk := newTask(fmt.Sprintf("task-%06d", i), states[i%len(states)], i/3)
		h, err := layout.EncodeHeader(tk)
		if err != nil {
			t.Fatal(err)
		}
		p, err := layout.EncodeParts(tk)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Exec(tk.Id, sc.Tenant, sc.Owner, h.ContextID, h.State, h.StatusMS, 1, h.Data, h.Status, false, 0, nil); err != nil {
			t.Fatal(err)
		}
		for n, m := range p.History {
			if _, err := hist.Exec(tk.Id, n, m); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

const childEnv = "PARLEY_SQLITESTORE_CHILD_DB"

// TestChildWriter is the child side of TestKillDurability: run on its own
// it does nothing. With the environment variable set it creates tasks in
// the database it names until it is killed, printing each id only after
// CreateTask has returned.
func TestChildWriter(t *testing.T) {
	path := os.Getenv(childEnv)
	if path == "" {
		t.Skip("child process of TestKillDurability only")
	}
	s, err := Open(path)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(2)
	}
	deadline := time.Now().Add(time.Minute) // in case the parent is gone
	for i := 0; time.Now().Before(deadline); i++ {
		id := fmt.Sprintf("kill-%06d", i)
		if err := s.CreateTask(context.Background(), scope, newTask(id, a2a.TaskState_TASK_STATE_WORKING, i), taskstore.Event{}); err != nil {
			fmt.Println("error", err)
			os.Exit(2)
		}
		if _, err := fmt.Printf("created %s\n", id); err != nil {
			os.Exit(3)
		}
	}
	os.Exit(4)
}

// TestKillDurability kills a writing process with SIGKILL and checks that
// every task it reported as created is in the database afterwards.
func TestKillDurability(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tasks.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestChildWriter$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"="+path)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var created []string
	sc := bufio.NewScanner(out)
	killed := false
	timer := time.AfterFunc(2*time.Minute, func() { cmd.Process.Kill() })
	defer timer.Stop()
	for sc.Scan() {
		line := sc.Text()
		if id, ok := strings.CutPrefix(line, "created "); ok {
			created = append(created, id)
		} else if strings.HasPrefix(line, "error ") {
			t.Errorf("child: %s", line)
		}
		if len(created) == 100 && !killed {
			// Kill while the child is in the middle of its writes; the
			// lines it printed before dying are still read below.
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			killed = true
		}
	}
	err = cmd.Wait()
	if !killed {
		t.Fatalf("child ended before it was killed: %v", err)
	}
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) || exitErr.ExitCode() != -1 {
		t.Errorf("child exit: %v, want killed by a signal", err)
	}

	s, err := Open(path)
	if err != nil {
		t.Fatalf("reopen after kill: %v", err)
	}
	defer s.Close()
	for _, id := range created {
		if _, err := s.GetTask(context.Background(), scope, id); err != nil {
			t.Errorf("task %s, reported created before the kill: %v", id, err)
		}
	}
	res, err := s.ListTasks(context.Background(), scope, taskstore.ListQuery{Limit: 1})
	if err != nil || res.Total < len(created) {
		t.Errorf("after kill: Total %d (%v), want at least %d", res.Total, err, len(created))
	}
	t.Logf("%d tasks reported before SIGKILL, %d in the database", len(created), res.Total)
}

// TestCounters checks the trigger-kept counters behind ListTasks totals
// against COUNT(*) after a random mix of creates, updates and deletes.
func TestCounters(t *testing.T) {
	s := openTemp(t)
	defer s.Close()
	ctx := t.Context()
	rng := rand.New(rand.NewPCG(1, 2))
	scopes := []taskstore.Scope{scope, {Tenant: "t", Owner: "x"}, {Tenant: "u", Owner: "o"}}
	states := []a2a.TaskState{a2a.TaskState_TASK_STATE_SUBMITTED, a2a.TaskState_TASK_STATE_WORKING,
		a2a.TaskState_TASK_STATE_COMPLETED, a2a.TaskState_TASK_STATE_FAILED}
	contexts := []string{"", "c1", "c2", "c3"}
	owner := map[string]taskstore.Scope{}
	var ids []string
	for i := range 300 {
		switch op := rng.IntN(10); {
		case op < 5 || len(ids) == 0:
			id := fmt.Sprintf("r%04d", i)
			sc := scopes[rng.IntN(len(scopes))]
			tk := newTask(id, states[rng.IntN(len(states))], rng.IntN(100))
			tk.ContextId = contexts[rng.IntN(len(contexts))]
			if err := s.CreateTask(ctx, sc, tk, taskstore.Event{}); err != nil {
				t.Fatal(err)
			}
			owner[id] = sc
			ids = append(ids, id)
		case op < 9:
			id := ids[rng.IntN(len(ids))]
			tk := newTask(id, states[rng.IntN(len(states))], rng.IntN(100))
			tk.ContextId = contexts[rng.IntN(len(contexts))]
			if err := replace(ctx, s, owner[id], tk); err != nil && !errors.Is(err, taskstore.ErrNotFound) {
				t.Fatal(err)
			}
		default:
			if _, err := s.DeleteFinished(ctx, epoch.Add(time.Duration(rng.IntN(50))*time.Millisecond)); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, sc := range scopes {
		for _, c := range append(contexts, "none") {
			for _, st := range append(states, a2a.TaskState_TASK_STATE_UNSPECIFIED, a2a.TaskState_TASK_STATE_REJECTED) {
				q := taskstore.ListQuery{ContextID: c, State: st, Limit: 1}
				res, err := s.ListTasks(ctx, sc, q)
				if err != nil {
					t.Fatal(err)
				}
				where := "tenant = ? AND owner = ?"
				args := []any{sc.Tenant, sc.Owner}
				if c != "" {
					where += " AND context_id = ?"
					args = append(args, c)
				}
				if st != a2a.TaskState_TASK_STATE_UNSPECIFIED {
					where += " AND state = ?"
					args = append(args, int32(st))
				}
				var want int
				if err := s.reader.QueryRow("SELECT count(*) FROM tasks WHERE "+where, args...).Scan(&want); err != nil {
					t.Fatal(err)
				}
				if res.Total != want {
					t.Errorf("scope %+v context %q state %v: Total %d, COUNT(*) %d", sc, c, st, res.Total, want)
				}
			}
		}
	}
	var stale int
	if err := s.reader.QueryRow("SELECT count(*) FROM task_counts WHERE n = 0 AND kind IN (1, 3)").Scan(&stale); err != nil || stale != 0 {
		t.Errorf("%d per-context counters at zero left behind (%v)", stale, err)
	}
	var negative int
	if err := s.reader.QueryRow("SELECT count(*) FROM task_counts WHERE n < 0").Scan(&negative); err != nil || negative != 0 {
		t.Errorf("%d negative counters (%v)", negative, err)
	}
}

// TestCreateTaskBatchRowCounts makes tasks whose history, chunks and
// events need each size of the multi-row INSERTs, and sizes between them:
// every row is stored once, in order.
func TestCreateTaskBatchRowCounts(t *testing.T) {
	s := openTemp(t)
	for _, n := range []int{1, 2, 3, 15, 16, 17, 22, 31, 40} {
		id := fmt.Sprintf("task-%02d", n)
		tk := newTask(id, a2a.TaskState_TASK_STATE_WORKING, n)
		for i := 1; i < n; i++ {
			tk.History = append(tk.History, &a2a.Message{MessageId: fmt.Sprint("m-", i), Role: a2a.Role_ROLE_AGENT,
				Parts: []*a2a.Part{{Content: &a2a.Part_Text{Text: fmt.Sprint(i)}}}})
		}
		evs := []taskstore.Event{{Seq: 1, Response: &a2a.StreamResponse{Payload: &a2a.StreamResponse_Task{Task: tk}}}}
		for i := 1; i < n; i++ {
			evs = append(evs, taskstore.Event{Seq: uint64(i + 1), Response: &a2a.StreamResponse{Payload: &a2a.StreamResponse_ArtifactUpdate{
				ArtifactUpdate: &a2a.TaskArtifactUpdateEvent{TaskId: id, ContextId: tk.ContextId, Append: i > 1,
					Artifact: &a2a.Artifact{ArtifactId: "a", Parts: []*a2a.Part{{Content: &a2a.Part_Text{Text: fmt.Sprint(i)}}}}}}}})
		}
		if err := s.CreateTaskBatch(t.Context(), scope, tk, evs); err != nil {
			t.Fatalf("%d events: %v", n, err)
		}
		got, err := s.GetTask(t.Context(), scope, id)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.History) != n {
			t.Errorf("%d events: %d history messages, want %d", n, len(got.History), n)
		}
		var chunks []string
		for _, a := range got.Artifacts {
			for _, p := range a.Parts {
				chunks = append(chunks, p.GetText())
			}
		}
		var want []string
		for i := 1; i < n; i++ {
			want = append(want, fmt.Sprint(i))
		}
		if !slices.Equal(chunks, want) {
			t.Errorf("%d events: artifact parts %v, want %v", n, chunks, want)
		}
		logged, err := s.Events(t.Context(), scope, id, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		for i, ev := range logged {
			if ev.Seq != uint64(i+1) {
				t.Fatalf("%d events: event %d has seq %d", n, i, ev.Seq)
			}
		}
		if len(logged) != n {
			t.Errorf("%d events: %d logged", n, len(logged))
		}
	}
}
