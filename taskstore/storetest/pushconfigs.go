package storetest

import (
	"errors"
	"fmt"
	"testing"

	"parley.dev/parley/a2a"
	"parley.dev/parley/taskstore"
)

// pushConfigChecks are the tests of the push configurations role.
var pushConfigChecks = []check[PushConfigStore]{
	{"PushConfigs", testPushConfigs},
	{"PushConfigScope", testPushConfigScope},
	{"PushConfigScopeIsolation", testPushConfigScopeIsolation},
	{"PushConfigCopiesInAndOut", testPushConfigCopies},
	{"PushConfigVersion", testPushConfigVersion},
	{"DeleteFinishedRemovesPushConfigs", testDeleteFinishedConfigs},
}

// testPushConfigs: configurations are stored per task, replaced whole,
// listed by id, deleted one by one, and survive updates of their task.
func testPushConfigs(t *testing.T, s PushConfigStore) {
	ctx := t.Context()
	mustCreate(t, s, scopeA, task("t1", "c", working, at(1)), task("t2", "c", working, at(2)))
	put := func(c *taskstore.PushConfig) {
		t.Helper()
		if err := s.PutPushConfig(ctx, scopeA, c, taskstore.Event{}); err != nil {
			t.Fatalf("PutPushConfig(%q, %q): %v", c.TaskId, c.Id, err)
		}
	}
	cfg := func(taskID, id, url string) *taskstore.PushConfig {
		return v10(&a2a.TaskPushNotificationConfig{Tenant: "t1", Id: id, TaskId: taskID, Url: url, Token: "tok-" + id,
			Authentication: &a2a.AuthenticationInfo{Scheme: "Bearer", Credentials: "cred-" + id}})
	}
	for _, id := range []string{"b", "c", "a", "B"} {
		put(cfg("t1", id, "https://h.example/"+id))
	}
	put(cfg("t2", "a", "https://other.example/a"))

	got, err := s.GetPushConfig(ctx, scopeA, "t1", "a")
	if err != nil {
		t.Fatalf("GetPushConfig: %v", err)
	}
	wantConfig(t, "GetPushConfig", got, cfg("t1", "a", "https://h.example/a"))

	// Upsert replaces the whole configuration.
	repl := v10(&a2a.TaskPushNotificationConfig{Id: "a", TaskId: "t1", Url: "https://new.example"})
	put(repl)
	got, _ = s.GetPushConfig(ctx, scopeA, "t1", "a")
	wantConfig(t, "GetPushConfig after replace", got, repl)

	list, err := s.ListPushConfigs(ctx, scopeA, "t1")
	if err != nil {
		t.Fatalf("ListPushConfigs: %v", err)
	}
	var gotIDs []string
	for _, c := range list {
		gotIDs = append(gotIDs, c.GetId())
	}
	sameIDs(t, "ListPushConfigs order", gotIDs, []string{"B", "a", "b", "c"})
	wantConfig(t, "listed config", list[0], cfg("t1", "B", "https://h.example/B"))

	// Another task's config with the same id is separate.
	got, _ = s.GetPushConfig(ctx, scopeA, "t2", "a")
	wantConfig(t, "config of another task with the same id", got, cfg("t2", "a", "https://other.example/a"))

	if err := s.DeletePushConfig(ctx, scopeA, "t1", "b"); err != nil {
		t.Fatalf("DeletePushConfig: %v", err)
	}
	_, err = s.GetPushConfig(ctx, scopeA, "t1", "b")
	wantErr(t, "GetPushConfig after delete", err, taskstore.ErrNotFound)
	if err := s.DeletePushConfig(ctx, scopeA, "t1", "b"); err != nil {
		t.Errorf("DeletePushConfig of a missing config: %v, want nil", err)
	}
	if list, _ := s.ListPushConfigs(ctx, scopeA, "t1"); len(list) != 3 {
		t.Errorf("ListPushConfigs after delete: %d configs, want 3", len(list))
	}
	if list, _ := s.ListPushConfigs(ctx, scopeA, "t2"); len(list) != 1 {
		t.Errorf("other task's configs after delete: %d, want 1", len(list))
	}

	_, err = s.GetPushConfig(ctx, scopeA, "t1", "missing")
	wantErr(t, "GetPushConfig of a missing id", err, taskstore.ErrNotFound)
	err = s.PutPushConfig(ctx, scopeA, cfg("nope", "a", "https://h.example"), taskstore.Event{})
	wantErr(t, "PutPushConfig on an unknown task", err, taskstore.ErrNotFound)
	_, err = s.ListPushConfigs(ctx, scopeA, "nope")
	wantErr(t, "ListPushConfigs of an unknown task", err, taskstore.ErrNotFound)
	_, err = s.GetPushConfig(ctx, scopeA, "nope", "a")
	wantErr(t, "GetPushConfig of an unknown task", err, taskstore.ErrNotFound)

	// Configs survive updates of their task.
	mustUpdate(t, s, scopeA, task("t1", "c", completed, at(5)))
	if list, _ := s.ListPushConfigs(ctx, scopeA, "t1"); len(list) != 3 {
		t.Errorf("ListPushConfigs after a Task event: %d configs, want 3", len(list))
	}

	mustCreate(t, s, scopeA, task("t3", "c", working, at(3)))
	if list, err := s.ListPushConfigs(ctx, scopeA, "t3"); err != nil || len(list) != 0 {
		t.Errorf("ListPushConfigs of a task without configs: %d, %v; want none", len(list), err)
	}
}

// testPushConfigScope: a caller cannot reach the configurations of another
// scope's task, even by their ids.
func testPushConfigScope(t *testing.T, s PushConfigStore) {
	ctx := t.Context()
	mustCreate(t, s, scopeA, task("t1", "c", working, at(1)))
	mustCreate(t, s, scopeB, task("t2", "c", working, at(1)))
	if err := s.PutPushConfig(ctx, scopeB, v10(&a2a.TaskPushNotificationConfig{Id: "p", TaskId: "t2", Url: "https://b.example"}), taskstore.Event{}); err != nil {
		t.Fatalf("PutPushConfig: %v", err)
	}
	// A's caller cannot reach B's task's configs, even by its own id.
	_, err := s.GetPushConfig(ctx, scopeA, "t2", "p")
	wantErr(t, "GetPushConfig across scopes", err, taskstore.ErrNotFound)
	err = s.DeletePushConfig(ctx, scopeA, "t2", "p")
	wantErr(t, "DeletePushConfig across scopes", err, taskstore.ErrNotFound)
	if c, err := s.GetPushConfig(ctx, scopeB, "t2", "p"); err != nil || c.GetUrl() != "https://b.example" {
		t.Errorf("B's config after A's attempts: %v, %v", c, err)
	}
	if list, err := s.ListPushConfigs(ctx, scopeA, "t1"); err != nil || len(list) != 0 {
		t.Errorf("A's task lists %d configs (error %v), want none", len(list), err)
	}
}

// testPushConfigScopeIsolation: no other scope can read, list, write or
// delete a task's configurations, and trying leaves the task and its
// configuration as they were.
func testPushConfigScopeIsolation(t *testing.T, s PushConfigStore) {
	ctx := t.Context()
	a := task("a1", "shared-ctx", working, at(10))
	mustCreate(t, s, scopeA, a, task("a2", "shared-ctx", completed, at(20)))
	mustCreate(t, s, scopeB, task("b1", "shared-ctx", working, at(15)))
	if err := s.PutPushConfig(ctx, scopeA, v10(&a2a.TaskPushNotificationConfig{Id: "p", TaskId: "a1", Url: "https://a.example"}), taskstore.Event{}); err != nil {
		t.Fatalf("PutPushConfig: %v", err)
	}

	for _, sc := range others {
		name := fmt.Sprintf("scope %+v", sc)
		_, err := s.GetPushConfig(ctx, sc, "a1", "p")
		wantErr(t, name+": GetPushConfig of another scope's task", err, taskstore.ErrNotFound)
		_, err = s.ListPushConfigs(ctx, sc, "a1")
		wantErr(t, name+": ListPushConfigs of another scope's task", err, taskstore.ErrNotFound)
		err = s.PutPushConfig(ctx, sc, v10(&a2a.TaskPushNotificationConfig{Id: "p", TaskId: "a1", Url: "https://evil.example"}), taskstore.Event{})
		wantErr(t, name+": PutPushConfig on another scope's task", err, taskstore.ErrNotFound)
		err = s.DeletePushConfig(ctx, sc, "a1", "p")
		wantErr(t, name+": DeletePushConfig on another scope's task", err, taskstore.ErrNotFound)
	}

	wantEqual(t, "scope A's task after other scopes touched it", mustGet(t, s, scopeA, "a1"), a)
	cfg, err := s.GetPushConfig(ctx, scopeA, "a1", "p")
	if err != nil || cfg.GetUrl() != "https://a.example" {
		t.Errorf("scope A's config after other scopes touched it: %v, %v", cfg, err)
	}
}

// testPushConfigCopies: the store keeps copies of the configurations it
// is given and returns copies.
func testPushConfigCopies(t *testing.T, s PushConfigStore) {
	ctx := t.Context()
	mustCreate(t, s, scopeA, task("c1", "c", working, at(7)))
	cfg := &taskstore.PushConfig{Version: "0.3", TaskPushNotificationConfig: &a2a.TaskPushNotificationConfig{Id: "p", TaskId: "c1",
		Url: "https://example.com/hook", Token: "tok", Authentication: &a2a.AuthenticationInfo{Scheme: "Bearer", Credentials: "secret"}}}
	wantCfg := taskstore.ClonePushConfig(cfg)
	if err := s.PutPushConfig(ctx, scopeA, cfg, taskstore.Event{}); err != nil {
		t.Fatalf("PutPushConfig: %v", err)
	}
	cfg.Url = "https://evil.example"
	cfg.Authentication.Credentials = "changed"
	cfg.Version = "1.0"
	gc, err := s.GetPushConfig(ctx, scopeA, "c1", "p")
	if err != nil {
		t.Fatalf("GetPushConfig: %v", err)
	}
	wantConfig(t, "stored config after the caller changed the put config", gc, wantCfg)
	gc.Token = "x"
	gc.Authentication.Scheme = "Basic"
	gc.Version = "1.0"
	list, err := s.ListPushConfigs(ctx, scopeA, "c1")
	if err != nil || len(list) != 1 {
		t.Fatalf("ListPushConfigs: %d configs, error %v; want 1", len(list), err)
	}
	wantConfig(t, "stored config after the caller changed a returned config", list[0], wantCfg)
	list[0].Url = "changed"
	list[0].Version = "1.0"
	gc, _ = s.GetPushConfig(ctx, scopeA, "c1", "p")
	wantConfig(t, "stored config after the caller changed a listed config", gc, wantCfg)
}

// testPushConfigVersion: a configuration's version (the protocol version
// it was registered in) is kept as given, whatever it is, apart from the
// URL, which is kept exactly as given too; replacing a configuration
// replaces its version.
func testPushConfigVersion(t *testing.T, s PushConfigStore) {
	ctx := t.Context()
	mustCreate(t, s, scopeA, task("v1", "c", working, at(1)))
	url := "https://h.example/hook?x=1#frag&a2a-version=0.3"
	want := map[string]*taskstore.PushConfig{}
	for _, v := range []string{"0.3", "1.0", "1.1", ""} {
		c := &taskstore.PushConfig{Version: v, TaskPushNotificationConfig: &a2a.TaskPushNotificationConfig{
			Id: "p" + v, TaskId: "v1", Url: url, Token: "tok"}}
		if err := s.PutPushConfig(ctx, scopeA, c, taskstore.Event{}); err != nil {
			t.Fatalf("PutPushConfig(version %q): %v", v, err)
		}
		want[c.Id] = c
	}
	for id, c := range want {
		got, err := s.GetPushConfig(ctx, scopeA, "v1", id)
		if err != nil {
			t.Fatalf("GetPushConfig(%s): %v", id, err)
		}
		wantConfig(t, "GetPushConfig of version "+c.Version, got, c)
	}
	list, err := s.ListPushConfigs(ctx, scopeA, "v1")
	if err != nil || len(list) != len(want) {
		t.Fatalf("ListPushConfigs: %d configs, error %v; want %d", len(list), err, len(want))
	}
	for _, got := range list {
		wantConfig(t, "listed config of version "+want[got.Id].Version, got, want[got.Id])
	}
	repl := taskstore.ClonePushConfig(want["p0.3"])
	repl.Version = "1.0"
	if err := s.PutPushConfig(ctx, scopeA, repl, taskstore.Event{}); err != nil {
		t.Fatalf("PutPushConfig (replace): %v", err)
	}
	got, err := s.GetPushConfig(ctx, scopeA, "v1", repl.Id)
	if err != nil {
		t.Fatalf("GetPushConfig after replace: %v", err)
	}
	wantConfig(t, "GetPushConfig after a replace with another version", got, repl)
}

// testDeleteFinishedConfigs: DeleteFinished removes the configurations of
// the tasks it removes and keeps the others'; a task created later with a
// removed id starts without any.
func testDeleteFinishedConfigs(t *testing.T, s PushConfigStore) {
	ctx := t.Context()
	all := finishedTasks()
	for _, p := range all {
		mustCreate(t, s, p.sc, p.tk)
		for _, id := range []string{"p2", "p1"} {
			if err := s.PutPushConfig(ctx, p.sc, v10(&a2a.TaskPushNotificationConfig{Id: id, TaskId: p.tk.Id, Url: "https://h.example/" + id}), taskstore.Event{}); err != nil {
				t.Fatalf("PutPushConfig: %v", err)
			}
		}
	}
	if n, err := s.DeleteFinished(ctx, finishedCut); err != nil || n != 4 {
		t.Fatalf("DeleteFinished = %d, %v; want 4", n, err)
	}
	for _, p := range all {
		cfgs, err := s.ListPushConfigs(ctx, p.sc, p.tk.Id)
		switch {
		case p.gone && !errors.Is(err, taskstore.ErrNotFound):
			t.Errorf("configs of removed task %q still listed: %d, %v", p.tk.Id, len(cfgs), err)
		case !p.gone && (err != nil || len(cfgs) != 2):
			t.Errorf("configs of kept task %q: %d, %v; want 2", p.tk.Id, len(cfgs), err)
		}
	}
	// A removed id can be used again and starts without configurations.
	mustCreate(t, s, scopeA, task("f-old", "c", working, at(200)))
	if cfgs, err := s.ListPushConfigs(ctx, scopeA, "f-old"); err != nil || len(cfgs) != 0 {
		t.Errorf("configs of a recreated task: %d, %v; want none", len(cfgs), err)
	}
}
