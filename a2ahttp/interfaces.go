package a2ahttp

import (
	"fmt"
	"net"
	"net/url"
	"strings"

	"parley.dev/parley/a2a"
)

// Interfaces returns the three interfaces a Handler serves when it is
// reached at baseURL, for the supportedInterfaces of its agent card, in
// order of preference:
//
//   - JSON-RPC at baseURL + "/",
//   - HTTP+JSON at baseURL,
//   - gRPC at the host:port of baseURL (the port defaults to 80 for http
//     and 443 for https), as a gRPC dial target,
//
// each with protocolVersion a2a.ProtocolVersion. A trailing slash of
// baseURL is ignored. baseURL may have a path (a handler behind a reverse
// proxy's prefix); gRPC calls must then still reach the handler at the
// host's root, where gRPC addresses its procedures.
//
// Interfaces refuses a baseURL that is not an absolute http or https URL
// with a host, or that carries user information, a query or a fragment.
func Interfaces(baseURL string) ([]*a2a.AgentInterface, error) {
	u, err := url.Parse(baseURL)
	if err != nil {
		return nil, fmt.Errorf("a2ahttp: base URL %q: %w", baseURL, err)
	}
	if err := checkBase(baseURL, u); err != nil {
		return nil, fmt.Errorf("a2ahttp: base URL %q: %w", baseURL, err)
	}
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	return servedInterfaces(strings.TrimSuffix(u.String(), "/"), net.JoinHostPort(u.Hostname(), port)), nil
}

// servedInterfaces is the one list of the v1.0 interfaces a Handler
// serves, in order of preference: JSON-RPC at base + "/", HTTP+JSON at
// base (which has no trailing slash), gRPC at the dial target grpcTarget.
// Interfaces and Start both derive the card's interfaces with it.
func servedInterfaces(base, grpcTarget string) []*a2a.AgentInterface {
	return []*a2a.AgentInterface{
		{Url: base + "/", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.ProtocolVersion},
		{Url: base, ProtocolBinding: a2a.BindingHTTPJSON, ProtocolVersion: a2a.ProtocolVersion},
		{Url: grpcTarget, ProtocolBinding: a2a.BindingGRPC, ProtocolVersion: a2a.ProtocolVersion},
	}
}

// checkBase reports why raw, parsed as u, cannot be the base URL of an
// agent's interfaces.
func checkBase(raw string, u *url.URL) error {
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("want an absolute http or https URL, not scheme %q", u.Scheme)
	case u.Opaque != "" || u.Hostname() == "":
		return fmt.Errorf("want an absolute URL with a host")
	case u.User != nil:
		return fmt.Errorf("user information does not belong in an interface URL")
	case strings.ContainsAny(raw, "?#"):
		return fmt.Errorf("a query or fragment does not belong in an interface URL")
	}
	return nil
}
