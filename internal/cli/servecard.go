package cli

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"

	"parley.dev/parley/a2a"
)

// publicBase is the base URL the card advertises: --public-url when given,
// else the listener's address over http, or https when serving TLS. It
// never ends in a slash.
func publicBase(publicURL string, ln net.Listener, overTLS bool) string {
	base := publicURL
	if base == "" {
		base = "http://" + ln.Addr().String()
		if overTLS {
			base = "https://" + ln.Addr().String()
		}
	}
	return strings.TrimSuffix(base, "/")
}

// grpcTarget is the url of the card's GRPC interface: a "host:port" dial
// target (the form a2a.proto's AgentInterface.url comment adopted after
// v1.0.1; at v1.0.1 the spec asks for a URL), which gRPC clients such as
// grpc-js accept as is. The host is the one of the public base URL; the port
// is the gRPC listener's when there is one (its host too, unless a public URL
// was given), else the base URL's.
func grpcTarget(base string, public bool, gln net.Listener) (string, error) {
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("--public-url %q: want an absolute URL", base)
	}
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	if gln != nil {
		lhost, lport, err := net.SplitHostPort(gln.Addr().String())
		if err != nil {
			return "", err
		}
		port = lport
		if !public {
			host = lhost
		}
	}
	return net.JoinHostPort(host, port), nil
}

// cards builds the public card, which lists the JSON-RPC and HTTP+JSON
// interfaces at base, the gRPC one at target and the security schemes of
// the configured credentials (identity.declare); and the card of
// --extended-card, nil without it.
func (cfg *serveConfig) cards(base, target string) (card, extended *a2a.AgentCard, err error) {
	card, err = cfg.agentCard([]*a2a.AgentInterface{
		{Url: base + "/", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.ProtocolVersion},
		{Url: base, ProtocolBinding: a2a.BindingHTTPJSON, ProtocolVersion: a2a.ProtocolVersion},
		{Url: target, ProtocolBinding: a2a.BindingGRPC, ProtocolVersion: a2a.ProtocolVersion},
	})
	if err != nil {
		return nil, nil, usageError{err}
	}
	cfg.id.declare(card, cfg.staticTokens(), cfg.guard.allowAnonymous)
	if cfg.extendedCard == "" {
		return card, nil, nil
	}
	if extended, err = readExtendedCard(cfg.extendedCard); err != nil {
		return nil, nil, err
	}
	yes := true
	card.Capabilities.ExtendedAgentCard = &yes
	return card, extended, nil
}

// readExtendedCard reads and checks the JSON agent card in file.
func readExtendedCard(file string) (*a2a.AgentCard, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	card := &a2a.AgentCard{}
	if err := a2a.Unmarshal(b, card); err != nil {
		return nil, fmt.Errorf("--extended-card %s: %w", file, err)
	}
	if v := a2a.CheckRequired(card); len(v) > 0 {
		return nil, fmt.Errorf("--extended-card %s: %s: %s", file, v[0].Field, v[0].Description)
	}
	return card, nil
}
