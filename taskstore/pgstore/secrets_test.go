package pgstore

import (
	"bytes"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/pgtest"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/seal"
	"parley.dev/parley/taskstore/storetest"
)

func testKeys(t *testing.T, raw ...byte) *seal.Keys {
	t.Helper()
	var ks [][]byte
	for _, r := range raw {
		ks = append(ks, bytes.Repeat([]byte{r}, 32))
	}
	k, err := seal.New(ks...)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestConformanceSealed runs the store suite with push keys given.
func TestConformanceSealed(t *testing.T) {
	db := pgtest.NewDatabase(t)
	keys := testKeys(t, 1, 2)
	storetest.Run(t, func(t *testing.T) taskstore.Store { return openFresh(t, db, &Options{PushKeys: keys}) })
}

// TestSealedSecrets stores a configuration with a key: its URL, token and
// credentials are not in the database's row; reopening without the key
// or with another is refused; after a rotation ResealPushConfigs moves it
// to the new key and it still reads back whole.
func TestSealedSecrets(t *testing.T) {
	ctx := t.Context()
	u := pgtest.NewSchema(t, pgtest.NewDatabase(t))
	s, err := Open(ctx, u, &Options{PushKeys: testKeys(t, 1)})
	if err != nil {
		t.Fatal(err)
	}
	tk := newTask("t", 1)
	if err := s.CreateTask(ctx, scope, tk, snapshot(tk)); err != nil {
		t.Fatal(err)
	}
	cfg := &taskstore.PushConfig{Version: "0.3", TaskPushNotificationConfig: &a2a.TaskPushNotificationConfig{TaskId: "t", Id: "c",
		Url: "https://hook.example/SECRET-PATH", Token: "SECRET-TOKEN", Authentication: &a2a.AuthenticationInfo{Scheme: "Bearer", Credentials: "SECRET-CRED"}}}
	if err := s.PutPushConfig(ctx, scope, cfg, taskstore.Event{}); err != nil {
		t.Fatal(err)
	}
	s.Close()

	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	var data, secret []byte
	if err := conn.QueryRow(ctx, `SELECT data, secret FROM push_configs`).Scan(&data, &secret); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)
	for _, word := range []string{"SECRET-PATH", "SECRET-TOKEN", "SECRET-CRED"} {
		if bytes.Contains(data, []byte(word)) || bytes.Contains(secret, []byte(word)) {
			t.Errorf("%s is stored in plain text", word)
		}
	}

	if _, err := Open(ctx, u, nil); !errors.Is(err, ErrNoPushKey) {
		t.Errorf("Open without keys: %v, want ErrNoPushKey", err)
	}
	if _, err := Open(ctx, u, &Options{PushKeys: testKeys(t, 3)}); !errors.Is(err, seal.ErrUnknownKey) {
		t.Errorf("Open with another key: %v, want seal.ErrUnknownKey", err)
	}
	rotated := testKeys(t, 3, 1)
	s, err = Open(ctx, u, &Options{PushKeys: rotated})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := s.ResealPushConfigs(ctx); n != 1 || err != nil {
		t.Fatalf("ResealPushConfigs: %d, %v; want 1", n, err)
	}
	got, err := s.GetPushConfig(ctx, scope, "t", "c")
	if err != nil || got.GetUrl() != cfg.Url || got.GetToken() != cfg.Token || got.GetAuthentication().GetCredentials() != "SECRET-CRED" || got.Version != "0.3" {
		t.Fatalf("after reseal: %v, %v", got, err)
	}
	s.Close()
	if _, err := Open(ctx, u, &Options{PushKeys: testKeys(t, 3)}); err != nil {
		t.Errorf("Open with only the new key after reseal: %v", err)
	}
}
