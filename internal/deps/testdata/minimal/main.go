// Command minimal serves the echo agent on the memory store over every
// binding of a2ahttp: the smallest Parley server, whose dependencies
// package deps checks.
package main

import (
	"log"
	"net/http"

	"parley.dev/parley/a2a"
	"parley.dev/parley/a2ahttp"
	"parley.dev/parley/internal/agents"
	"parley.dev/parley/server"
	"parley.dev/parley/taskstore/memstore"
)

func main() {
	card := &a2a.AgentCard{Name: "minimal", Description: "echo", Version: "1.0.0"}
	srv, err := server.New(&server.Options{Card: card, Agent: agents.Echo(), Store: memstore.New()})
	if err != nil {
		log.Fatal(err)
	}
	h, err := a2ahttp.New(srv, &a2ahttp.Options{Card: card})
	if err != nil {
		log.Fatal(err)
	}
	log.Fatal(http.ListenAndServe("127.0.0.1:8080", h))
}
