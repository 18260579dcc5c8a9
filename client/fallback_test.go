package client_test

import (
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
	"parley.dev/parley/internal/testkit"
)

// TestFallback: an interface that cannot be reached is skipped for the
// next one in the card's order; an error the server sends is not a reason
// to move.
func TestFallback(t *testing.T) {
	t.Parallel()
	dead := closedURL(t)
	e := start(t, config{ifaces: func(base string) []*a2a.AgentInterface {
		return []*a2a.AgentInterface{
			{Url: dead + "/", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: "1.0"},
			{Url: "http://192.0.2.1:1", ProtocolBinding: "SLIMRPC", ProtocolVersion: "1.0"}, // not supported: skipped
			{Url: base, ProtocolBinding: a2a.BindingHTTPJSON, ProtocolVersion: "1.0"},
			{Url: base + "/", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: "0.3"}, // wrong version: skipped
		}
	}})
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, ctx context.Context, e *env, dead string)
	}{
		{"unary", fallbackUnary},
		{"stream", fallbackStream},
		{"TLS handshake", fallbackTLSHandshake},
		{"gRPC first, port closed", fallbackGRPCPortClosed},
		{"server error does not move", fallbackNotOnServerError},
		{"nothing reachable", fallbackNothingReachable},
		{"no usable interface", fallbackNoUsableInterface},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t, testCtx(t), e, dead) // the deadline starts when the subtest does
		})
	}
}

// fallbackUnary: a blocking call moves past the dead interface to HTTP+JSON.
func fallbackUnary(t *testing.T, ctx context.Context, e *env, dead string) {
	c, err := client.New(e.card, &client.Options{Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Interface().GetUrl(); got != dead+"/" {
		t.Fatalf("first interface = %s, want the card's first", got)
	}
	if _, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("hello")}); err != nil {
		t.Fatalf("SendMessage = %v", err)
	}
	if got := c.Interface().GetProtocolBinding(); got != a2a.BindingHTTPJSON {
		t.Fatalf("interface after fallback = %s, want HTTP+JSON", got)
	}
}

// fallbackStream: a stream moves past the dead interface to HTTP+JSON.
func fallbackStream(t *testing.T, ctx context.Context, e *env, dead string) {
	c, err := client.New(e.card, &client.Options{Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	evs, err := testkit.Collect(c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("stream 2")}))
	if err != nil || len(evs) < 3 {
		t.Fatalf("SendStreamingMessage = %q, %v", testkit.Kinds(evs), err)
	}
	if got := c.Interface().GetProtocolBinding(); got != a2a.BindingHTTPJSON {
		t.Fatalf("interface after fallback = %s, want HTTP+JSON", got)
	}
}

// fallbackTLSHandshake: a server whose certificate the client does not trust
// counts as unreachable.
func fallbackTLSHandshake(t *testing.T, ctx context.Context, e *env, dead string) {
	// A server whose certificate the client does not trust counts as
	// unreachable.
	untrusted := httptest.NewUnstartedServer(http.NotFoundHandler())
	untrusted.Config.ErrorLog = log.New(io.Discard, "", 0)
	untrusted.StartTLS()
	defer untrusted.Close()
	card := proto.Clone(e.card).(*a2a.AgentCard)
	card.SupportedInterfaces[0].Url = untrusted.URL + "/"
	c, err := client.New(card, &client.Options{Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("hello")}); err != nil {
		t.Fatalf("SendMessage = %v", err)
	}
	if got := c.Interface().GetProtocolBinding(); got != a2a.BindingHTTPJSON {
		t.Fatalf("interface after a failed handshake = %s, want HTTP+JSON", got)
	}
}

// fallbackGRPCPortClosed: a closed gRPC port is skipped like any other
// unreachable interface, and alone it is a connect-phase TransportError.
func fallbackGRPCPortClosed(t *testing.T, ctx context.Context, e *env, dead string) {
	live := start(t, config{})
	card := proto.Clone(live.card).(*a2a.AgentCard)
	card.SupportedInterfaces = []*a2a.AgentInterface{
		{Url: hostOf(dead), ProtocolBinding: a2a.BindingGRPC, ProtocolVersion: "1.0"},
		{Url: hostOf(live.url), ProtocolBinding: a2a.BindingGRPC, ProtocolVersion: "1.0"},
		{Url: live.url + "/", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: "1.0"},
	}
	for _, stream := range []bool{false, true} {
		c, err := client.New(card, &client.Options{Retries: -1})
		if err != nil {
			t.Fatal(err)
		}
		if stream {
			evs, err := testkit.Collect(c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("stream 1")}))
			if err != nil || len(evs) < 3 {
				t.Fatalf("SendStreamingMessage = %q, %v", testkit.Kinds(evs), err)
			}
		} else if _, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("hello")}); err != nil {
			t.Fatalf("SendMessage = %v", err)
		}
		if got := c.Interface(); got.GetUrl() != hostOf(live.url) || got.GetProtocolBinding() != a2a.BindingGRPC {
			t.Fatalf("interface after fallback = %s %s, want the second (gRPC) one", got.GetProtocolBinding(), got.GetUrl())
		}
	}
	// Alone, the closed gRPC port is a connect-phase TransportError.
	card.SupportedInterfaces = card.SupportedInterfaces[:1]
	c, err := client.New(card, &client.Options{Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.GetTask(ctx, &a2a.GetTaskRequest{Id: "x"})
	var te *client.TransportError
	var op *net.OpError
	if !errors.As(err, &te) || te.Phase != client.PhaseConnect || !errors.As(err, &op) {
		t.Fatalf("GetTask over a closed gRPC port = %v (%T), want a connect-phase TransportError wrapping a *net.OpError", err, err)
	}
}

// fallbackNotOnServerError: an error the server sends keeps the client on
// its interface.
func fallbackNotOnServerError(t *testing.T, ctx context.Context, e *env, dead string) {
	live := start(t, config{})
	c, err := client.New(live.card, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetTask(ctx, &a2a.GetTaskRequest{Id: "nope"}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Fatalf("GetTask = %v", err)
	}
	if got := c.Interface().GetProtocolBinding(); got != a2a.BindingJSONRPC {
		t.Fatalf("interface = %s, want still JSONRPC", got)
	}
}

// fallbackNothingReachable: with no interface reachable the error is a
// connect-phase TransportError.
func fallbackNothingReachable(t *testing.T, ctx context.Context, e *env, dead string) {
	card := proto.Clone(e.card).(*a2a.AgentCard)
	card.SupportedInterfaces = card.SupportedInterfaces[:1]
	c, err := client.New(card, &client.Options{Retries: 1, RetryDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.GetTask(ctx, &a2a.GetTaskRequest{Id: "x"})
	var te *client.TransportError
	var op *net.OpError
	if !errors.As(err, &te) || te.Phase != client.PhaseConnect || !te.Temporary() || !errors.As(err, &op) {
		t.Fatalf("GetTask = %v (%T), want a connect-phase TransportError wrapping a *net.OpError", err, err)
	}
}

// fallbackNoUsableInterface: a card whose only interface has a binding the
// client lacks is refused by New.
func fallbackNoUsableInterface(t *testing.T, ctx context.Context, e *env, dead string) {
	card := proto.Clone(e.card).(*a2a.AgentCard)
	card.SupportedInterfaces = card.SupportedInterfaces[1:2]
	if _, err := client.New(card, nil); err == nil || !strings.Contains(err.Error(), "SLIMRPC") {
		t.Fatalf("New = %v, want an error naming the unsupported binding", err)
	}
}
