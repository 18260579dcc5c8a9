// Command together is one program that links Parley and the official A2A
// Go SDK with its gRPC binding, as a user's program may: Parley's a2a
// package and the SDK's a2apb package (which a2agrpc/v1 imports) both
// register the protobuf names of A2A v1.0 (package lf.a2a.v1), and Go's
// protobuf runtime panics at start on the second registration unless its
// conflict policy says otherwise (docs/interoperability.md).
//
// It serves an agent with each (Parley's a2ahttp, the SDK's a2asrv on
// JSON-RPC and gRPC), calls the SDK's agent with Parley's client and
// Parley's agent with the SDK's client, on JSON-RPC and on gRPC, prints
// "OK" and exits 0; it prints the first failure and exits 1.
package main

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	sdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	a2agrpc "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"parley.dev/parley/a2a"
	"parley.dev/parley/a2ahttp"
	"parley.dev/parley/client"
	"parley.dev/parley/server"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "together:", err)
		os.Exit(1)
	}
	fmt.Println("OK")
}

func run() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	quiet := slog.New(slog.DiscardHandler)

	// Parley's agent: the text it receives, as an artifact.
	parley, err := a2ahttp.Start(&a2ahttp.ServeConfig{
		Addr: "127.0.0.1:0", Name: "Parley echo", Description: "Echoes.", Version: "1.0.0", Logger: quiet,
		Skills: []*a2a.AgentSkill{{Id: "echo", Name: "Echo", Description: "Echoes.", Tags: []string{"echo"}}},
		Agent: server.AgentFunc(func(_ context.Context, req *server.Request, em *server.Emitter) error {
			if err := em.Artifact(a2a.TextArtifact("echo", a2a.JoinText(req.Message.GetParts()))); err != nil {
				return err
			}
			return em.Status(a2a.TaskState_TASK_STATE_COMPLETED, nil)
		}),
	})
	if err != nil {
		return err
	}
	defer parley.Close()
	sdkURL, stop, err := startSDKAgent()
	if err != nil {
		return err
	}
	defer stop()

	// Parley's client calls the SDK's agent, on each binding it serves.
	card, err := client.Resolve(ctx, sdkURL, nil)
	if err != nil {
		return err
	}
	for _, tr := range []client.TransportFactory{client.JSONRPC(), client.GRPC()} {
		c, err := client.New(card, &client.Options{Transports: []client.TransportFactory{tr}})
		if err != nil {
			return err
		}
		resp, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("hello")})
		c.Close()
		if got := a2a.FirstText(resp.GetMessage()); err != nil || got != "hello" {
			return fmt.Errorf("Parley's client over %s: %v, %v; want the message hello", c.Interface().GetProtocolBinding(), resp, err)
		}
	}

	// The SDK's client calls Parley's agent, on the same two bindings.
	for _, opt := range []a2aclient.FactoryOption{
		a2aclient.WithJSONRPCTransport(nil),
		a2agrpc.WithGRPCTransport(grpc.WithTransportCredentials(insecure.NewCredentials())),
	} {
		sc, err := a2aclient.NewFromEndpoints(ctx, parleyInterfaces(parley.URL()), a2aclient.WithDefaultsDisabled(), opt)
		if err != nil {
			return err
		}
		res, err := sc.SendMessage(ctx, &sdk.SendMessageRequest{Message: sdk.NewMessage(sdk.MessageRoleUser, sdk.NewTextPart("hi"))})
		sc.Destroy()
		task, ok := res.(*sdk.Task)
		if err != nil || !ok || task.Status.State != sdk.TaskStateCompleted || len(task.Artifacts) != 1 || task.Artifacts[0].Parts[0].Text() != "hi" {
			return fmt.Errorf("the SDK's client: %#v, %v; want the task COMPLETED with the echo", res, err)
		}
	}
	return nil
}

// parleyInterfaces are the v1.0 JSON-RPC and gRPC interfaces of the
// Parley server at base, as its card lists them.
func parleyInterfaces(base string) []*sdk.AgentInterface {
	return []*sdk.AgentInterface{
		{URL: base + "/", ProtocolBinding: sdk.TransportProtocolJSONRPC, ProtocolVersion: "1.0"},
		{URL: base[len("http://"):], ProtocolBinding: sdk.TransportProtocolGRPC, ProtocolVersion: "1.0"},
	}
}

// startSDKAgent serves the SDK's agent, which answers a message with a
// message of the same text: its card and JSON-RPC on one port, gRPC on
// another. It returns the card's base URL and a function that stops both.
func startSDKAgent() (string, func(), error) {
	hl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	gl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		hl.Close()
		return "", nil, err
	}
	base := "http://" + hl.Addr().String()
	card := &sdk.AgentCard{
		Name: "SDK echo", Description: "Echoes.", Version: "1.0.0",
		SupportedInterfaces: []*sdk.AgentInterface{
			{URL: base + "/jsonrpc", ProtocolBinding: sdk.TransportProtocolJSONRPC, ProtocolVersion: "1.0"},
			{URL: gl.Addr().String(), ProtocolBinding: sdk.TransportProtocolGRPC, ProtocolVersion: "1.0"},
		},
		DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills: []sdk.AgentSkill{{ID: "echo", Name: "Echo", Description: "Echoes.", Tags: []string{"echo"}}},
	}
	handler := a2asrv.NewHandler(echo{})
	mux := http.NewServeMux()
	mux.Handle(a2asrv.WellKnownAgentCardPath, a2asrv.NewStaticAgentCardHandler(card))
	mux.Handle("/jsonrpc", a2asrv.NewJSONRPCHandler(handler))
	hs := &http.Server{Handler: mux}
	go hs.Serve(hl)
	gs := grpc.NewServer()
	a2agrpc.NewHandler(handler).RegisterWith(gs)
	go gs.Serve(gl)
	return base, func() { gs.Stop(); hs.Close() }, nil
}

// echo is the SDK agent's executor: it answers with the text it got.
type echo struct{}

func (echo) Execute(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[sdk.Event, error] {
	return func(yield func(sdk.Event, error) bool) {
		var text string
		for _, p := range ec.Message.Parts {
			text += p.Text()
		}
		yield(sdk.NewMessageForTask(sdk.MessageRoleAgent, ec, sdk.NewTextPart(text)), nil)
	}
}

func (echo) Cancel(context.Context, *a2asrv.ExecutorContext) iter.Seq2[sdk.Event, error] {
	return func(yield func(sdk.Event, error) bool) { yield(nil, errors.New("nothing to cancel")) }
}
