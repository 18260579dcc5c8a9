// Command parleypeer is the Parley server the Go SDK's client talks to in
// the tests: the conformance agent on a memory store behind a2ahttp, on a
// loopback port, serving the card, JSON-RPC, HTTP+JSON and gRPC (HTTP/1.1
// and cleartext HTTP/2), with push notifications delivered to any address,
// loopback included.
//
// It runs in a process of its own because Parley's a2a package and the
// SDK's a2apb package both register the protobuf package lf.a2a.v1: one
// process holds both only with Go protobuf's conflict policy set
// (cmd/together), which the other tests do not depend on. It prints "READY http://127.0.0.1:PORT" once
// it serves, and stops when its standard input closes.
//
// -protocol-versions lists the A2A versions served, as `parley serve
// --protocol-versions` does: "1.1,1.0,0.3" turns on the 1.1 preview, whose
// card lists a 1.1 interface after each v1.0 one.
//
// -token turns bearer authentication on with that one token: every
// operation needs it, and the card declares the bearer scheme (spec §4.5).
// -reader-token adds a second token of the same caller with the right
// tasks:read alone (its other calls are refused: PermissionDeniedError).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	parley "parley.dev/parley/a2a"
	"parley.dev/parley/a2ahttp"
	"parley.dev/parley/internal/agents"
	"parley.dev/parley/push"
	"parley.dev/parley/server"
	"parley.dev/parley/taskstore/memstore"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "parleypeer:", err)
		os.Exit(1)
	}
}

func run() error {
	versions := flag.String("protocol-versions", "", "the A2A versions served, comma-separated (default: the server's defaults, 1.0 and 0.3)")
	token := flag.String("token", "", "a bearer token every operation then needs (default: no authentication)")
	reader := flag.String("reader-token", "", "with -token, a second token of the same caller, with the right tasks:read alone")
	flag.Parse()
	var served []string
	if *versions != "" {
		served = strings.Split(*versions, ",")
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	base := "http://" + l.Addr().String()
	ifaces, err := a2ahttp.Interfaces(base)
	if err != nil {
		return err
	}
	card, err := agents.Card("conformance", ifaces)
	if err != nil {
		return err
	}
	card.Capabilities.PushNotifications = proto.Bool(true)

	store := memstore.New()
	guard, err := push.NewGuard(&push.GuardOptions{AllowPrivate: true}) // the tests' webhooks are on loopback
	if err != nil {
		return err
	}
	sender, err := push.New(store, &push.Options{Guard: guard, Logger: logger})
	if err != nil {
		return err
	}
	var tokens map[string]string
	var auth []a2ahttp.Authenticator
	if *token != "" {
		tokens = map[string]string{*token: "sdk-client"}
		set := a2ahttp.NewTokenSet(nil)
		rights := map[string]parley.Rights{}
		if *reader != "" {
			tokens[*reader] = "sdk-client"
			rights[*reader] = parley.Rights{parley.RightTasksRead}
		}
		set.ReplaceWithRights(tokens, rights)
		auth = append(auth, set)
	}
	core, err := server.New(&server.Options{ProtocolVersions: served, Card: card, Agent: agents.Conformance(), Store: store, Push: sender, Logger: logger,
		RequireAuth: tokens != nil})
	if err != nil {
		return err
	}
	h, err := a2ahttp.New(core, &a2ahttp.Options{Card: card, Logger: logger, Authenticators: auth})
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: h, Protocols: new(http.Protocols)}
	hs.Protocols.SetHTTP1(true)
	hs.Protocols.SetUnencryptedHTTP2(true) // gRPC without TLS
	go hs.Serve(l)
	fmt.Println("READY", base)

	io.Copy(io.Discard, os.Stdin) // until the test closes our standard input
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	hs.Close()
	core.Close(ctx)
	return sender.Close(ctx)
}
