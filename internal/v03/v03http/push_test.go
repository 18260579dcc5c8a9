package v03http_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestPushConfigsV03: set, get (with and without a config id), list and
// delete over v0.3 JSON-RPC and HTTP+JSON; a config registered over v0.3
// is seen by v0.3 and v1.0 readers alike with the URL as it was given
// (its version is stored apart from it).
func TestPushConfigsV03(t *testing.T) {
	t.Parallel()
	s := start(t, nil)
	task := result(t, rpc(t, s.URL, "", "message/send", sendParams("p-1", "input-required")))
	id := task["id"].(string)

	set := result(t, rpc(t, s.URL, "", "tasks/pushNotificationConfig/set",
		`{"taskId":"`+id+`","pushNotificationConfig":{"id":"c1","url":"https://hooks.example/a2a","token":"tok","authentication":{"schemes":["Bearer"],"credentials":"xyz"}}}`))
	pc := set["pushNotificationConfig"].(map[string]any)
	if set["taskId"] != id || pc["id"] != "c1" || pc["url"] != "https://hooks.example/a2a" || pc["token"] != "tok" {
		t.Fatalf("set: %v", set)
	}
	if got := result(t, rpc(t, s.URL, "", "tasks/pushNotificationConfig/get", `{"id":"`+id+`","pushNotificationConfigId":"c1"}`)); got["pushNotificationConfig"].(map[string]any)["url"] != "https://hooks.example/a2a" {
		t.Errorf("get: %v", got)
	}
	if got := result(t, rpc(t, s.URL, "", "tasks/pushNotificationConfig/get", `{"id":"`+id+`"}`)); got["pushNotificationConfig"].(map[string]any)["id"] != "c1" {
		t.Errorf("get without a config id: %v", got)
	}
	// v1.0 sees the URL as given too.
	r := rpc(t, s.URL, "1.0", "GetTaskPushNotificationConfig", `{"taskId":"`+id+`","id":"c1"}`)
	if u := result(t, r)["url"]; u != "https://hooks.example/a2a" {
		t.Errorf("v1.0 sees url %v", u)
	}
	// REST: set a second, list both, get, delete.
	st, body := post(t, s.URL+"/v1/tasks/"+id+"/pushNotificationConfigs", "",
		`{"name":"tasks/`+id+`/pushNotificationConfigs/c2","pushNotificationConfig":{"url":"https://hooks.example/two"}}`)
	if st != 200 || !strings.Contains(body, `"name":"tasks/`+id+`/pushNotificationConfigs/c2"`) {
		t.Fatalf("REST set: %d %s", st, body)
	}
	// The JS SDK 0.3 server's shape, {parent, configId, config}, too.
	st, body = post(t, s.URL+"/v1/tasks/"+id+"/pushNotificationConfigs", "",
		`{"parent":"tasks/`+id+`","configId":"c3","config":{"pushNotificationConfig":{"url":"https://hooks.example/three"}}}`)
	if st != 200 || !strings.Contains(body, `pushNotificationConfigs/c3"`) {
		t.Fatalf("REST set (wrapped): %d %s", st, body)
	}
	st, body = do(t, "GET", s.URL+"/v1/tasks/"+id+"/pushNotificationConfigs", "", "")
	var list struct {
		Configs []struct{ Name string } `json:"configs"`
	}
	if json.Unmarshal([]byte(body), &list); st != 200 || len(list.Configs) != 3 {
		t.Fatalf("REST list: %d %s", st, body)
	}
	if st, body = do(t, "GET", s.URL+"/v1/tasks/"+id+"/pushNotificationConfigs/c2", "", ""); st != 200 || !strings.Contains(body, "https://hooks.example/two\"") {
		t.Errorf("REST get: %d %s", st, body)
	}
	if st, body = do(t, "DELETE", s.URL+"/v1/tasks/"+id+"/pushNotificationConfigs/c2", "", ""); st != 204 {
		t.Errorf("REST delete: %d %s", st, body)
	}
	if r := rpc(t, s.URL, "", "tasks/pushNotificationConfig/delete", `{"id":"`+id+`","pushNotificationConfigId":"c1"}`); errCode(r) != 0 || r["result"] != nil {
		t.Errorf("delete: %v", r)
	}
	r = rpc(t, s.URL, "", "tasks/pushNotificationConfig/list", `{"id":"`+id+`"}`)
	if l, _ := r["result"].([]any); len(l) != 1 {
		t.Errorf("list after deletes: %v", r)
	}
	if st, _ = do(t, "GET", s.URL+"/v1/tasks/"+id+"/pushNotificationConfigs/c1", "", ""); st != 404 {
		t.Errorf("REST get of a deleted config: %d, want 404", st)
	}
}

// TestWrongGeneration: a v0.3 request in v1.0 shapes (and a v1.0 request
// in v0.3 shapes) is InvalidParams naming the member, and nothing is
// stored.
func TestWrongGeneration(t *testing.T) {
	t.Parallel()
	s := start(t, nil)
	cases := []struct {
		name, method, version, params, member string
	}{
		{"v1.0 message to message/send", "message/send", "", `{"message":{"messageId":"w1","role":"ROLE_USER","parts":[{"text":"hi"}]}}`, "message.role"},
		{"v1.0 part to message/send", "message/send", "", `{"message":{"kind":"message","messageId":"w2","role":"user","parts":[{"text":"hi"}]}}`, "message.parts[0].kind"},
		{"wrong type", "message/send", "", `{"message":{"kind":"message","messageId":"w3","role":"user","parts":"hi"}}`, "message.parts"},
		{"v0.3 message to SendMessage", "SendMessage", "1.0", `{"message":{"kind":"message","messageId":"w4","role":"user","parts":[{"kind":"text","text":"hi"}]}}`, "role"},
		{"v1.0 push config to set", "tasks/pushNotificationConfig/set", "", `{"taskId":"t","url":"https://h.example/x"}`, "pushNotificationConfig"},
	}
	for _, c := range cases {
		r := rpc(t, s.URL, c.version, c.method, c.params)
		e, _ := r["error"].(map[string]any)
		if errCode(r) != -32602 || !strings.Contains(e["message"].(string), c.member) {
			t.Errorf("%s: %v, want -32602 naming %s", c.name, r, c.member)
		}
	}
	st, body := post(t, s.URL+"/v1/message:send", "", `{"message":{"kind":"message","messageId":"w5","role":"user","parts":[{"kind":"text","text":"hi"}]}}`)
	if st != 400 || !strings.Contains(body, "-32602") || !strings.Contains(body, "message.role") {
		t.Errorf("v0.3 JSON-RPC shape on v0.3 REST: %d %s", st, body)
	}
	r := result(t, rpc(t, s.URL, "1.0", "ListTasks", `{}`))
	if tasks, _ := r["tasks"].([]any); len(tasks) != 0 {
		t.Errorf("tasks stored by refused requests: %v", tasks)
	}
}
