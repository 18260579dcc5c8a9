// Package a2a holds the Go types of the Agent2Agent (A2A) protocol v1.0,
// generated from proto/a2a.proto, and the ProtoJSON codec used on the wire.
// The same generation writes package a2aconnect, the gRPC service code.
package a2a

//go:generate bash ../proto/generate.sh
