// Package marktest is the fixture of the SQL stores' tests of schema
// version 6, which gives push configurations a version column: the
// configurations a version 5 database held, whose URLs carried a mark on
// their fragment when they were registered over v0.3, and what the
// migration must make of them. Only tests import it.
package marktest

import (
	"testing"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
)

// Config is one configuration of the fixture: its URL as version 5 stored
// it, and its URL and version after the migration.
type Config struct {
	ID, Stored string
	URL        string
	Version    string
}

// Configs are the fixture's configurations. Only a mark on the fragment
// is one: the same words in the query, or a fragment that merely starts
// with them, are the caller's.
var Configs = []Config{
	{"plain", "https://h.example/a?x=1", "https://h.example/a?x=1", "1.0"},
	{"marked", "https://h.example/b#a2a-version=0.3", "https://h.example/b", "0.3"},
	{"fragment", "https://h.example/c?x=1#frag&a2a-version=0.3", "https://h.example/c?x=1#frag", "0.3"},
	{"empty-fragment", "https://h.example/d#&a2a-version=0.3", "https://h.example/d#", "0.3"},
	{"query", "https://h.example/e?a2a-version=0.3", "https://h.example/e?a2a-version=0.3", "1.0"},
	{"not-a-mark", "https://h.example/f#a2a-version=0.3x", "https://h.example/f#a2a-version=0.3x", "1.0"},
}

// Store is what the fixture writes and reads through.
type Store interface {
	taskstore.Tasks
	taskstore.PushConfigs
	taskstore.Outbox
}

// Put creates the task taskID in sc and stores the fixture's
// configurations on it as version 5 did (the URL as stored, mark
// included), each with a token and credentials and with the task's
// snapshot queued for it. The caller then takes the version column away
// and records schema version 5.
func Put(t *testing.T, s Store, sc taskstore.Scope, taskID string) {
	t.Helper()
	ctx := t.Context()
	tk := &a2a.Task{Id: taskID, ContextId: "c", Status: &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_WORKING}}
	snap := &a2a.StreamResponse{Payload: &a2a.StreamResponse_Task{Task: tk}}
	if err := s.CreateTask(ctx, sc, tk, taskstore.Event{Seq: 1, Response: snap}); err != nil {
		t.Fatal(err)
	}
	for _, c := range Configs {
		if err := s.PutPushConfig(ctx, sc, stored(taskID, c), taskstore.Event{Seq: 1, Response: snap, Push: true}); err != nil {
			t.Fatalf("PutPushConfig(%s): %v", c.ID, err)
		}
	}
}

// stored is c as Put stores it.
func stored(taskID string, c Config) *taskstore.PushConfig {
	return &taskstore.PushConfig{TaskPushNotificationConfig: &a2a.TaskPushNotificationConfig{Id: c.ID, TaskId: taskID, Url: c.Stored,
		Token: "tok-" + c.ID, Authentication: &a2a.AuthenticationInfo{Scheme: "Bearer", Credentials: "cred-" + c.ID}}}
}

// Check reads the configurations Put stored back after the migration,
// each way a store returns one (GetPushConfig, ListPushConfigs and the
// queued notification, which the migration keeps): each has its URL
// without the mark and its version, and the rest as it was.
func Check(t *testing.T, s Store, sc taskstore.Scope, taskID string) {
	t.Helper()
	ctx := t.Context()
	list, err := s.ListPushConfigs(ctx, sc, taskID)
	if err != nil || len(list) != len(Configs) {
		t.Fatalf("ListPushConfigs after the migration: %d configs, %v; want %d", len(list), err, len(Configs))
	}
	listed := map[string]*taskstore.PushConfig{}
	for _, c := range list {
		listed[c.Id] = c
	}
	for _, c := range Configs {
		want := stored(taskID, c)
		want.Url, want.Version = c.URL, c.Version
		got, err := s.GetPushConfig(ctx, sc, taskID, c.ID)
		if err != nil {
			t.Fatalf("GetPushConfig(%s) after the migration: %v", c.ID, err)
		}
		ns, err := s.PendingPush(ctx, taskstore.PushTarget{Scope: sc, TaskID: taskID, ConfigID: c.ID}, 10)
		if err != nil || len(ns) != 1 {
			t.Fatalf("PendingPush(%s) after the migration: %d, %v; want the queued snapshot", c.ID, len(ns), err)
		}
		for way, got := range map[string]*taskstore.PushConfig{"GetPushConfig": got, "ListPushConfigs": listed[c.ID], "PendingPush": ns[0].Config} {
			if !taskstore.EqualPushConfig(got, want) {
				t.Errorf("%s(%s) after the migration: got %v, want %v (version %q)", way, c.ID, got, want, want.Version)
			}
		}
	}
}
