// Package testkit is the harness that Parley's tests share, so that each
// test file says what it checks rather than how to set the scene: a Parley
// server on a loopback port (StartServer, NewCore, ServeH2C), the parley
// command and Node.js servers as child processes stopped when the test
// ends (ParleyBinary, StartNodeServer, on testenv's StartProcess), the
// draining of streams (Collect, Kinds, ReadSSE), the bounded exchange a
// fuzz target makes with a handler (Exchange), client calls (SendTask,
// CheckRequired, Ptr), the reading of the errors of the JSON bindings off
// the wire (WireError), and a TCP proxy that drops connections at random
// points (StartCutProxy).
//
// Everything here reports failures through the testing.TB it is given and
// releases what it started with TB.Cleanup. Only _test.go files import it.
package testkit
