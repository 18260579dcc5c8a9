package a2a

import (
	"slices"
	"testing"
)

// kinds are the kinds of wire value of the error table, with how a client
// that read only that value reports it.
var kinds = []struct {
	kind wire
	name string
	wire func(v int) Wire
}{
	{onRPC, "JSON-RPC code", func(v int) Wire { return Wire{JSONRPC: v} }},
	{onHTTP, "HTTP status", func(v int) Wire { return Wire{HTTP: v} }},
	{onGRPC, "gRPC code", func(v int) Wire { return Wire{GRPC: v} }},
}

// transportValue reports whether v, a value of kind k, is a transport
// condition: alone it means no row.
func transportValue(k wire, v int) bool {
	return (k == onHTTP && slices.Contains(transportHTTP, v)) || (k == onGRPC && slices.Contains(transportGRPC, v))
}

// TestErrorTableDefaults: each JSON-RPC code, HTTP status and gRPC code of
// the table is marked on exactly one row, what the value alone means; a
// transport condition (HTTP 503, gRPC UNAVAILABLE) on none.
func TestErrorTableDefaults(t *testing.T) {
	for _, k := range kinds {
		marked := map[int][]Code{}
		for _, r := range codeTable {
			if r.def&k.kind != 0 {
				marked[r.value(k.kind)] = append(marked[r.value(k.kind)], r.code)
			} else if _, ok := marked[r.value(k.kind)]; !ok {
				marked[r.value(k.kind)] = nil
			}
		}
		for v, cs := range marked {
			if transportValue(k.kind, v) {
				if len(cs) != 0 {
					t.Errorf("%s %d is a transport condition but marked on %v", k.name, v, cs)
				}
				continue
			}
			if len(cs) != 1 {
				t.Errorf("%s %d is marked on %d rows %v, want 1", k.name, v, len(cs), cs)
			}
		}
	}
}

// TestErrorTableInverse: the reverse map of each kind of value is the exact
// inverse of the forward map on the rows marked for it, and gives the
// marked row for the others; a reason, and all three values together, name
// their row. A transport condition alone names no row; with its row's
// reason, it names that row.
func TestErrorTableInverse(t *testing.T) {
	for _, r := range codeTable {
		for _, k := range kinds {
			v := r.value(k.kind)
			got, ok := CodeFromWire(k.wire(v))
			if transportValue(k.kind, v) {
				if ok {
					t.Errorf("%s: %s %d alone reads as %s, want a transport condition", r.name, k.name, v, got.Name())
				}
				w := k.wire(v)
				w.Reason = r.reason
				if got, ok := CodeFromWire(w); !ok || got != r.code {
					t.Errorf("%s: %s %d with reason %s reads as %s (%v)", r.name, k.name, v, r.reason, got.Name(), ok)
				}
				continue
			}
			want := rows(k.kind, v)[0]
			if r.def&k.kind != 0 && want != r.code {
				t.Fatalf("rows(%s %d) does not start with its marked row %s", k.name, v, r.name)
			}
			if !ok || got != want {
				t.Errorf("%s: %s %d reads as %s (%v), want %s", r.name, k.name, v, got.Name(), ok, want.Name())
			}
		}
		if got, ok := CodeForReason(r.reason); !ok || got != r.code {
			t.Errorf("reason %q reads as %s (%v), want %s", r.reason, got.Name(), ok, r.name)
		}
		all := Wire{JSONRPC: r.rpc, HTTP: r.http, GRPC: r.grpc}
		if transportValue(onHTTP, r.http) || transportValue(onGRPC, r.grpc) {
			all.Reason = r.reason // without it, a transport condition
		}
		if got, ok := CodeFromWire(all); !ok || got != r.code {
			t.Errorf("%s: %d/%d/%d together read as %s, want itself", r.name, r.rpc, r.http, r.grpc, got.Name())
		}
		if n, ok := GRPCCodeNumber(GRPCCodeName(r.grpc)); !ok || n != r.grpc {
			t.Errorf("%s: gRPC code %d named %q reads back as %d", r.name, r.grpc, GRPCCodeName(r.grpc), n)
		}
	}
}

// TestErrorInfo: A2A errors carry their reason in the A2A domain; the
// others an ErrorInfo in Parley's only for a rate limit, UnavailableError,
// MethodNotFoundError (which shares HTTP 404 with TaskNotFoundError) or
// metadata.
func TestErrorInfo(t *testing.T) {
	for _, r := range codeTable {
		reason, domain, ok := (&Error{Code: r.code}).Info()
		switch {
		case r.code.IsA2A():
			if !ok || reason != r.reason || domain != DomainA2A {
				t.Errorf("%s: ErrorInfo %q %q %v, want %q in %s", r.name, reason, domain, ok, r.reason, DomainA2A)
			}
		case r.code == CodeRateLimited || r.code == CodeUnavailable || r.code == CodeMethodNotFound:
			if !ok || reason != r.reason || domain != DomainParley {
				t.Errorf("%s: ErrorInfo %q %q %v", r.name, reason, domain, ok)
			}
		case ok:
			t.Errorf("%s without metadata has an ErrorInfo %q %q", r.name, reason, domain)
		}
		reason, domain, ok = (&Error{Code: r.code, Metadata: map[string]string{"k": "v"}}).Info()
		if !ok || reason != r.reason || (domain == DomainA2A) != r.code.IsA2A() {
			t.Errorf("%s with metadata: ErrorInfo %q %q %v", r.name, reason, domain, ok)
		}
	}
}

// TestForeignValues: the values peers send that no row has, and the
// transport conditions that are no error.
func TestForeignValues(t *testing.T) {
	for _, c := range []struct {
		w    Wire
		code Code
		ok   bool
	}{
		{Wire{HTTP: 403}, CodePermissionDenied, true},
		{Wire{HTTP: 405}, CodeMethodNotFound, true},
		{Wire{HTTP: 409}, CodeTaskGenerationMismatch, true},
		{Wire{HTTP: 410}, CodeInvalidRequest, true},
		{Wire{GRPC: grpcAborted}, CodeTaskGenerationMismatch, true},
		{Wire{HTTP: 501}, CodeUnsupportedOperation, true},
		{Wire{HTTP: 507}, CodeInternal, true},
		{Wire{HTTP: 503}, 0, false},
		{Wire{HTTP: 503, JSONRPC: -32603}, 0, false},
		{Wire{HTTP: 503, Reason: "UNAVAILABLE"}, CodeUnavailable, true},
		{Wire{HTTP: 503, JSONRPC: -32603, Reason: "UNAVAILABLE"}, CodeUnavailable, true},
		{Wire{GRPC: 14, Reason: "UNAVAILABLE"}, CodeUnavailable, true},
		{Wire{JSONRPC: -32603}, CodeInternal, true},
		{Wire{HTTP: 404, GRPC: grpcUnimplemented}, CodeMethodNotFound, true},
		{Wire{HTTP: 429, JSONRPC: -32603}, CodeRateLimited, true},
		{Wire{GRPC: 7}, CodePermissionDenied, true},
		{Wire{GRPC: 2}, CodeInternal, true},
		{Wire{GRPC: 14}, 0, false},
		{Wire{GRPC: 4, HTTP: 400}, 0, false},
		{Wire{JSONRPC: -31401}, CodeUnauthenticated, true}, // the official Go SDK's
		{Wire{JSONRPC: -31402}, 0, false},
		{Wire{Reason: "UNAUTHORIZED", JSONRPC: -31403}, CodePermissionDenied, true},
		{Wire{Reason: "UNAUTHORIZED"}, CodePermissionDenied, true},
		{Wire{}, 0, false},
	} {
		got, ok := CodeFromWire(c.w)
		if got != c.code || ok != c.ok {
			t.Errorf("CodeFromWire(%+v) = %v %v, want %v %v", c.w, got, ok, c.code, c.ok)
		}
	}
	if slices.ContainsFunc(codeTable[:], func(r codeInfo) bool { return r.reason == "" }) {
		t.Error("a row without a reason")
	}
}
