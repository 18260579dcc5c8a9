package a2ahttp_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/a2ahttp"
	"parley.dev/parley/internal/testkit"
)

func TestAgentCardCaching(t *testing.T) {
	e := start(t, config{})
	resp, err := http.Get(e.url + a2ahttp.CardPath)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	etag := resp.Header.Get("ETag")
	if resp.StatusCode != 200 || etag == "" || !strings.Contains(resp.Header.Get("Cache-Control"), "max-age=") || resp.Header.Get("Last-Modified") == "" {
		t.Fatalf("card response %d, headers %v", resp.StatusCode, resp.Header)
	}
	var card a2a.AgentCard
	if err := a2a.Unmarshal(body, &card); err != nil || len(a2a.CheckRequired(&card)) > 0 {
		t.Fatalf("card does not decode as a valid AgentCard: %v %v", err, a2a.CheckRequired(&card))
	}
	if card.SupportedInterfaces[0].ProtocolBinding != "JSONRPC" || card.SupportedInterfaces[1].ProtocolBinding != "HTTP+JSON" {
		t.Fatalf("interfaces %v", card.SupportedInterfaces)
	}
	req, _ := http.NewRequest("GET", e.url+a2ahttp.CardPath, nil)
	req.Header.Set("If-None-Match", etag)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotModified {
		t.Fatalf("If-None-Match: status %d, want 304", resp.StatusCode)
	}
}

func TestContentTypes(t *testing.T) {
	e := start(t, config{})
	// docs/decisions.md#b8: JSON-RPC answers application/json, HTTP+JSON
	// application/a2a+json, both for success and error.
	for _, c := range []struct {
		b, method, params, want string
	}{
		{jsonRPC, "SendMessage", msg("x"), "application/json"},
		{jsonRPC, "GetTask", `{"id":"none"}`, "application/json"},
		{restB, "SendMessage", msg("x"), "application/a2a+json"},
		{restB, "GetTask", `{"id":"none"}`, "application/a2a+json"},
	} {
		if got := e.call(c.b, c.method, c.params).header.Get("Content-Type"); got != c.want {
			t.Errorf("%s %s: Content-Type %q, want %q", c.b, c.method, got, c.want)
		}
	}
	// REST requests may be application/json or application/a2a+json.
	for _, ct := range []string{"application/json", "application/a2a+json; charset=utf-8", "application/json;charset=UTF-8"} {
		req, _ := http.NewRequest("POST", e.url+"/message:send", strings.NewReader(msg("x")))
		req.Header.Set("Content-Type", ct)
		req.Header.Set("A2A-Version", "1.0")
		mustOK(t, e.do(restB, req))
	}
	req, _ := http.NewRequest("POST", e.url+"/message:send", strings.NewReader(msg("x")))
	req.Header.Set("Content-Type", "text/plain")
	req.Header.Set("A2A-Version", "1.0")
	if r := e.do(restB, req); r.err == nil || r.status != 400 {
		t.Fatalf("text/plain body accepted: %d %s", r.status, r.body)
	}
}

func TestRESTRoutes(t *testing.T) {
	e := start(t, config{})
	// Every route also works under /{tenant}/ (a2a.proto's HTTP annotations),
	// scoped to it.
	ten := callOpts{tenant: "acme"}
	r := mustOK(t, e.call(restB, "SendMessage", msg("input-required"), ten))
	id := str(r.value, "task", "id")
	mustOK(t, e.call(restB, "GetTask", fmt.Sprintf(`{"id":%q}`, id), ten))
	mustErr(t, e.call(restB, "GetTask", fmt.Sprintf(`{"id":%q}`, id)), a2a.CodeTaskNotFound)
	l := mustOK(t, e.call(restB, "ListTasks", `{}`, ten))
	if get(l.value, "totalSize") != float64(1) {
		t.Fatalf("tenant list %s", l.body)
	}
	c := mustOK(t, e.call(restB, "CreateTaskPushNotificationConfig", fmt.Sprintf(`{"taskId":%q,"url":"https://x.example/h"}`, id), ten))
	if str(c.value, "tenant") != "acme" {
		t.Fatalf("config tenant %s", c.body)
	}
	mustOK(t, e.call(restB, "ListTaskPushNotificationConfigs", fmt.Sprintf(`{"taskId":%q}`, id), ten))
	mustOK(t, e.call(restB, "CancelTask", fmt.Sprintf(`{"id":%q}`, id), ten))
	// The same task over JSON-RPC with the tenant field.
	mustOK(t, e.call(jsonRPC, "GetTask", fmt.Sprintf(`{"id":%q,"tenant":"acme"}`, id)))
	// Body and path must agree.
	req, _ := http.NewRequest("POST", e.url+"/acme/tasks/"+id+":cancel", strings.NewReader(`{"tenant":"other"}`))
	req.Header.Set("A2A-Version", "1.0")
	mustErr(t, e.do(restB, req), a2a.CodeInvalidParams)
	// Unknown route and wrong verb.
	req, _ = http.NewRequest("GET", e.url+"/no/such/route/here", nil)
	if r := e.do(restB, req); r.status != 404 || r.err == nil {
		t.Fatalf("unknown route: %d %s", r.status, r.body)
	}
	req, _ = http.NewRequest("DELETE", e.url+"/tasks/"+id, nil)
	if r := e.do(restB, req); r.status != 405 {
		t.Fatalf("wrong verb: %d %s", r.status, r.body)
	}
}

func TestJSONRPCPathWithAndWithoutSlash(t *testing.T) {
	s := testkit.StartServer(t, &testkit.Options{Kind: "echo", Interfaces: func(base string) []*a2a.AgentInterface {
		return []*a2a.AgentInterface{
			{Url: base + "/a2a/jsonrpc", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: "1.0"},
			{Url: base + "/a2a/rest", ProtocolBinding: a2a.BindingHTTPJSON, ProtocolVersion: "1.0"},
		}
	}})
	base := s.URL
	e := &env{t: t, url: base}
	for _, path := range []string{"/a2a/jsonrpc", "/a2a/jsonrpc/"} {
		req, _ := http.NewRequest("POST", base+path, strings.NewReader(`{"jsonrpc":"2.0","id":"req-1","method":"SendMessage","params":`+msg("hi")+`}`))
		req.Header.Set("A2A-Version", "1.0")
		req.Header.Set("Content-Type", "application/json")
		if r := mustOK(t, e.do(jsonRPC, req)); str(r.value, "task", "status", "state") != "TASK_STATE_COMPLETED" {
			t.Fatalf("%s: %s", path, r.body)
		}
	}
	req, _ := http.NewRequest("POST", base+"/a2a/rest/message:send", strings.NewReader(msg("hi")))
	req.Header.Set("A2A-Version", "1.0")
	mustOK(t, e.do(restB, req))
}

func TestKeepAliveAndDisconnect(t *testing.T) {
	for _, b := range bindings {
		t.Run(b, func(t *testing.T) {
			t.Parallel()
			e := start(t, config{keepAlive: 40 * time.Millisecond})
			var req *http.Request
			if b == jsonRPC {
				req, _ = http.NewRequest("POST", e.url+"/", strings.NewReader(`{"jsonrpc":"2.0","id":"req-1","method":"SendStreamingMessage","params":`+msg("slow 600")+`}`))
				req.Header.Set("Content-Type", "application/json")
			} else {
				req, _ = http.NewRequest("POST", e.url+"/message:stream", strings.NewReader(msg("slow 600")))
			}
			req.Header.Set("A2A-Version", "1.0")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			resp, err := http.DefaultClient.Do(req.WithContext(ctx))
			if err != nil {
				t.Fatal(err)
			}
			sc := bufio.NewScanner(resp.Body)
			taskID, comments := "", 0
			for sc.Scan() && comments < 2 {
				line := sc.Text()
				if strings.HasPrefix(line, ": ") {
					comments++
				}
				if i := strings.Index(line, `"task":{"id":"`); i >= 0 && taskID == "" {
					taskID = line[i+len(`"task":{"id":"`):]
					taskID = taskID[:strings.IndexByte(taskID, '"')]
				}
			}
			if comments < 2 || taskID == "" {
				t.Fatalf("saw %d keep-alive comments, task %q", comments, taskID)
			}
			// The client goes away; the task goes on and completes.
			cancel()
			resp.Body.Close()
			deadline := time.Now().Add(5 * time.Second)
			for {
				r := mustOK(t, e.call(b, "GetTask", fmt.Sprintf(`{"id":%q}`, taskID)))
				st := str(r.value, "status", "state")
				if st == "TASK_STATE_COMPLETED" {
					break
				}
				if st != "TASK_STATE_WORKING" || time.Now().After(deadline) {
					t.Fatalf("task after disconnect: %s", r.body)
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
}
