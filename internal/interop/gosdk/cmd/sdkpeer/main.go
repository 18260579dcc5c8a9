// Command sdkpeer is an agent built with the official A2A Go SDK
// (a2asrv), for Parley's client and `parley check` to talk to in the tests.
// It serves, on loopback ports:
//
//   - the agent card at /.well-known/agent-card.json,
//   - JSON-RPC at /jsonrpc and HTTP+JSON at the root (one HTTP port),
//   - gRPC on a port of its own (the SDK's gRPC server is grpc-go's),
//
// with the SDK's in-memory task and push configuration stores. The agent
// answers simply, by the first word of the message:
//
//	reply      a direct message "ahoy"
//	stream N   a task: WORKING, N artifact chunks "chunk i", COMPLETED
//	slow MS    a task: WORKING, MS milliseconds (ends when canceled), the echo
//	ask        a task: WORKING, then INPUT_REQUIRED; a follow-up completes it
//	anything   a task: WORKING, an artifact echoing the text, COMPLETED
//
// It runs in a process of its own (see cmd/parleypeer for why), prints
// "READY http://127.0.0.1:PORT" once it serves, and stops when its standard
// input closes.
package main

import (
	"context"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	a2agrpc "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/a2aproject/a2a-go/v2/a2asrv/push"
	"google.golang.org/grpc"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "sdkpeer:", err)
		os.Exit(1)
	}
}

func run() error {
	hl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	gl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	base := "http://" + hl.Addr().String()
	card := &a2a.AgentCard{
		Name:        "Go SDK test agent",
		Description: "An a2asrv agent for Parley's interoperability tests.",
		Version:     "1.0.0",
		SupportedInterfaces: []*a2a.AgentInterface{
			{URL: base + "/jsonrpc", ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: "1.0"},
			{URL: base, ProtocolBinding: a2a.TransportProtocolHTTPJSON, ProtocolVersion: "1.0"},
			{URL: gl.Addr().String(), ProtocolBinding: a2a.TransportProtocolGRPC, ProtocolVersion: "1.0"},
		},
		DefaultInputModes:  []string{"text/plain"},
		DefaultOutputModes: []string{"text/plain"},
		Capabilities:       a2a.AgentCapabilities{Streaming: true, PushNotifications: true},
		Skills: []a2a.AgentSkill{{ID: "echo", Name: "Echo", Description: "Repeats the text it receives.",
			Tags: []string{"echo", "test"}, Examples: []string{"hi"}}},
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	handler := a2asrv.NewHandler(agent{},
		a2asrv.WithLogger(logger),
		a2asrv.WithPushNotifications(push.NewInMemoryStore(), push.NewHTTPPushSender(nil)),
		a2asrv.WithCapabilityChecks(&card.Capabilities),
	)

	mux := http.NewServeMux()
	mux.Handle(a2asrv.WellKnownAgentCardPath, a2asrv.NewStaticAgentCardHandler(card))
	mux.Handle("/jsonrpc", a2asrv.NewJSONRPCHandler(handler))
	mux.Handle("/", a2asrv.NewRESTHandler(handler))
	hs := &http.Server{Handler: mux}
	go hs.Serve(hl)
	gs := grpc.NewServer()
	a2agrpc.NewHandler(handler).RegisterWith(gs)
	go gs.Serve(gl)
	fmt.Println("READY", base)

	io.Copy(io.Discard, os.Stdin) // until the test closes our standard input
	gs.Stop()
	return hs.Close()
}

// agent is the SDK agent's executor.
type agent struct{}

func (agent) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		var text string
		for _, p := range ec.Message.Parts {
			text += p.Text()
		}
		word, arg, _ := strings.Cut(strings.TrimSpace(text), " ")
		if word == "reply" {
			yield(a2a.NewMessageForTask(a2a.MessageRoleAgent, ec, a2a.NewTextPart("ahoy")), nil)
			return
		}
		if ec.StoredTask == nil && !yield(a2a.NewSubmittedTask(ec, ec.Message), nil) {
			return
		}
		if !yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateWorking, nil), nil) {
			return
		}
		switch n, err := strconv.Atoi(arg); {
		case word == "ask" && ec.StoredTask == nil:
			yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateInputRequired, a2a.NewMessageForTask(a2a.MessageRoleAgent, ec, a2a.NewTextPart("which one?"))), nil)
			return
		case word == "stream" && err == nil:
			var id a2a.ArtifactID
			for i := range n {
				ev := a2a.NewArtifactEvent(ec, a2a.NewTextPart(fmt.Sprintf("chunk %d", i)))
				if i == 0 {
					id = ev.Artifact.ID
				} else {
					ev = a2a.NewArtifactUpdateEvent(ec, id, a2a.NewTextPart(fmt.Sprintf("chunk %d", i)))
				}
				ev.LastChunk = i == n-1
				if !yield(ev, nil) {
					return
				}
			}
		case word == "slow" && err == nil:
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Duration(n) * time.Millisecond):
			}
			fallthrough
		default:
			if !yield(a2a.NewArtifactEvent(ec, a2a.NewTextPart(text)), nil) {
				return
			}
		}
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCompleted, nil), nil)
	}
}

func (agent) Cancel(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCanceled, nil), nil)
	}
}
