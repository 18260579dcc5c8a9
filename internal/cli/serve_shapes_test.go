package cli_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"parley.dev/parley/conformance"
)

// rpc posts a JSON-RPC request to the server's root with the extra
// headers (name, value, …) and returns the decoded response and its
// headers.
func rpc(t *testing.T, p *proc, body string, headers ...string) (map[string]any, http.Header) {
	t.Helper()
	req, _ := http.NewRequest("POST", "http://"+p.addr+"/", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	// A refused stream may come as one SSE event holding the error.
	s := strings.TrimSpace(string(b))
	s = strings.TrimSpace(strings.TrimPrefix(s, "data:"))
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("%s: %v\n%s", body, err, b)
	}
	return m, resp.Header
}

// rpcCode is the JSON-RPC error code of m, 0 for a result.
func rpcCode(m map[string]any) int {
	c, _ := field(m, "error", "code").(float64)
	return int(c)
}

// rpcSendBody is a v1.0 JSON-RPC request of method with a message of text.
func rpcSendBody(method, id, text string) string {
	return `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{"message":{"messageId":"` + id +
		`","role":"ROLE_USER","parts":[{"text":"` + text + `"}]}}}`
}

// v03Body is a v0.3 JSON-RPC request of method with a message of text.
func v03Body(method, id, text string) string {
	return `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{"message":{"kind":"message","messageId":"` + id +
		`","role":"user","parts":[{"kind":"text","text":"` + text + `"}]}}}`
}

// gradeNoFail runs the conformance checks against p, Parley's
// conformance agent, and fails on any FAIL; it returns the results.
func gradeNoFail(t *testing.T, p *proc) []conformance.Result {
	t.Helper()
	rep := grade(t, p)
	if !rep.ConformanceAgent() {
		t.Errorf("the checker did not recognise the conformance agent")
	}
	return rep.Results()
}

// grade runs the conformance checks against p and fails on any FAIL.
func grade(t *testing.T, p *proc) *conformance.Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	rep, err := conformance.Run(ctx, "http://"+p.addr)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Results() {
		if r.Status == conformance.Fail {
			t.Errorf("FAIL %s %s: %s", r.Binding, r.ID, r.Detail)
		}
	}
	return rep
}

// TestServeShapeNoStreaming: --capabilities no-streaming declares
// streaming false on the card (v1.0 and v0.3 members alike); both
// streaming operations are refused with UnsupportedOperationError
// (-32004, spec §3.1.2, §3.1.6, §3.3.4) on v1.0 and v0.3 JSON-RPC, sends
// still work, and the conformance checks report no FAIL (those that need
// a stream are N/A or SKIP).
func TestServeShapeNoStreaming(t *testing.T) {
	p := serve(t, "--agent", "conformance", "--store", "memory", "--capabilities", "no-streaming")
	card := p.getJSON(t, "/.well-known/agent-card.json")
	if field(card, "capabilities", "streaming") != false || field(card, "capabilities", "pushNotifications") != true {
		t.Fatalf("capabilities %v; want streaming false, pushNotifications true", card["capabilities"])
	}
	if field(card, "protocolVersion") != "0.3.0" {
		t.Errorf("no v0.3 members on the card: %v", card)
	}

	m, _ := rpc(t, p, rpcSendBody("SendStreamingMessage", "s-1", "hello"), "A2A-Version", "1.0")
	if rpcCode(m) != -32004 || field(m, "error", "data") == nil {
		t.Errorf("SendStreamingMessage: %v; want UnsupportedOperationError -32004", m)
	}
	m, _ = rpc(t, p, rpcSendBody("SendStreamingMessage", "s-2", "hello"), "A2A-Version", "1.0", "Accept", "text/event-stream")
	if rpcCode(m) != -32004 {
		t.Errorf("SendStreamingMessage (SSE): %v; want -32004", m)
	}
	m, _ = rpc(t, p, rpcSendBody("SendMessage", "s-3", "input-required"), "A2A-Version", "1.0")
	taskID, _ := field(m, "result", "task", "id").(string)
	if taskID == "" || field(m, "result", "task", "status", "state") != "TASK_STATE_INPUT_REQUIRED" {
		t.Fatalf("SendMessage: %v", m)
	}
	m, _ = rpc(t, p, `{"jsonrpc":"2.0","id":1,"method":"SubscribeToTask","params":{"id":"`+taskID+`"}}`, "A2A-Version", "1.0")
	if rpcCode(m) != -32004 {
		t.Errorf("SubscribeToTask on a task waiting for input: %v; want -32004", m)
	}
	m, _ = rpc(t, p, v03Body("message/stream", "s-4", "hello"))
	if rpcCode(m) != -32004 {
		t.Errorf("v0.3 message/stream: %v; want -32004", m)
	}
	m, _ = rpc(t, p, `{"jsonrpc":"2.0","id":1,"method":"tasks/resubscribe","params":{"id":"`+taskID+`"}}`)
	if rpcCode(m) != -32004 {
		t.Errorf("v0.3 tasks/resubscribe: %v; want -32004", m)
	}

	// The checks of a stream's shape cannot run: they are N/A or SKIP,
	// never FAIL (gradeNoFail), and the refusals are graded.
	var skipped, refused int
	for _, r := range gradeNoFail(t, p) {
		if r.ID == "capabilities.no-streaming" && r.Status == conformance.Pass {
			refused++
		}
		if (r.Operation == "SendStreamingMessage" || r.Operation == "SubscribeToTask") &&
			(r.Status == conformance.Skip || r.Status == conformance.NotApplicable) {
			skipped++
		}
	}
	if skipped == 0 || refused != 3 {
		t.Errorf("%d streaming checks N/A or SKIP, capabilities.no-streaming passed on %d bindings: want some, and 3", skipped, refused)
	}
}

// TestServeShapeNoPush: --capabilities no-push is --push=false: the card
// declares pushNotifications false, a push config is refused with
// PushNotificationNotSupportedError (-32003), and the conformance checks
// report no FAIL.
func TestServeShapeNoPush(t *testing.T) {
	p := serve(t, "--agent", "conformance", "--store", "memory", "--capabilities", "no-push")
	card := p.getJSON(t, "/.well-known/agent-card.json")
	if field(card, "capabilities", "pushNotifications") != false || field(card, "capabilities", "streaming") != true {
		t.Fatalf("capabilities %v; want pushNotifications false, streaming true", card["capabilities"])
	}
	m, _ := rpc(t, p, rpcSendBody("SendMessage", "p-1", "input-required"), "A2A-Version", "1.0")
	taskID, _ := field(m, "result", "task", "id").(string)
	m, _ = rpc(t, p, `{"jsonrpc":"2.0","id":1,"method":"CreateTaskPushNotificationConfig","params":{"taskId":"`+taskID+
		`","url":"https://example.com/hook"}}`, "A2A-Version", "1.0")
	if rpcCode(m) != -32003 {
		t.Errorf("CreateTaskPushNotificationConfig: %v; want PushNotificationNotSupportedError -32003", m)
	}
	gradeNoFail(t, p)
}

// TestServeShapeRequiredExtension: --require-extension declares each URI
// as a required extension (v1.0 and v0.3 card alike); a call that does
// not activate all of them is refused with ExtensionSupportRequiredError
// (-32008, spec §3.3.4, §4.6.3), one that does is served, and the
// response's A2A-Extensions header echoes what was activated. It works
// with --exec and --proxy too (in front of an agent that streams: the
// proxy does not).
func TestServeShapeRequiredExtension(t *testing.T) {
	const ext1, ext2 = "https://example.com/extensions/sign/v1", "urn:example:trace"
	for _, agent := range [][]string{{"--agent", "echo"}, {"--exec", "cat"}, {"--proxy", ""}} {
		t.Run(agent[0][2:], func(t *testing.T) {
			if agent[0] == "--proxy" {
				up := serve(t, "--agent", "echo", "--store", "memory")
				agent = []string{"--proxy", "http://" + up.addr}
			}
			p := serve(t, append(agent, "--store", "memory", "--require-extension", ext1, "--require-extension", ext2,
				"--capabilities", "no-streaming")...)
			card := p.getJSON(t, "/.well-known/agent-card.json")
			exts, _ := field(card, "capabilities", "extensions").([]any)
			if len(exts) != 2 || field(exts[0], "uri") != ext1 || field(exts[0], "required") != true ||
				field(exts[1], "uri") != ext2 || field(exts[1], "required") != true {
				t.Fatalf("capabilities.extensions %v", exts)
			}
			if field(card, "capabilities", "streaming") != false || field(card, "protocolVersion") != "0.3.0" {
				t.Errorf("capabilities %v, protocolVersion %v", card["capabilities"], card["protocolVersion"])
			}

			m, _ := rpc(t, p, rpcSendBody("SendMessage", "e-1", "hello"), "A2A-Version", "1.0")
			if rpcCode(m) != -32008 || !strings.Contains(field(m, "error", "message").(string), ext1) {
				t.Errorf("no A2A-Extensions: %v; want ExtensionSupportRequiredError -32008 naming %s", m, ext1)
			}
			m, _ = rpc(t, p, rpcSendBody("SendMessage", "e-2", "hello"), "A2A-Version", "1.0", "A2A-Extensions", ext1)
			if rpcCode(m) != -32008 || !strings.Contains(field(m, "error", "message").(string), ext2) {
				t.Errorf("one of two extensions: %v; want -32008 naming %s", m, ext2)
			}
			m, h := rpc(t, p, rpcSendBody("SendMessage", "e-3", "hello"), "A2A-Version", "1.0", "A2A-Extensions", ext1+", "+ext2)
			if field(m, "result", "task", "id") == nil {
				t.Fatalf("both extensions: %v; want a task", m)
			}
			if got := h.Get("A2A-Extensions"); !strings.Contains(got, ext1) || !strings.Contains(got, ext2) {
				t.Errorf("response A2A-Extensions %q; want both activated extensions echoed", got)
			}
			m, _ = rpc(t, p, v03Body("message/send", "e-4", "hello"))
			if rpcCode(m) != -32008 {
				t.Errorf("v0.3 without A2A-Extensions: %v; want -32008", m)
			}
			m, _ = rpc(t, p, rpcSendBody("SendStreamingMessage", "e-5", "hello"), "A2A-Version", "1.0", "A2A-Extensions", ext1+","+ext2)
			if rpcCode(m) != -32004 {
				t.Errorf("stream with the extensions: %v; want -32004 (no streaming)", m)
			}
			// The checker activates the required extensions, and grades
			// the refusal without them and the refusal of a stream.
			rep := grade(t, p)
			for _, id := range []string{"extensions.required", "capabilities.no-streaming"} {
				if rs := rep.Results(); !slices.ContainsFunc(rs, func(r conformance.Result) bool { return r.ID == id && r.Status == conformance.Pass }) {
					t.Errorf("%s did not pass", id)
				}
			}
		})
	}
}

// TestServeShapeExtendedCard: --capabilities extended-card serves, to
// authenticated callers only, an extended card made from the public one
// (one skill more); both card forms declare it (v1.0
// capabilities.extendedAgentCard, v0.3 supportsAuthenticatedExtendedCard),
// and it carries the required extensions and the streaming switch too.
// An --extended-card file gets the same restrictions.
func TestServeShapeExtendedCard(t *testing.T) {
	const ext = "https://example.com/extensions/x/v1"
	p := serve(t, "--agent", "conformance", "--store", "memory", "--auth-token", "alice=tok-a",
		"--capabilities", "extended-card,no-streaming", "--require-extension", ext)
	card := p.getJSON(t, "/.well-known/agent-card.json")
	if field(card, "capabilities", "extendedAgentCard") != true || field(card, "supportsAuthenticatedExtendedCard") != true {
		t.Fatalf("card %v", card)
	}
	m, _ := rpc(t, p, `{"jsonrpc":"2.0","id":1,"method":"GetExtendedAgentCard","params":{}}`, "A2A-Version", "1.0", "A2A-Extensions", ext)
	if rpcCode(m) != -31401 && field(m, "error", "data") == nil {
		t.Errorf("anonymous GetExtendedAgentCard: %v; want refused", m)
	}
	m, _ = rpc(t, p, `{"jsonrpc":"2.0","id":1,"method":"GetExtendedAgentCard","params":{}}`, "A2A-Version", "1.0",
		"A2A-Extensions", ext, "Authorization", "Bearer tok-a")
	res, _ := m["result"].(map[string]any)
	skills, _ := res["skills"].([]any)
	if len(skills) != 2 || field(skills[1], "id") != "extended" || field(res, "name") != "Parley conformance agent" {
		t.Fatalf("extended card %v", m)
	}
	if field(res, "capabilities", "streaming") != false || field(res, "capabilities", "extendedAgentCard") != true {
		t.Errorf("extended card capabilities %v", res["capabilities"])
	}
	exts, _ := field(res, "capabilities", "extensions").([]any)
	if len(exts) != 1 || field(exts[0], "uri") != ext || field(exts[0], "required") != true {
		t.Errorf("extended card extensions %v", exts)
	}
	ifaces, _ := res["supportedInterfaces"].([]any)
	if len(ifaces) != 6 {
		t.Errorf("extended card interfaces %v; want the three bindings in v1.0 and v0.3", ifaces)
	}
}

// TestServeShapeUsageErrors: unknown or contradictory shape flags stop
// serve with exit 2 and say why.
func TestServeShapeUsageErrors(t *testing.T) {
	for args, want := range map[string]string{
		"--capabilities no-streaming,bogus":                                    "no-streaming, no-push, extended-card",
		"--capabilities no-push --push=true":                                   "contradict",
		"--capabilities extended-card":                                         "authentication",
		"--capabilities extended-card --auth-token a=b --extended-card x.json": "give one of them",
		"--require-extension not-a-uri":                                        "absolute URI",
		"--require-extension https://e.example/a,https://e.example/b":          "comma",
		"--require-extension urn:x --require-extension urn:x":                  "twice",
	} {
		_, errs, code := parley(t, append([]string{"serve", "--store", "memory"}, strings.Fields(args)...)...)
		if code != 2 || !strings.Contains(errs, want) {
			t.Errorf("serve %s: exit %d, %s; want 2 naming %q", args, code, errs, want)
		}
	}
}
