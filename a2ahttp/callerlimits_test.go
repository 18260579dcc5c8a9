package a2ahttp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"

	"parley.dev/parley/a2a"
	"parley.dev/parley/a2ahttp"
	"parley.dev/parley/internal/a2aconnect"
)

var limitTokens = map[string]string{"tok-a": "alice", "tok-b": "bob"}

// rawCall sends an operation over JSON-RPC or HTTP+JSON with a bearer
// token; stream asks for SendStreamingMessage. It returns the response,
// whose body the caller closes.
func rawCall(t *testing.T, ctx context.Context, base, binding, token string, stream bool, text string) *http.Response {
	t.Helper()
	msg := `{"message":{"messageId":"` + a2a.NewID() + `","role":"ROLE_USER","parts":[{"text":"` + text + `"}]}}`
	var req *http.Request
	switch {
	case binding == jsonRPC && stream:
		req, _ = http.NewRequestWithContext(ctx, "POST", base+"/", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":`+msg+`}`))
	case binding == jsonRPC:
		req, _ = http.NewRequestWithContext(ctx, "POST", base+"/", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"nope"}}`))
	case stream:
		req, _ = http.NewRequestWithContext(ctx, "POST", base+"/message:stream", strings.NewReader(msg))
	default:
		req, _ = http.NewRequestWithContext(ctx, "GET", base+"/tasks/nope", nil)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// wantRateLimited checks a 429 in the binding's error shape.
func wantRateLimited(t *testing.T, what, binding string, resp *http.Response, retryAfter bool) {
	t.Helper()
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("%s %s: HTTP %d %s; want 429", binding, what, resp.StatusCode, body)
	}
	if ra := resp.Header.Get("Retry-After"); retryAfter {
		if n, err := strconv.Atoi(ra); err != nil || n < 1 {
			t.Errorf("%s %s: Retry-After %q; want whole seconds", binding, what, ra)
		}
	}
	var doc struct {
		Error struct {
			Code    int    `json:"code"`
			Status  string `json:"status"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatalf("%s %s: body %s: %v", binding, what, body, err)
	}
	switch binding {
	case jsonRPC:
		if doc.Error.Code != -32603 || !strings.Contains(doc.Error.Message, "limit") {
			t.Errorf("JSON-RPC %s: error %+v; want -32603 naming the limit", what, doc.Error)
		}
	default:
		if doc.Error.Code != 429 || doc.Error.Status != "RESOURCE_EXHAUSTED" {
			t.Errorf("HTTP+JSON %s: error %+v; want 429 RESOURCE_EXHAUSTED", what, doc.Error)
		}
	}
}

// TestRateLimitPerPrincipal: each caller has its own bucket; the one over
// it gets 429 with Retry-After on both HTTP bindings and
// RESOURCE_EXHAUSTED on gRPC, while another caller goes on; refused
// credentials count against the client address.
func TestRateLimitPerPrincipal(t *testing.T) {
	opts := a2ahttp.Options{Tokens: limitTokens, RateLimit: 0.01, RateBurst: 2}
	for _, binding := range bindings {
		base, _ := grpcEnv(t, opts, false)
		ctx := context.Background()
		for i := range 2 {
			resp := rawCall(t, ctx, base, binding, "tok-a", false, "")
			resp.Body.Close()
			if resp.StatusCode == http.StatusTooManyRequests {
				t.Fatalf("%s: call %d refused within the burst", binding, i+1)
			}
		}
		wantRateLimited(t, "third call", binding, rawCall(t, ctx, base, binding, "tok-a", false, ""), true)
		resp := rawCall(t, ctx, base, binding, "tok-b", false, "")
		resp.Body.Close()
		if resp.StatusCode == http.StatusTooManyRequests {
			t.Errorf("%s: bob limited by alice's calls", binding)
		}
		// Guessing tokens: two 401s, then 429.
		for i := range 2 {
			resp := rawCall(t, ctx, base, binding, "guess-"+strconv.Itoa(i), false, "")
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized {
				t.Fatalf("%s: wrong token %d: HTTP %d; want 401", binding, i, resp.StatusCode)
			}
		}
		wantRateLimited(t, "third wrong token", binding, rawCall(t, ctx, base, binding, "guess-3", false, ""), true)
	}

	_, c := grpcEnv(t, opts, false)
	get := func(tok string) error {
		req := connect.NewRequest(&a2a.GetTaskRequest{Id: "nope"})
		req.Header().Set("A2A-Version", "1.0")
		req.Header().Set("Authorization", "Bearer "+tok)
		_, err := c.GetTask(context.Background(), req)
		return err
	}
	get("tok-a")
	get("tok-a")
	if err := get("tok-a"); connect.CodeOf(err) != connect.CodeResourceExhausted {
		t.Errorf("gRPC third call: %v; want RESOURCE_EXHAUSTED", err)
	}
	if err := get("tok-b"); connect.CodeOf(err) != connect.CodeNotFound {
		t.Errorf("gRPC bob: %v; want NOT_FOUND (not limited)", err)
	}
}

// TestStreamLimitPerPrincipal: with MaxStreams 1 a caller's second stream
// is refused on every binding while the first is open, another caller's is
// not, and the slot comes back when the first stream ends.
func TestStreamLimitPerPrincipal(t *testing.T) {
	opts := a2ahttp.Options{Tokens: limitTokens, MaxStreams: 1}
	for _, binding := range append(bindings, "GRPC") {
		base, c := grpcEnv(t, opts, false)
		ctx, cancel := context.WithCancel(context.Background())
		openStream(t, ctx, base, c, binding, "tok-a")
		if err := tryStream(t, base, c, binding, "tok-a"); err != "limited" {
			t.Errorf("%s: alice's second stream: %s; want it limited", binding, err)
		}
		if err := tryStream(t, base, c, binding, "tok-b"); err != "ok" {
			t.Errorf("%s: bob's stream: %s; want ok", binding, err)
		}
		cancel() // alice's first stream ends
		deadline := time.Now().Add(5 * time.Second)
		for tryStream(t, base, c, binding, "tok-a") != "ok" {
			if time.Now().After(deadline) {
				t.Fatalf("%s: alice's slot did not come back after her stream ended", binding)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// openStream starts a long stream ("slow 5000") and reads its first event,
// so that it is open when it returns; ctx ends it.
func openStream(t *testing.T, ctx context.Context, base string, c a2aconnect.A2AServiceClient, binding, token string) {
	t.Helper()
	if binding == "GRPC" {
		s, err := c.SendStreamingMessage(ctx, grpcMsg("slow 5000", token))
		if err != nil || !s.Receive() {
			t.Fatalf("gRPC stream: %v %v", err, s.Err())
		}
		return
	}
	resp := rawCall(t, ctx, base, binding, token, true, "slow 5000")
	if resp.StatusCode != 200 {
		t.Fatalf("%s stream: HTTP %d", binding, resp.StatusCode)
	}
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "data:") && !strings.HasPrefix(line, "id:") {
		t.Fatalf("%s stream: first line %q, %v", binding, line, err)
	}
	go func() { <-ctx.Done(); resp.Body.Close() }()
}

// tryStream runs a short stream ("stream 1") and says "ok", "limited" or
// what else happened.
func tryStream(t *testing.T, base string, c a2aconnect.A2AServiceClient, binding, token string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if binding == "GRPC" {
		s, err := c.SendStreamingMessage(ctx, grpcMsg("stream 1", token))
		if err != nil {
			return err.Error()
		}
		defer s.Close()
		for s.Receive() {
		}
		switch connect.CodeOf(s.Err()) {
		case connect.CodeResourceExhausted:
			return "limited"
		case connect.CodeUnknown:
			if s.Err() == nil {
				return "ok"
			}
		}
		return s.Err().Error()
	}
	resp := rawCall(t, ctx, base, binding, token, true, "stream 1")
	defer resp.Body.Close()
	switch resp.StatusCode {
	case 200:
		io.Copy(io.Discard, resp.Body)
		return "ok"
	case 429:
		wantRateLimited(t, "stream", binding, resp, true)
		return "limited"
	}
	return "HTTP " + resp.Status
}

func grpcMsg(text, token string) *connect.Request[a2a.SendMessageRequest] {
	req := connect.NewRequest(&a2a.SendMessageRequest{Message: &a2a.Message{MessageId: a2a.NewID(), Role: a2a.Role_ROLE_USER,
		Parts: []*a2a.Part{{Content: &a2a.Part_Text{Text: text}}}}})
	req.Header().Set("A2A-Version", "1.0")
	req.Header().Set("Authorization", "Bearer "+token)
	return req
}
