package grpcbind

import (
	"net/http"

	"connectrpc.com/connect"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/transport"
)

// What another gRPC transport (the A2A v0.3 one, package v03/v03grpc)
// shares with this one: how a target is dialled, which headers may travel
// as metadata, and how a status becomes an *a2a.Error.

// Dial returns the base URL of a gRPC interface's calls and an HTTP client
// that speaks HTTP/2 to it (cleartext HTTP/2 for an http:// base; see
// NewTransport), and the metadata to send from cfg.Header. The HTTP client
// follows no redirect unless cfg.HTTPClient decides on redirects itself
// (transport.NoRedirects).
func Dial(target string, cfg transport.Config) (string, *http.Client, http.Header, error) {
	hc := transport.NoRedirects(cfg.HTTPClient) // the metadata carries credentials
	rt := hc.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	tlsSet := false
	if ht, ok := rt.(*http.Transport); ok {
		c := ht.Clone() // first: Clone completes net/http's lazy set-up of ht
		tlsSet = tlsConfigured(c.TLSClientConfig)
		p := new(http.Protocols)
		p.SetHTTP2(true)
		p.SetUnencryptedHTTP2(true)
		c.Protocols = p
		rt = c
	}
	base, err := grpcBaseURL(target, tlsSet)
	if err != nil {
		return "", nil, nil, err
	}
	md := http.Header{}
	for k, v := range cfg.Header {
		if !reservedMetadata(k) {
			md[http.CanonicalHeaderKey(k)] = append([]string(nil), v...)
		}
	}
	return base, &http.Client{Transport: rt, Timeout: hc.Timeout, CheckRedirect: hc.CheckRedirect}, md, nil
}

// StatusError returns the *a2a.Error a status from a server carries, or
// nil for the statuses that are transport conditions (UNAVAILABLE,
// DEADLINE_EXCEEDED, CANCELED).
func StatusError(ce *connect.Error) *a2a.Error { return statusError(ce) }
