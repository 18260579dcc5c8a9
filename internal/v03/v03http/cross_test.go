package v03http_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestSharedTask: a task created over v0.3 JSON-RPC is read over v1.0
// HTTP+JSON and v0.3 HTTP+JSON, continued over v1.0 JSON-RPC, and read
// back over v0.3 with the follow-up in its history; a task created over
// v1.0 is cancelled over v0.3 HTTP+JSON.
func TestSharedTask(t *testing.T) {
	t.Parallel()
	s := start(t, nil)
	task := result(t, rpc(t, s.URL, "", "message/send", sendParams("m-1", "input-required")))
	id, _ := task["id"].(string)
	if task["kind"] != "task" || task["status"].(map[string]any)["state"] != "input-required" {
		t.Fatalf("v0.3 send: %v", task)
	}
	// v1.0 HTTP+JSON reads it.
	st, body := do(t, "GET", s.URL+"/tasks/"+id, "1.0", "")
	if st != 200 || !strings.Contains(body, `"TASK_STATE_INPUT_REQUIRED"`) || !strings.Contains(body, `"m-1"`) {
		t.Fatalf("v1.0 GetTask: %d %s", st, body)
	}
	// v1.0 JSON-RPC continues it.
	follow := `{"message":{"messageId":"m-2","role":"ROLE_USER","taskId":"` + id + `","parts":[{"text":"hello again"}]}}`
	r := rpc(t, s.URL, "1.0", "SendMessage", follow)
	if errCode(r) != 0 {
		t.Fatalf("v1.0 follow-up: %v", r)
	}
	// v0.3 HTTP+JSON reads both messages, in proto shape.
	st, body = do(t, "GET", s.URL+"/v1/tasks/"+id, "", "")
	if st != 200 || !strings.Contains(body, `"m-1"`) || !strings.Contains(body, `"m-2"`) || !strings.Contains(body, `"content"`) {
		t.Fatalf("v0.3 REST get: %d %s", st, body)
	}
	var pt struct {
		Status struct{ State string } `json:"status"`
	}
	json.Unmarshal([]byte(body), &pt)
	if pt.Status.State != "TASK_STATE_COMPLETED" {
		t.Errorf("v0.3 REST state %q, want TASK_STATE_COMPLETED", pt.Status.State)
	}
	// v0.3 JSON-RPC sees lowercase states and kinds.
	got := result(t, rpc(t, s.URL, "0.3", "tasks/get", `{"id":"`+id+`","historyLength":1}`))
	if got["status"].(map[string]any)["state"] != "completed" || len(got["history"].([]any)) != 1 {
		t.Errorf("v0.3 tasks/get historyLength 1: %v", got)
	}

	// A v1.0 task, still working, cancelled over v0.3 HTTP+JSON.
	r = rpc(t, s.URL, "1.0", "SendMessage", `{"message":{"messageId":"m-3","role":"ROLE_USER","parts":[{"text":"slow 5000"}]},"configuration":{"returnImmediately":true}}`)
	id2 := result(t, r)["task"].(map[string]any)["id"].(string)
	st, body = post(t, s.URL+"/v1/tasks/"+id2+":cancel", "", "")
	if st != 200 || !strings.Contains(body, "TASK_STATE_CANCELLED") {
		t.Fatalf("v0.3 REST cancel: %d %s", st, body)
	}
	// Cancelling it again over v0.3 JSON-RPC is idempotent (spec §3.1.5).
	again := result(t, rpc(t, s.URL, "", "tasks/cancel", `{"id":"`+id2+`"}`))
	if again["status"].(map[string]any)["state"] != "canceled" {
		t.Errorf("second cancel: %v", again)
	}
	// A completed task cannot be cancelled: TaskNotCancelable, -32002.
	if c := errCode(rpc(t, s.URL, "", "tasks/cancel", `{"id":"`+id+`"}`)); c != -32002 {
		t.Errorf("cancel of a completed task: code %d, want -32002", c)
	}
}

// TestStreamsV03: message/stream and tasks/resubscribe carry kinds and a
// final flag on the last status update; the REST stream carries the proto
// StreamResponse; a v1.0 subscriber of a v0.3 task sees v1.0 shapes.
func TestStreamsV03(t *testing.T) {
	t.Parallel()
	s := start(t, nil)
	evs := sseEvents(t, s.URL, "", `{"jsonrpc":"2.0","id":"s1","method":"message/stream","params":`+sendParams("st-1", "stream 2")+`}`)
	if len(evs) < 3 {
		t.Fatalf("stream events: %v", evs)
	}
	var kinds []string
	var lastFinal bool
	for _, e := range evs {
		var r struct {
			ID     string         `json:"id"`
			Result map[string]any `json:"result"`
		}
		if err := json.Unmarshal([]byte(e), &r); err != nil || r.ID != "s1" {
			t.Fatalf("event %s: %v", e, err)
		}
		kinds = append(kinds, r.Result["kind"].(string))
		if f, ok := r.Result["final"].(bool); ok {
			lastFinal = f
		}
	}
	if kinds[0] != "task" || kinds[len(kinds)-1] != "status-update" || !lastFinal {
		t.Errorf("kinds %v, last final %v: want a task first and a final status-update last", kinds, lastFinal)
	}

	// REST stream of an input-required task, then resubscribe over v0.3.
	evs = sseEvents(t, s.URL+"/v1/message:stream", "", `{"message":{"messageId":"st-2","role":"ROLE_USER","content":[{"text":"input-required"}]}}`)
	if len(evs) == 0 || !strings.HasPrefix(evs[0], `{"task":`) || !strings.Contains(evs[len(evs)-1], `"final":true`) {
		t.Fatalf("REST stream: %v", evs)
	}
	var first struct{ Task struct{ ID string } }
	json.Unmarshal([]byte(evs[0]), &first)
	// Complete it over v1.0 while a v0.3 JSON-RPC subscriber listens.
	next := sseStream(t, s.URL, "", `{"jsonrpc":"2.0","id":9,"method":"tasks/resubscribe","params":{"id":"`+first.Task.ID+`"}}`)
	snap, _ := next() // the snapshot: the subscription is live
	rpc(t, s.URL, "1.0", "SendMessage", `{"message":{"messageId":"st-3","role":"ROLE_USER","taskId":"`+first.Task.ID+`","parts":[{"text":"ok"}]}}`)
	sub := []string{snap}
	for d, ok := next(); ok; d, ok = next() {
		sub = append(sub, d)
	}
	if len(sub) < 2 || !strings.Contains(sub[0], `"kind":"task"`) || !strings.Contains(sub[len(sub)-1], `"final":true`) || !strings.Contains(sub[len(sub)-1], `"completed"`) {
		t.Errorf("resubscribe: %v", sub)
	}
}
