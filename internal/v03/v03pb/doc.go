// Package v03pb holds the A2A v0.3 gRPC messages (proto package a2a.v1,
// service A2AService), generated for Parley. Only the v0.3 gRPC binding
// (v03/v03grpc) uses them; everything else speaks v1.0 (package a2a).
package v03pb

//go:generate bash ../../../proto/generate_v03.sh
