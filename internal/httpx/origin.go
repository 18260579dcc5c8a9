package httpx

import (
	"net/url"
	"strings"
)

// SameOrigin reports whether origin, a request's Origin header, names the
// host the request was sent to (host, its Host header, port included):
// a same-origin request from a browser, which is no cross-origin request
// (the Fetch standard's origin). The scheme is not compared: behind a
// proxy that ends TLS, an https origin reaches the server over cleartext.
// "null" (an opaque origin) and anything without a host are never the
// same origin.
func SameOrigin(origin, host string) bool {
	u, err := url.Parse(origin)
	return err == nil && u.Host != "" && strings.EqualFold(u.Host, host)
}
