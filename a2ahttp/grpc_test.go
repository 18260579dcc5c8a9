package a2ahttp_test

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"

	"parley.dev/parley/a2a"
	"parley.dev/parley/a2ahttp"
	"parley.dev/parley/internal/a2aconnect"
	"parley.dev/parley/internal/testkit"
)

// grpcEnv serves the conformance agent over all three bindings with
// cleartext HTTP/2, as `parley serve` does, or (grpcOnly) gRPC alone, and
// returns the base URL and a gRPC client of it.
func grpcEnv(t *testing.T, opts a2ahttp.Options, grpcOnly bool) (string, a2aconnect.A2AServiceClient) {
	t.Helper()
	kit := &testkit.Options{
		Tokens: opts.Tokens,
		// The handler takes opts as they are, with the card the kit made.
		HTTP: func(o *a2ahttp.Options) {
			card := o.Card
			*o = opts
			o.Card = card
		},
	}
	if grpcOnly {
		kit.Wrap = func(h http.Handler) http.Handler { return h.(*a2ahttp.Handler).GRPC() }
	}
	s := testkit.StartServer(t, kit)
	return s.URL, a2aconnect.NewA2AServiceClient(testkit.H2CClient(), s.URL, connect.WithGRPC())
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
