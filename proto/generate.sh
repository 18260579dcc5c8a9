#!/usr/bin/env bash
# Regenerates a2a/a2a.pb.go (messages) and internal/a2aconnect/a2a.connect.go
# (the A2AService gRPC handler and client, for connect-go) from
# proto/a2a.proto.
#
# Usage: bash proto/generate.sh   (from any directory; normally via
#        `go generate ./a2a/`)
#
# Needs protoc with the well-known type protos (Debian: protobuf-compiler and
# libprotobuf-dev). protoc-gen-go and protoc-gen-connect-go are built from the
# Go module proxy at the exact google.golang.org/protobuf and
# connectrpc.com/connect versions required by go.mod, so the output only
# depends on the inputs and the tool versions.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
cd "$root"

die() { echo "generate.sh: $*" >&2; exit 1; }

# (a) protoc and the well-known type protos.
have_wkt() {
	local inc
	for inc in /usr/include /usr/local/include; do
		[ -f "$inc/google/protobuf/struct.proto" ] && return 0
	done
	return 1
}
if ! command -v protoc >/dev/null 2>&1 || ! have_wkt; then
	if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
		echo "generate.sh: installing protobuf-compiler and libprotobuf-dev" >&2
		DEBIAN_FRONTEND=noninteractive apt-get install -y protobuf-compiler libprotobuf-dev >&2 ||
			die "apt-get install protobuf-compiler libprotobuf-dev failed"
	else
		die "protoc (with google/protobuf/*.proto) not found; install it, e.g. 'sudo apt-get install -y protobuf-compiler libprotobuf-dev'"
	fi
fi
command -v protoc >/dev/null 2>&1 || die "protoc still not on PATH"

# (b) protoc-gen-go and protoc-gen-connect-go at the versions pinned in go.mod.
pbver="$(go list -m -f '{{.Version}}' google.golang.org/protobuf 2>/dev/null)" ||
	die "google.golang.org/protobuf is not in go.mod; run 'go get google.golang.org/protobuf@v1.36.12'"
[ -n "$pbver" ] || die "cannot determine google.golang.org/protobuf version from go.mod"
cver="$(go list -m -f '{{.Version}}' connectrpc.com/connect 2>/dev/null)" ||
	die "connectrpc.com/connect is not in go.mod; run 'go get connectrpc.com/connect@v1.21.1'"
[ -n "$cver" ] || die "cannot determine connectrpc.com/connect version from go.mod"

bindir="$(mktemp -d)"
trap 'rm -rf "$bindir"' EXIT
GOBIN="$bindir" go install "google.golang.org/protobuf/cmd/protoc-gen-go@${pbver}" ||
	die "go install protoc-gen-go@${pbver} failed"
GOBIN="$bindir" go install "connectrpc.com/connect/cmd/protoc-gen-connect-go@${cver}" ||
	die "go install protoc-gen-connect-go@${cver} failed"

# (c) generate. The proto is compiled as "a2a.proto" (its registry path) and
# written next to the Go package with source-relative paths; the connect-go
# plugin writes its package a2aconnect in a subdirectory of its output, which
# is moved to internal/a2aconnect (Parley's gRPC binding uses it; it is not
# part of the public API).
gendir="$bindir/gen"
mkdir -p "$gendir"
protoc \
	--plugin=protoc-gen-go="$bindir/protoc-gen-go" \
	--plugin=protoc-gen-connect-go="$bindir/protoc-gen-connect-go" \
	-I "$root/proto" \
	--go_out="$root/a2a" \
	--go_opt=paths=source_relative \
	--connect-go_out="$gendir" \
	--connect-go_opt=paths=source_relative \
	a2a.proto
mkdir -p "$root/internal/a2aconnect"
mv "$gendir/a2aconnect/a2a.connect.go" "$root/internal/a2aconnect/a2a.connect.go"
