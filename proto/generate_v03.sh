#!/usr/bin/env bash
# Regenerates internal/v03/v03pb/a2a_v03.pb.go from proto/a2a_v03.proto: the A2A
# v0.3 gRPC messages (package a2a.v1), served beside v1.0 (docs/versions.md).
#
# Usage: bash proto/generate_v03.sh   (normally via `go generate ./internal/v03/v03pb/`)
#
# Needs protoc with the well-known type protos, like proto/generate.sh;
# protoc-gen-go is built at the google.golang.org/protobuf version of go.mod.
# Parley's v0.3 service handler is written by hand on connect-go's generic
# handlers (internal/v03/v03grpc), so no connect-go code is generated.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
cd "$root"

command -v protoc >/dev/null 2>&1 ||
	{ echo "generate_v03.sh: protoc not found; install it, e.g. 'sudo apt-get install -y protobuf-compiler libprotobuf-dev'" >&2; exit 1; }
pbver="$(go list -m -f '{{.Version}}' google.golang.org/protobuf)"
bindir="$(mktemp -d)"
trap 'rm -rf "$bindir"' EXIT
GOBIN="$bindir" go install "google.golang.org/protobuf/cmd/protoc-gen-go@${pbver}"

protoc \
	--plugin=protoc-gen-go="$bindir/protoc-gen-go" \
	-I "$root/proto" \
	--go_out="$root/internal/v03/v03pb" \
	--go_opt=paths=source_relative \
	a2a_v03.proto
