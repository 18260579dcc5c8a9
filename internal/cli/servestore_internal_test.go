package cli

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/seal"
	"parley.dev/parley/taskstore/sqlitestore"
)

// syncBuf is a bytes.Buffer that a logger may write to from several
// goroutines.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// newStoreFlags parses args as `parley serve` would for the store flags,
// with env as the environment.
func newStoreFlags(t *testing.T, env map[string]string, args ...string) *storeFlags {
	t.Helper()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f := addStoreFlags(fs)
	f.getenv = func(k string) string { return env[k] }
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return f
}

func writeKeyFile(t *testing.T, dir, text string) string {
	t.Helper()
	path := filepath.Join(dir, "push.key")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestPushKeySources(t *testing.T) {
	t.Parallel()
	a, b := seal.Encode(seal.NewKey()), seal.Encode(seal.NewKey())
	idOf := func(k string) string {
		keys, err := seal.Parse(k)
		if err != nil {
			t.Fatal(err)
		}
		return keys.IDs()[0]
	}
	dir := t.TempDir()
	fileAB := writeKeyFile(t, dir, "# new\n"+b+"\n# old\n"+a+"\n")
	for _, tc := range []struct {
		name    string
		env     map[string]string
		args    []string
		want    []string // key ids
		from    string
		warning string
	}{
		{name: "none"},
		{name: "env", env: map[string]string{pushKeyEnv: a}, want: []string{idOf(a)}, from: pushKeyEnv},
		{name: "env, two keys", env: map[string]string{pushKeyEnv: b + "," + a}, want: []string{idOf(b), idOf(a)}, from: pushKeyEnv},
		{name: "file", args: []string{"-push-key-file", fileAB}, want: []string{idOf(b), idOf(a)}, from: fileAB},
		{name: "file wins over env", env: map[string]string{pushKeyEnv: a}, args: []string{"-push-key-file", fileAB},
			want: []string{idOf(b), idOf(a)}, from: fileAB, warning: pushKeyEnv + " is ignored"},
	} {
		var logs syncBuf
		log := slog.New(slog.NewTextHandler(&logs, nil))
		keys, from, err := newStoreFlags(t, tc.env, tc.args...).pushKeys(log)
		if err != nil {
			t.Errorf("%s: pushKeys: %v", tc.name, err)
			continue
		}
		var got []string
		if keys != nil {
			got = keys.IDs()
		}
		if strings.Join(got, " ") != strings.Join(tc.want, " ") || from != tc.from {
			t.Errorf("%s: pushKeys = %v from %q, want %v from %q", tc.name, got, from, tc.want, tc.from)
		}
		if tc.warning != "" && !strings.Contains(logs.String(), tc.warning) {
			t.Errorf("%s: log %q lacks %q", tc.name, logs.String(), tc.warning)
		}
	}
}

func TestPushKeyErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	short := "c2VjcmV0LXNob3J0LWtleQ" // 16 bytes: not a key
	bad := writeKeyFile(t, dir, short+"\n")
	open := filepath.Join(t.TempDir(), "push.key")
	if err := os.WriteFile(open, []byte(seal.Encode(seal.NewKey())), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"bad env key", map[string]string{pushKeyEnv: short}, nil, pushKeyEnv},
		{"bad file key", nil, []string{"-push-key-file", bad}, "-push-key-file " + bad},
		{"missing file", nil, []string{"-push-key-file", filepath.Join(dir, "nope")}, "-push-key-file"},
		{"empty env", map[string]string{pushKeyEnv: " # nothing\n"}, nil, "no key"},
	} {
		_, _, err := newStoreFlags(t, tc.env, tc.args...).pushKeys(slog.New(slog.DiscardHandler))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: pushKeys error = %v, want one naming %q", tc.name, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), short) {
			t.Errorf("%s: the error %q repeats the key", tc.name, err)
		}
	}

	// A key file others can read works, with a warning.
	var logs syncBuf
	if _, _, err := newStoreFlags(t, nil, "-push-key-file", open).pushKeys(slog.New(slog.NewTextHandler(&logs, nil))); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "chmod 600") {
		t.Errorf("no warning about a key file with mode 0644: %q", logs.String())
	}
}

// TestOpenStoreKeys follows an operator through the store's life: no key
// (a warning), a first key (plain configurations get encrypted), a
// restart without the key (refused, saying how to give it), a rotation
// through the environment, and the old key dropped. The steps build on
// each other's database, so they stay in one function.
func TestOpenStoreKeys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	spec := "sqlite:" + filepath.Join(dir, "parley.db")
	sc := taskstore.Scope{}
	cfg := &a2a.TaskPushNotificationConfig{Id: "p", TaskId: "t", Url: "https://hooks.example/p", Token: "TOKEN-CLI",
		Authentication: &a2a.AuthenticationInfo{Scheme: "Bearer", Credentials: "CRED-CLI"}}
	open := func(env map[string]string, pushOn bool, args ...string) (taskstore.Store, string, error) {
		var logs syncBuf
		s, err := newStoreFlags(t, env, args...).open(ctx, spec, pushOn, slog.New(slog.NewTextHandler(&logs, nil)))
		return s, logs.String(), err
	}
	wantConfig := func(s taskstore.Store) {
		t.Helper()
		got, err := s.GetPushConfig(ctx, sc, "t", "p")
		if err != nil || got.GetAuthentication().GetCredentials() != "CRED-CLI" || got.GetToken() != "TOKEN-CLI" {
			t.Fatalf("GetPushConfig = %v, %v; want the credentials", got, err)
		}
	}

	// No key: plain text, and a warning while push is on.
	s, logs, err := open(nil, true)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs, "plain text") {
		t.Errorf("no plain-text warning: %q", logs)
	}
	if err := s.CreateTask(ctx, sc, &a2a.Task{Id: "t", ContextId: "c"}, taskstore.Event{PushConfig: &taskstore.PushConfig{TaskPushNotificationConfig: cfg}}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s, logs, err := open(nil, false); err != nil || strings.Contains(logs, "plain text") {
		t.Errorf("push off: %v, log %q; want no plain-text warning", err, logs)
	} else {
		s.Close()
	}

	// A first key: the stored configuration is encrypted at start.
	a, b := seal.Encode(seal.NewKey()), seal.Encode(seal.NewKey())
	keyFile := writeKeyFile(t, dir, a+"\n")
	s, logs, err = open(nil, true, "-push-key-file", keyFile)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs, "configs=1") || strings.Contains(logs, "plain text") {
		t.Errorf("log with a first key = %q; want one configuration encrypted and no plain-text warning", logs)
	}
	wantConfig(s)
	s.Close()

	// Without the key the store is refused, and the message says how to
	// give it.
	_, _, err = open(nil, true)
	if !errors.Is(err, sqlitestore.ErrNoPushKey) || !strings.Contains(err.Error(), "-push-key-file") || !strings.Contains(err.Error(), pushKeyEnv) {
		t.Errorf("open without the key: %v; want ErrNoPushKey and how to give a key", err)
	}
	_, _, err = open(map[string]string{pushKeyEnv: b}, true)
	if !errors.Is(err, seal.ErrUnknownKey) || !strings.Contains(err.Error(), "-push-key-file") {
		t.Errorf("open with another key: %v; want ErrUnknownKey and how to give a key", err)
	}

	// Rotation: B first, A after it; then B alone.
	s, logs, err = open(map[string]string{pushKeyEnv: b + " " + a}, true)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs, "configs=1") {
		t.Errorf("log of the rotation = %q; want one configuration encrypted again", logs)
	}
	wantConfig(s)
	s.Close()
	s, _, err = open(map[string]string{pushKeyEnv: b}, true)
	if err != nil {
		t.Fatalf("open with the new key alone: %v", err)
	}
	wantConfig(s)
	s.Close()

	// The memory store keeps nothing at rest: a key is not used.
	s, logs, err = openMemory(t, map[string]string{pushKeyEnv: b})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if !strings.Contains(logs, "not used") {
		t.Errorf("memory store with a key: log %q; want a note that the key is not used", logs)
	}
}

// openMemory opens the memory store with env as the environment and
// returns what it logged.
func openMemory(t *testing.T, env map[string]string) (taskstore.Store, string, error) {
	var logs syncBuf
	s, err := newStoreFlags(t, env).open(context.Background(), "memory", true, slog.New(slog.NewTextHandler(&logs, nil)))
	return s, logs.String(), err
}

func TestPrintNewPushKey(t *testing.T) {
	t.Parallel()
	var a, b bytes.Buffer
	if err := printNewPushKey(&a); err != nil {
		t.Fatal(err)
	}
	printNewPushKey(&b)
	if !strings.HasSuffix(a.String(), "\n") || strings.Count(a.String(), "\n") != 1 || a.String() == b.String() {
		t.Fatalf("printNewPushKey wrote %q then %q; want two different single lines", a.String(), b.String())
	}
	if _, err := seal.Parse(a.String()); err != nil {
		t.Errorf("the printed key does not parse: %v", err)
	}
}
