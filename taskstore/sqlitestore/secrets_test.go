package sqlitestore

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/seal"
	"parley.dev/parley/taskstore/storetest"
)

// testKeys returns keys made of repeated bytes, the first sealing.
func testKeys(t testing.TB, bs ...byte) *seal.Keys {
	t.Helper()
	var raws [][]byte
	for _, b := range bs {
		raws = append(raws, bytes.Repeat([]byte{b}, seal.KeySize))
	}
	k, err := seal.New(raws...)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func openKeyed(t testing.TB, path string, keys *seal.Keys) *Store {
	t.Helper()
	s, err := OpenWith(path, &Options{PushKeys: keys})
	if err != nil {
		t.Fatalf("OpenWith(%s, keys %v): %v", filepath.Base(path), ids(keys), err)
	}
	return s
}

func ids(k *seal.Keys) []string {
	if k == nil {
		return nil
	}
	return k.IDs()
}

// The secrets of the test configurations: none must be found in the
// database files once sealed. publicOf is a value that stays readable.
func credOf(id string) string   { return "CRED-SECRET-" + id }
func tokenOf(id string) string  { return "TOKEN-SECRET-" + id }
func urlOf(id string) string    { return "https://hooks.example/URL-SECRET-" + id }
func publicOf(id string) string { return "PUBLIC-" + id }

func secretConfig(taskID, id string) *taskstore.PushConfig {
	return &taskstore.PushConfig{Version: "0.3", TaskPushNotificationConfig: &a2a.TaskPushNotificationConfig{Tenant: publicOf(id), Id: id,
		TaskId: taskID, Url: urlOf(id), Token: tokenOf(id), Authentication: &a2a.AuthenticationInfo{Scheme: "Bearer", Credentials: credOf(id)}}}
}

func statusEvent(taskID string, st a2a.TaskState) *a2a.StreamResponse {
	return &a2a.StreamResponse{Payload: &a2a.StreamResponse_StatusUpdate{StatusUpdate: &a2a.TaskStatusUpdateEvent{
		TaskId: taskID, ContextId: "ctx", Status: &a2a.TaskStatus{State: st}}}}
}

// fillSecrets writes configurations every way a store can: inline with a
// new task (p1), with PutPushConfig (p2, p3, and p4 without any secret),
// and queues outbox rows for them. It returns the configurations by id.
func fillSecrets(t *testing.T, s *Store) map[string]*taskstore.PushConfig {
	ctx := t.Context()
	want := map[string]*taskstore.PushConfig{}
	p1 := secretConfig("task-1", "p1")
	if err := s.CreateTask(ctx, scope, newTask("task-1", a2a.TaskState_TASK_STATE_SUBMITTED, 1),
		taskstore.Event{Seq: 1, Response: statusEvent("task-1", a2a.TaskState_TASK_STATE_SUBMITTED), Push: true, PushConfig: p1}); err != nil {
		t.Fatal(err)
	}
	want["p1"] = p1
	if err := s.CreateTask(ctx, scope, newTask("task-2", a2a.TaskState_TASK_STATE_SUBMITTED, 1), taskstore.Event{Seq: 1}); err != nil {
		t.Fatal(err)
	}
	p4 := &taskstore.PushConfig{Version: "1.0", TaskPushNotificationConfig: &a2a.TaskPushNotificationConfig{Tenant: publicOf("p4"), Id: "p4",
		TaskId: "task-2", Url: urlOf("p4")}}
	for _, c := range []*taskstore.PushConfig{secretConfig("task-1", "p2"), secretConfig("task-2", "p3"), p4} {
		if err := s.PutPushConfig(ctx, scope, c, taskstore.Event{Seq: 1, Response: statusEvent(c.TaskId, a2a.TaskState_TASK_STATE_SUBMITTED), Push: true}); err != nil {
			t.Fatal(err)
		}
		want[c.Id] = c
	}
	if err := s.Append(ctx, scope, "task-1",
		taskstore.Event{Seq: 2, Response: statusEvent("task-1", a2a.TaskState_TASK_STATE_WORKING), Push: true}); err != nil {
		t.Fatal(err)
	}
	return want
}

// checkReads reads every configuration back through the store, each way
// the store returns one, and wants the plaintext as written.
func checkReads(t *testing.T, s *Store, want map[string]*taskstore.PushConfig) {
	t.Helper()
	ctx := t.Context()
	for id, c := range want {
		got, err := s.GetPushConfig(ctx, scope, c.TaskId, id)
		if err != nil || !taskstore.EqualPushConfig(got, c) {
			t.Errorf("GetPushConfig(%s) = %v, %v; want %v", id, got, err, c)
		}
		ns, err := s.PendingPush(ctx, taskstore.PushTarget{Scope: scope, TaskID: c.TaskId, ConfigID: id}, 10)
		if err != nil || len(ns) == 0 {
			t.Errorf("PendingPush(%s) = %d rows, %v; want some", id, len(ns), err)
		}
		for _, n := range ns {
			if !taskstore.EqualPushConfig(n.Config, c) {
				t.Errorf("PendingPush(%s) config = %v, want %v", id, n.Config, c)
			}
		}
	}
	for _, taskID := range []string{"task-1", "task-2"} {
		list, err := s.ListPushConfigs(ctx, scope, taskID)
		if err != nil {
			t.Errorf("ListPushConfigs(%s): %v", taskID, err)
		}
		for _, got := range list {
			if !taskstore.EqualPushConfig(got, want[got.Id]) {
				t.Errorf("ListPushConfigs(%s) has %v, want %v", taskID, got, want[got.Id])
			}
		}
	}
}

// rawValues reads every value of every table through a connection of its
// own, as anyone holding the file could.
func rawValues(t *testing.T, path string) [][]byte {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tables := queryStrings(t, db, `SELECT name FROM sqlite_master WHERE type = 'table'`)
	var out [][]byte
	for _, table := range tables {
		rows, err := db.Query(`SELECT * FROM "` + table + `"`)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for _, v := range vals {
				switch v := v.(type) {
				case []byte:
					out = append(out, bytes.Clone(v))
				case string:
					out = append(out, []byte(v))
				}
			}
		}
		rows.Close()
	}
	return out
}

// fileBytes returns the bytes of every file in dir.
func fileBytes(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = b
	}
	return out
}

// wantNoSecrets fails if any secret of the configurations is in a value of
// the database or anywhere in the files of dir. It also wants each
// configuration's public marker in the values, so that a search that finds
// nothing is known to look.
func wantNoSecrets(t *testing.T, dir, path string, want map[string]*taskstore.PushConfig) {
	t.Helper()
	values := bytes.Join(rawValues(t, path), []byte{0})
	files := fileBytes(t, dir)
	for id, c := range want {
		if !bytes.Contains(values, []byte(c.Tenant)) {
			t.Errorf("the public marker of %s is not in the raw values: the search looks in the wrong place", id)
		}
		for _, secret := range []string{credOf(id), tokenOf(id), urlOf(id)} {
			if bytes.Contains(values, []byte(secret)) {
				t.Errorf("%q is in plain text in a database value", secret)
			}
			for name, b := range files {
				if bytes.Contains(b, []byte(secret)) {
					t.Errorf("%q is in plain text in %s", secret, name)
				}
			}
		}
	}
}

// TestConformanceSealed runs the store suite with push keys given.
func TestConformanceSealed(t *testing.T) {
	keys := testKeys(t, 1, 2)
	storetest.Run(t, func(t *testing.T) taskstore.Store {
		return openKeyed(t, filepath.Join(t.TempDir(), "tasks.db"), keys)
	})
}

// TestSecretsAtRest writes configurations with a key and looks for their
// secrets in the files, with the store open and after it is closed.
func TestSecretsAtRest(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "tasks.db")
	keys := testKeys(t, 1)
	s := openKeyed(t, path, keys)
	want := fillSecrets(t, s)
	checkReads(t, s, want)
	wantNoSecrets(t, dir, path, want) // the WAL holds the writes
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	wantNoSecrets(t, dir, path, want) // checkpointed into the database

	// Every row has a sealed secret, even p4 which has no credentials.
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n, sealedN int
	if err := db.QueryRow(`SELECT count(*), count(secret) FROM push_configs WHERE substr(secret, 1, ?) = ? OR secret IS NULL`,
		seal.HeaderSize, keys.Header()).Scan(&n, &sealedN); err != nil || n != 4 || sealedN != 4 {
		t.Errorf("push_configs rows = %d, sealed under the key %d, %v; want 4 and 4", n, sealedN, err)
	}

	s = openKeyed(t, path, keys)
	defer s.Close()
	checkReads(t, s, want)
}

// TestSecretsRefused checks that a secret which does not open is an error
// that says so (no key, a wrong key, a changed ciphertext, a ciphertext
// moved to another row), and that a configuration cannot be pointed at
// another URL.
func TestSecretsRefused(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "tasks.db")
	a := testKeys(t, 0xA)
	s := openKeyed(t, path, a)
	fillSecrets(t, s)
	s.Close()

	b := testKeys(t, 0xB)
	checkOpenNeedsKey(t, path, a, b)
	damageSecrets(t, path)
	checkDamagedReads(t, path, a)
	ba := testKeys(t, 0xB, 0xA)
	checkResealDamaged(t, path, ba)

	// Now the first row under key A is p3, which holds p1's secret: Open
	// itself refuses.
	if got := headers(t, path); got["p1"] != b.IDs()[0] || got["p3"] != a.IDs()[0] {
		t.Fatalf("keys = %v; want p1 under B, p3 under A", got)
	}
	if s, err := OpenWith(path, &Options{PushKeys: ba}); !errors.Is(err, seal.ErrAuth) || !strings.Contains(err.Error(), `"p3"`) {
		if err == nil {
			s.Close()
		}
		t.Errorf("Open with a damaged first secret: %v; want ErrAuth naming p3", err)
	}
}

// checkOpenNeedsKey: without a key, or with another key (other) only,
// Open of the database at path, sealed under a, refuses and names the key
// it needs.
func checkOpenNeedsKey(t *testing.T, path string, a, other *seal.Keys) {
	t.Helper()
	_, err := OpenWith(path, nil)
	if !errors.Is(err, ErrNoPushKey) || !strings.Contains(err.Error(), a.IDs()[0]) {
		t.Errorf("Open without a key: %v; want ErrNoPushKey naming key %s", err, a.IDs()[0])
	}
	_, err = OpenWith(path, &Options{PushKeys: other})
	if !errors.Is(err, seal.ErrUnknownKey) || !strings.Contains(err.Error(), a.IDs()[0]) {
		t.Errorf("Open with another key: %v; want ErrUnknownKey naming key %s", err, a.IDs()[0])
	}
}

// damageSecrets damages rows of fillSecrets behind the store's back: p2
// has one bit of its ciphertext flipped, p3 (task-2) is given p1's secret
// from task-1, and p4 is pointed at another URL in its readable part.
// Open checks one secret per key (the first row, p1), so these are found
// when read.
func damageSecrets(t *testing.T, path string) {
	t.Helper()
	ctx := t.Context()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	var sec []byte
	if err := db.QueryRowContext(ctx, `SELECT secret FROM push_configs WHERE id = 'p2'`).Scan(&sec); err != nil {
		t.Fatal(err)
	}
	sec[len(sec)-20] ^= 1
	exec(`UPDATE push_configs SET secret = ? WHERE id = 'p2'`, sec)
	exec(`UPDATE push_configs SET secret = (SELECT secret FROM push_configs WHERE id = 'p1') WHERE id = 'p3'`)
	var data []byte
	if err := db.QueryRowContext(ctx, `SELECT data FROM push_configs WHERE id = 'p4'`).Scan(&data); err != nil {
		t.Fatal(err)
	}
	c := new(a2a.TaskPushNotificationConfig)
	if err := proto.Unmarshal(data, c); err != nil {
		t.Fatal(err)
	}
	c.Url = "https://attacker.example/"
	data, _ = proto.Marshal(c)
	exec(`UPDATE push_configs SET data = ? WHERE id = 'p4'`, data)
}

// checkDamagedReads opens the store damaged by damageSecrets with key a:
// p1 reads, p4 reads with its sealed URL, and every read of p2 or p3 is
// ErrAuth.
func checkDamagedReads(t *testing.T, path string, a *seal.Keys) {
	t.Helper()
	ctx := t.Context()
	s := openKeyed(t, path, a)
	defer s.Close()
	if _, err := s.GetPushConfig(ctx, scope, "task-1", "p1"); err != nil {
		t.Errorf("GetPushConfig(p1), undamaged: %v", err)
	}
	if got, err := s.GetPushConfig(ctx, scope, "task-2", "p4"); err != nil || got.Url != urlOf("p4") {
		t.Errorf("GetPushConfig(p4) pointed elsewhere = %v, %v; want the sealed URL %s", got, err, urlOf("p4"))
	}
	for _, tc := range []struct{ taskID, id string }{{"task-1", "p2"}, {"task-2", "p3"}} {
		got, err := s.GetPushConfig(ctx, scope, tc.taskID, tc.id)
		if !errors.Is(err, seal.ErrAuth) || !strings.Contains(err.Error(), fmt.Sprintf("%q", tc.id)) {
			t.Errorf("GetPushConfig(%s) = %v, %v; want ErrAuth naming the config", tc.id, got, err)
		}
		if _, err := s.ListPushConfigs(ctx, scope, tc.taskID); !errors.Is(err, seal.ErrAuth) {
			t.Errorf("ListPushConfigs(%s) error = %v, want ErrAuth", tc.taskID, err)
		}
		ns, err := s.PendingPush(ctx, taskstore.PushTarget{Scope: scope, TaskID: tc.taskID, ConfigID: tc.id}, 10)
		if !errors.Is(err, seal.ErrAuth) {
			t.Errorf("PendingPush(%s) = %d rows, %v; want ErrAuth", tc.id, len(ns), err)
		}
	}
}

// checkResealDamaged: resealing under a new key (ba) leaves what does not
// open alone, and says so; the good rows move to the new key. Replacing a
// damaged configuration mends it.
func checkResealDamaged(t *testing.T, path string, ba *seal.Keys) {
	t.Helper()
	ctx := t.Context()
	s := openKeyed(t, path, ba)
	defer s.Close()
	if n, err := s.ResealPushConfigs(ctx); n != 2 || !errors.Is(err, seal.ErrAuth) || !strings.Contains(err.Error(), "2 could not be opened") {
		t.Errorf("ResealPushConfigs = %d, %v; want 2 (p1, p4) and the two failures", n, err)
	}
	if err := s.PutPushConfig(ctx, scope, secretConfig("task-1", "p2"), taskstore.Event{}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetPushConfig(ctx, scope, "task-1", "p2"); err != nil || got.Token != tokenOf("p2") {
		t.Errorf("GetPushConfig(p2) after Put = %v, %v", got, err)
	}
}

// headers returns the key header of every push config's secret, by id
// ("" for none).
func headers(t *testing.T, path string) map[string]string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT id, secret FROM push_configs`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var id string
		var secret []byte
		if err := rows.Scan(&id, &secret); err != nil {
			t.Fatal(err)
		}
		out[id], _ = seal.KeyID(secret)
	}
	return out
}

// TestRotation writes under key A, reads with [B, A], rewrites one
// configuration and reseals the rest, then reads with B alone.
func TestRotation(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	path := filepath.Join(dir, "tasks.db")
	a, ba, b := testKeys(t, 0xA), testKeys(t, 0xB, 0xA), testKeys(t, 0xB)
	idA, idB := a.IDs()[0], b.IDs()[0]

	s := openKeyed(t, path, a)
	want := fillSecrets(t, s)
	s.Close()

	s = openKeyed(t, path, ba)
	checkReads(t, s, want)
	// Writing a configuration seals it under the new key.
	want["p2"].Token = "TOKEN-SECRET-p2"
	if err := s.PutPushConfig(ctx, scope, want["p2"], taskstore.Event{Seq: 3, Response: statusEvent("task-1", a2a.TaskState_TASK_STATE_WORKING), Push: true}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if got := headers(t, path); got["p2"] != idB || got["p1"] != idA || got["p3"] != idA {
		t.Fatalf("keys after one rewrite = %v; want p2 under %s (B), the others under %s (A)", got, idB, idA)
	}
	// B alone cannot open what is still under A.
	if _, err := OpenWith(path, &Options{PushKeys: b}); !errors.Is(err, seal.ErrUnknownKey) {
		t.Fatalf("Open with B before resealing: %v; want ErrUnknownKey", err)
	}

	s = openKeyed(t, path, ba)
	n, err := s.ResealPushConfigs(ctx)
	if err != nil || n != 3 {
		t.Fatalf("ResealPushConfigs = %d, %v; want 3 (p1, p3, p4)", n, err)
	}
	if n, err := s.ResealPushConfigs(ctx); err != nil || n != 0 {
		t.Errorf("second ResealPushConfigs = %d, %v; want 0", n, err)
	}
	s.Close()
	for id, k := range headers(t, path) {
		if k != idB {
			t.Errorf("%s is under key %s after resealing, want %s (B)", id, k, idB)
		}
	}

	s = openKeyed(t, path, b)
	defer s.Close()
	checkReads(t, s, want)
	if _, err := OpenWith(path, &Options{PushKeys: a}); !errors.Is(err, seal.ErrUnknownKey) {
		t.Errorf("Open with A after rotation: %v; want ErrUnknownKey", err)
	}
}

// TestSealPlainDatabase gives a key to a database written without one:
// its plain configurations still read, ResealPushConfigs seals them, and
// afterwards no plain secret is left in the files.
func TestSealPlainDatabase(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	path := filepath.Join(dir, "tasks.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	want := fillSecrets(t, s)
	s.Close()
	if values := bytes.Join(rawValues(t, path), nil); !bytes.Contains(values, []byte(credOf("p1"))) {
		t.Fatal("without a key the credentials are not stored as given")
	}

	keys := testKeys(t, 1)
	s = openKeyed(t, path, keys)
	checkReads(t, s, want)
	if n, err := s.ResealPushConfigs(ctx); err != nil || n != len(want) {
		t.Fatalf("ResealPushConfigs = %d, %v; want %d", n, err, len(want))
	}
	checkReads(t, s, want)
	wantNoSecrets(t, dir, path, want)
	s.Close()
	wantNoSecrets(t, dir, path, want)

	if _, err := OpenWith(path, nil); !errors.Is(err, ErrNoPushKey) {
		t.Errorf("Open without a key after sealing: %v; want ErrNoPushKey", err)
	}
	plain, err := Open(filepath.Join(dir, "other.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if _, err := plain.ResealPushConfigs(context.Background()); err == nil {
		t.Error("ResealPushConfigs without keys succeeded")
	}
}

// TestDeletedLeavesNoResidue checks that a deleted configuration's
// secrets, stored as given without a key, are gone from the file and not
// just unlinked (secure_delete): deleting is permanent (spec §3.1.10).
func TestDeletedLeavesNoResidue(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	path := filepath.Join(dir, "tasks.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateTask(ctx, scope, newTask("task-1", a2a.TaskState_TASK_STATE_SUBMITTED, 1), taskstore.Event{}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"p1", "p2", "p3"} {
		if err := s.PutPushConfig(ctx, scope, secretConfig("task-1", id), taskstore.Event{}); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	s, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.DeletePushConfig(ctx, scope, "task-1", "p2"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(credOf("p1"))) {
		t.Fatal("a live plain credential is not in the file: the search looks in the wrong place")
	}
	if bytes.Contains(b, []byte(credOf("p2"))) || bytes.Contains(b, []byte(tokenOf("p2"))) {
		t.Error("the deleted configuration's secrets are still in the file")
	}
}
