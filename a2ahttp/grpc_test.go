package a2ahttp_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"

	"parley.dev/parley/a2a"
	"parley.dev/parley/a2a/a2aconnect"
	"parley.dev/parley/a2ahttp"
	"parley.dev/parley/agents"
	"parley.dev/parley/server"
)

// grpcEnv serves the conformance agent over all three bindings with
// cleartext HTTP/2, as `parley serve` does.
func grpcEnv(t *testing.T, opts a2ahttp.Options, grpcOnly bool) (string, a2aconnect.A2AServiceClient) {
	t.Helper()
	hs := httptest.NewUnstartedServer(nil)
	host := hs.Listener.Addr().String()
	card, err := agents.Card("conformance", []*a2a.AgentInterface{
		{Url: "http://" + host + "/", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: "1.0"},
		{Url: "http://" + host, ProtocolBinding: a2a.BindingHTTPJSON, ProtocolVersion: "1.0"},
		{Url: host, ProtocolBinding: a2a.BindingGRPC, ProtocolVersion: "1.0"},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(&server.Options{Card: card, Agent: agents.Conformance(), RequireAuth: len(opts.Tokens) > 0})
	if err != nil {
		t.Fatal(err)
	}
	opts.Card = card
	h, err := a2ahttp.New(srv, &opts)
	if err != nil {
		t.Fatal(err)
	}
	hs.Config.Handler = h
	if grpcOnly {
		hs.Config.Handler = h.GRPC()
	}
	hs.Config.Protocols = new(http.Protocols)
	hs.Config.Protocols.SetHTTP1(true)
	hs.Config.Protocols.SetUnencryptedHTTP2(true)
	hs.Start()
	t.Cleanup(func() {
		hs.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Close(ctx)
	})
	p := new(http.Protocols)
	p.SetUnencryptedHTTP2(true)
	return "http://" + host, a2aconnect.NewA2AServiceClient(&http.Client{Transport: &http.Transport{Protocols: p}}, "http://"+host, connect.WithGRPC())
}

func grpcStream(t *testing.T, c a2aconnect.A2AServiceClient, token string) []*a2a.StreamResponse {
	t.Helper()
	req := connect.NewRequest(&a2a.SendMessageRequest{Message: &a2a.Message{MessageId: a2a.NewID(), Role: a2a.Role_ROLE_USER,
		Parts: []*a2a.Part{{Content: &a2a.Part_Text{Text: "stream 2"}}}}})
	req.Header().Set("A2A-Version", "1.0")
	if token != "" {
		req.Header().Set("Authorization", "Bearer "+token)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := c.SendStreamingMessage(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var out []*a2a.StreamResponse
	for s.Receive() {
		out = append(out, s.Msg())
	}
	if err := s.Err(); err != nil {
		t.Fatalf("stream: %v", err)
	}
	return out
}

// TestGRPCSamePort: gRPC requests are told apart by their Content-Type and
// served next to JSON-RPC and REST, with the same bearer tokens; with the
// debug access log on (a wrapped ResponseWriter) streams still flush.
func TestGRPCSamePort(t *testing.T) {
	log := slog.New(slog.NewTextHandler(&strings.Builder{}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	base, c := grpcEnv(t, a2ahttp.Options{Tokens: map[string]string{"tok": "alice"}, Logger: log}, false)
	if n := len(grpcStream(t, c, "tok")); n != 5 {
		t.Fatalf("%d events, want 5", n)
	}
	req := connect.NewRequest(&a2a.GetTaskRequest{Id: "x"})
	req.Header().Set("A2A-Version", "1.0")
	if _, err := c.GetTask(context.Background(), req); connect.CodeOf(err) != connect.CodeUnauthenticated {
		t.Fatalf("GetTask without a token: %v, want Unauthenticated", err)
	}
	resp, err := http.Get(base + a2ahttp.CardPath)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("card next to gRPC: %v %v", err, resp)
	}
	resp.Body.Close()
}

func TestGRPCOnlyHandler(t *testing.T) {
	base, c := grpcEnv(t, a2ahttp.Options{}, true)
	if n := len(grpcStream(t, c, "")); n != 5 {
		t.Fatalf("%d events, want 5", n)
	}
	resp, err := http.Get(base + a2ahttp.CardPath)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnsupportedMediaType {
		t.Fatalf("a JSON request on the gRPC-only handler: %d, want 415", resp.StatusCode)
	}
}

func TestGRPCDisabled(t *testing.T) {
	_, c := grpcEnv(t, a2ahttp.Options{DisableGRPC: true}, false)
	req := connect.NewRequest(&a2a.GetTaskRequest{Id: "x"})
	req.Header().Set("A2A-Version", "1.0")
	if _, err := c.GetTask(context.Background(), req); err == nil || connect.CodeOf(err) == connect.CodeNotFound {
		t.Fatalf("GetTask with gRPC disabled: %v, want a failure that is not an A2A answer", err)
	}
}
