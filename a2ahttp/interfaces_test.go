package a2ahttp_test

import (
	"fmt"
	"testing"

	"slices"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/a2ahttp"
)

func TestInterfaces(t *testing.T) {
	t.Parallel()
	iface := func(binding, url string) *a2a.AgentInterface {
		return &a2a.AgentInterface{Url: url, ProtocolBinding: binding, ProtocolVersion: "1.0"}
	}
	for _, tc := range []struct{ base, rpc, rest, grpc string }{
		{"http://127.0.0.1:8080", "http://127.0.0.1:8080/", "http://127.0.0.1:8080", "127.0.0.1:8080"},
		{"http://127.0.0.1:8080/", "http://127.0.0.1:8080/", "http://127.0.0.1:8080", "127.0.0.1:8080"},
		{"https://agent.example.com", "https://agent.example.com/", "https://agent.example.com", "agent.example.com:443"},
		{"http://agent.example.com", "http://agent.example.com/", "http://agent.example.com", "agent.example.com:80"},
		{"https://example.com/a2a/", "https://example.com/a2a/", "https://example.com/a2a", "example.com:443"},
		{"http://[::1]:9000", "http://[::1]:9000/", "http://[::1]:9000", "[::1]:9000"},
	} {
		t.Run(tc.base, func(t *testing.T) {
			t.Parallel()
			got, err := a2ahttp.Interfaces(tc.base)
			if err != nil {
				t.Fatalf("Interfaces(%q) = %v", tc.base, err)
			}
			want := []*a2a.AgentInterface{
				iface(a2a.BindingJSONRPC, tc.rpc), iface(a2a.BindingHTTPJSON, tc.rest), iface(a2a.BindingGRPC, tc.grpc),
			}
			if !slices.EqualFunc(want, got, func(a, b *a2a.AgentInterface) bool { return proto.Equal(a, b) }) {
				t.Errorf("Interfaces(%q) = %v, want %v", tc.base, got, want)
			}
		})
	}
}

func TestInterfacesRefuses(t *testing.T) {
	t.Parallel()
	for _, base := range []string{
		"", "127.0.0.1:8080", "localhost", "/a2a", "ftp://example.com", "grpc://example.com:443",
		"http://", "http:///path", "https:example.com", "http://user:pw@example.com",
		"http://example.com/?x=1", "http://example.com/?", "http://example.com/#frag", "http://example.com:port",
	} {
		if got, err := a2ahttp.Interfaces(base); err == nil {
			t.Errorf("Interfaces(%q) = %v, want an error", base, got)
		}
	}
}

// A card for one's own address: the address is written once, and the card
// lists the three bindings that a2ahttp.Handler serves there.
func ExampleInterfaces() {
	ifaces, err := a2ahttp.Interfaces("https://agent.example.com")
	if err != nil {
		panic(err)
	}
	card := &a2a.AgentCard{Name: "Shouter", SupportedInterfaces: ifaces} // and the rest of the card
	for _, i := range card.GetSupportedInterfaces() {
		fmt.Println(i.GetProtocolBinding(), i.GetUrl())
	}
	// Output:
	// JSONRPC https://agent.example.com/
	// HTTP+JSON https://agent.example.com
	// GRPC agent.example.com:443
}
