// Package equivalence holds no code, only tests: one table of scenarios
// (every operation, every error each can return, and Parley's decisions
// B1–B14 that apply) run over the real wire against each of the
// three bindings — JSON-RPC and HTTP+JSON as raw HTTP JSON, gRPC through the
// generated client over cleartext HTTP/2 — with the same expected outcome, so
// that a divergence between bindings fails a test by name, such as
// TestEquivalence/GetTask/unknown-task/GRPC. It also checks that a task
// created over one binding reads, lists, cancels and streams the same over
// every other, and benchmarks the bindings against each other.
package equivalence
