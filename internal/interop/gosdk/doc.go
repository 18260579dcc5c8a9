// Package gosdk holds no code, only tests: Parley against the official A2A
// Go SDK (github.com/a2aproject/a2a-go/v2), in both directions and on every
// binding the SDK speaks. The SDK's client calls a Parley server; Parley's
// client and `parley check` call a server built with the SDK's a2asrv;
// onebinary runs both in one program (cmd/together).
//
// It is a module of its own so that Parley's main module never depends on
// the SDK. The tests need the SDK from the Go module proxy; without it they
// skip, unless CI=true, where they must run.
package gosdk
