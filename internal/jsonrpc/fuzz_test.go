package jsonrpc_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/jsonrpc"
	"parley.dev/parley/internal/testkit"
)

// newConformanceHandler returns a JSON-RPC handler in front of a real core
// running the conformance agent on a memory store, logging nowhere.
func newConformanceHandler(tb testing.TB) http.Handler {
	tb.Helper()
	core := testkit.FuzzCore(tb, &a2a.AgentInterface{Url: "http://127.0.0.1/", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.ProtocolVersion})
	return jsonrpc.NewHandler(core, &jsonrpc.Options{KeepAlive: -1, Logger: testkit.DiscardLogger})
}

// fuzzSeeds are request bodies: one valid request per method and the
// classic ways to get JSON-RPC wrong.
var fuzzSeeds = []string{
	// valid requests
	`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"hello"}]}}}`,
	`{"jsonrpc":"2.0","id":"a","method":"SendMessage","params":{"message":{"messageId":"m-2","role":"ROLE_USER","parts":[{"text":"message"}]}}}`,
	`{"jsonrpc":"2.0","id":2,"method":"SendMessage","params":{"message":{"messageId":"m-3","role":"ROLE_USER","parts":[{"text":"input-required"}]},"configuration":{"historyLength":0}}}`,
	`{"jsonrpc":"2.0","id":3,"method":"SendMessage","params":{"message":{"message_id":"m-4","role":"ROLE_USER","parts":[{"text":"slow 20"}]},"configuration":{"return_immediately":true}}}`,
	`{"jsonrpc":"2.0","id":4,"method":"SendMessage","params":{"message":{"messageId":"m-5","role":"ROLE_USER","parts":[{"text":"fail"}]}}}`,
	`{"jsonrpc":"2.0","id":5,"method":"SendMessage","params":{"message":{"messageId":"m-6","role":"ROLE_USER","parts":[{"text":"append-unknown"},{"data":{"k":[1,2,{"x":null}]}},{"url":"https://x.example/f","mediaType":"text/plain"},{"raw":"aGk="}]}}}`,
	`{"jsonrpc":"2.0","id":6,"method":"SendStreamingMessage","params":{"message":{"messageId":"m-7","role":"ROLE_USER","parts":[{"text":"stream 3"}]}}}`,
	`{"jsonrpc":"2.0","id":7,"method":"SendStreamingMessage","params":{"message":{"messageId":"m-8","role":"ROLE_USER","parts":[{"text":"message"}]}}}`,
	`{"jsonrpc":"2.0","id":8,"method":"SendStreamingMessage","params":{"message":{"messageId":"m-9","role":"ROLE_USER","parts":[{"text":"reject"}]}}}`,
	`{"jsonrpc":"2.0","id":9,"method":"GetTask","params":{"id":"no-such-task","historyLength":2}}`,
	`{"jsonrpc":"2.0","id":"lp","method":"GetTask","params":{"id":"no-such-task","currentGeneration":"3"}}`,
	`{"jsonrpc":"2.0","id":"lp2","method":"GetTask","params":{"id":"no-such-task","currentGeneration":-1e30}}`,
	`{"jsonrpc":"2.0","id":"tl","method":"GetTask","params":{"id":"no-such-task","timelineLength":2}}`,
	`{"jsonrpc":"2.0","id":"tl2","method":"ListTasks","params":{"timeline_length":-1}}`,
	`{"jsonrpc":"2.0","id":10,"method":"ListTasks","params":{"pageSize":5,"status":"TASK_STATE_COMPLETED","includeArtifacts":true}}`,
	`{"jsonrpc":"2.0","id":11,"method":"ListTasks","params":{}}`,
	`{"jsonrpc":"2.0","id":12,"method":"CancelTask","params":{"id":"no-such-task"}}`,
	`{"jsonrpc":"2.0","id":13,"method":"SubscribeToTask","params":{"id":"no-such-task"}}`,
	`{"jsonrpc":"2.0","id":14,"method":"CreateTaskPushNotificationConfig","params":{"taskId":"t","url":"https://hooks.example/a","token":"x"}}`,
	`{"jsonrpc":"2.0","id":15,"method":"GetTaskPushNotificationConfig","params":{"taskId":"t","id":"c"}}`,
	`{"jsonrpc":"2.0","id":16,"method":"ListTaskPushNotificationConfigs","params":{"taskId":"t"}}`,
	`{"jsonrpc":"2.0","id":17,"method":"DeleteTaskPushNotificationConfig","params":{"taskId":"t","id":"c"}}`,
	`{"jsonrpc":"2.0","id":18,"method":"GetExtendedAgentCard"}`,
	`{"jsonrpc":"2.0","id":null,"method":"ListTasks","params":null}`,
	// invalid parameters
	`{"jsonrpc":"2.0","id":20,"method":"SendMessage","params":{}}`,
	`{"jsonrpc":"2.0","id":21,"method":"SendMessage","params":{"message":{"messageId":"m-x","role":"ROLE_AGENT","parts":[{"text":"hi"}]}}}`,
	`{"jsonrpc":"2.0","id":22,"method":"SendMessage","params":{"message":{"messageId":"m-y","role":"user","parts":[{"text":"hi"}]}}}`,
	`{"jsonrpc":"2.0","id":23,"method":"SendMessage","params":{"message":{"messageId":"m-z","role":"ROLE_USER","parts":[{"text":"a","data":{}}]}}}`,
	`{"jsonrpc":"2.0","id":24,"method":"SendMessage","params":{"message":{"messageId":"m-w","role":"ROLE_USER","parts":[{"text":"hi","mediaType":"image/png"}]}}}`,
	`{"jsonrpc":"2.0","id":25,"method":"SendMessage","params":{"message":{"messageId":"m-v","role":"ROLE_USER","taskId":"nope","parts":[{"text":"hi"}]}}}`,
	`{"jsonrpc":"2.0","id":26,"method":"ListTasks","params":{"pageSize":0,"pageToken":"bogus","historyLength":-1}}`,
	`{"jsonrpc":"2.0","id":27,"method":"ListTasks","params":{"statusTimestampAfter":"0000-01-01T00:00:00Z"}}`,
	`{"jsonrpc":"2.0","id":28,"method":"GetTask","params":{"id":""}}`,
	`{"jsonrpc":"2.0","id":29,"method":"GetTask","params":{"id":1}}`,
	`{"jsonrpc":"2.0","id":30,"method":"GetTask","params":[1,2]}`,
	`{"jsonrpc":"2.0","id":31,"method":"GetTask","params":"x"}`,
	`{"jsonrpc":"2.0","id":32,"method":"SendMessage","params":{"message":{"messageId":"m-u","role":"ROLE_USER","parts":[{"text":"hi"}]},"configuration":{"taskPushNotificationConfig":{"url":"ftp://x"}}}}`,
	// invalid envelopes
	``,
	`   `,
	`null`,
	`"str"`,
	`42`,
	`[]`,
	`[{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}]`,
	`{}`,
	`{"jsonrpc":"2.0","method":"GetTask","params":{"id":"x"}}`,
	`{"jsonrpc":"1.0","id":1,"method":"GetTask"}`,
	`{"id":1,"method":"GetTask"}`,
	`{"jsonrpc":"2.0","id":1}`,
	`{"jsonrpc":"2.0","id":1,"method":null}`,
	`{"jsonrpc":"2.0","id":1,"method":7}`,
	`{"jsonrpc":"2.0","id":1,"method":"message/send"}`,
	`{"jsonrpc":"2.0","id":1,"method":"sendMessage"}`,
	`{"jsonrpc":"2.0","id":{"a":1},"method":"GetTask"}`,
	`{"jsonrpc":"2.0","id":[1],"method":"GetTask"}`,
	`{"jsonrpc":"2.0","id":true,"method":"GetTask"}`,
	`{"jsonrpc":"2.0","id":-1.5e300,"method":"GetTask","params":{"id":"x"}}`,
	`{"jsonrpc":"2.0","id":"\u2028\ud800","method":"GetTask","params":{"id":"x"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}} trailing`,
	`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}{"jsonrpc":"2.0"}`,
	`{"jsonrpc":"2.0","id":1,"id":2,"method":"GetTask","params":{"id":"x"}}`,
	"\ufeff" + `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}`,
	"{\"jsonrpc\":\"2.0\",\"id\":\"\xff\xfe\",\"method\":\"GetTask\\u0000\"}",
	`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"`,
	`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x",}}`,
	`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"metadata":` + strings.Repeat(`{"a":`, 200) + `1` + strings.Repeat(`}`, 200) + `,"message":{"messageId":"m-deep","role":"ROLE_USER","parts":[{"text":"hi"}]}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"x":` + strings.Repeat(`[`, 2000) + strings.Repeat(`]`, 2000) + `,"id":"x"}}`,
}

func FuzzEnvelope(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	h := newConformanceHandler(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		checkExchange(t, h, body)
	})
}

// checkExchange posts body to h and checks the invariants of every JSON-RPC
// answer: it comes promptly; it is a JSON-RPC 2.0 response object (one per
// SSE event for a stream) holding a result or an error with a known
// code; its id is the request's or, for a request whose id could not be
// read, null; and an internal error only comes from the request's own
// deadline.
func checkExchange(t *testing.T, h http.Handler, body []byte) string {
	req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec, timedOut := testkit.Exchange(t, h, req)
	res := rec.Result()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("HTTP status %d, want 200 for an anonymous POST; body %q", res.StatusCode, rec.Body.String())
	}
	reqID, idKnown := requestID(body)
	ct := res.Header.Get("Content-Type")
	if strings.HasPrefix(ct, "text/event-stream") {
		events := testkit.ReadSSE(t, bytes.NewReader(rec.Body.Bytes()))
		if len(events) == 0 {
			t.Fatalf("a stream without events: %q", rec.Body.String())
		}
		for _, ev := range events {
			checkResponse(t, ev.Data, reqID, idKnown, timedOut)
		}
		return rec.Body.String()
	}
	if ct != "application/json" {
		t.Fatalf("Content-Type %q, want application/json or text/event-stream", ct)
	}
	checkResponse(t, rec.Body.Bytes(), reqID, idKnown, timedOut)
	return rec.Body.String()
}

// requestID returns the raw id of a request that is a JSON object with an
// "id" member holding a string, a number or null.
func requestID(body []byte) (json.RawMessage, bool) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(body, &obj) != nil {
		return nil, false
	}
	id, ok := obj["id"]
	if !ok || len(id) == 0 {
		return nil, false
	}
	switch id[0] {
	case '{', '[', 't', 'f':
		return nil, false
	}
	return id, true
}

type rpcResponse struct {
	JSONRPC *string         `json:"jsonrpc"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    *int            `json:"code"`
		Message *string         `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

func checkResponse(t *testing.T, b []byte, reqID json.RawMessage, idKnown, timedOut bool) {
	t.Helper()
	if !json.Valid(b) {
		t.Fatalf("response is not valid JSON: %q", b)
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(b, &members); err != nil {
		t.Fatalf("response is not a JSON object: %q", b)
	}
	for k := range members {
		switch k {
		case "jsonrpc", "id", "result", "error":
		default:
			t.Fatalf("unexpected member %q in %s", k, b)
		}
	}
	var r rpcResponse
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("response %s: %v", b, err)
	}
	if r.JSONRPC == nil || *r.JSONRPC != "2.0" {
		t.Fatalf(`response without "jsonrpc":"2.0": %s`, b)
	}
	rawID, ok := members["id"]
	if !ok {
		t.Fatalf("response without an id: %s", b)
	}
	if (r.Result != nil) == (r.Error != nil) {
		t.Fatalf("response must hold exactly one of result and error: %s", b)
	}
	code := 0
	if r.Error != nil {
		e := r.Error
		if e.Code == nil || e.Message == nil || *e.Message == "" {
			t.Fatalf("error without a code or a message: %s", b)
		}
		code = *e.Code
		if c, ok := a2a.CodeForJSONRPC(code); !ok || c == a2a.CodeRequestTooLarge {
			t.Fatalf("unknown error code %d: %s", code, b)
		}
		var details []map[string]any
		if err := json.Unmarshal(e.Data, &details); err != nil {
			t.Fatalf("error.data is not an array of objects: %s", b)
		}
		if code <= int(a2a.CodeTaskNotFound) && code >= int(a2a.CodeVersionNotSupported) {
			found := false
			for _, d := range details {
				found = found || (d["@type"] == "type.googleapis.com/google.rpc.ErrorInfo" && d["domain"] == "a2a-protocol.org" && d["reason"] != "")
			}
			if !found {
				t.Fatalf("A2A error %d without an ErrorInfo: %s", code, b)
			}
		}
		if code == int(a2a.CodeInternal) && !timedOut {
			t.Fatalf("internal error for a request that did not time out: %s", b)
		}
	} else if bytes.Equal(bytes.TrimSpace(r.Result), []byte("null")) {
		t.Fatalf("null result: %s", b)
	}
	got := bytes.TrimSpace(rawID)
	switch {
	case idKnown && bytes.Equal(got, bytes.TrimSpace(reqID)):
	case string(got) == "null" && (code == int(a2a.CodeParseError) || code == int(a2a.CodeInvalidRequest)):
		// The id could not be read from an invalid request.
	default:
		t.Fatalf("response id %s, request id %s (known %v): %s", got, reqID, idKnown, b)
	}
}

// TestFuzzSeedsAnswered makes sure the seed requests reach the operations
// they name: a seed corpus of requests that all fail in the envelope would
// test little.
func TestFuzzSeedsAnswered(t *testing.T) {
	h := newConformanceHandler(t)
	results := 0
	for _, s := range fuzzSeeds {
		if strings.Contains(checkExchange(t, h, []byte(s)), `"result":`) {
			results++
		}
	}
	if results < 8 {
		t.Errorf("only %d of %d seeds got a result", results, len(fuzzSeeds))
	}
}

// TestEnvelopeMembersAreCaseSensitive: JSON-RPC member names are exact.
// A request whose only id member is "ID" has no id (a notification, which
// Parley refuses), and an "Id" member must not replace the "id" the reply
// echoes. encoding/json matches struct fields case-insensitively, so the
// envelope decoder accepts both today.
func TestEnvelopeMembersAreCaseSensitive(t *testing.T) {
	h := newConformanceHandler(t)
	for _, c := range []struct{ body, want string }{
		{`{"JSONRPC":"2.0","ID":1,"METHOD":"GetTask","PARAMS":{"id":"x"}}`, `"code":-32600`},
		{`{"jsonrpc":"2.0","ID":1,"method":"GetTask","params":{"id":"x"}}`, `"code":-32600`},
		{`{"jsonrpc":"2.0","id":1,"Id":2,"method":"GetTask","params":{"id":"x"}}`, `"id":1,`},
	} {
		req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(c.body))
		req.Header.Set("A2A-Version", "1.0")
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if got := rec.Body.String(); !strings.Contains(got, c.want) {
			t.Errorf("POST %s\n got %s\nwant it to contain %s", c.body, got, c.want)
		}
	}
}
