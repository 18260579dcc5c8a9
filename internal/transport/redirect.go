package transport

import (
	"fmt"
	"net/http"
)

// RedirectError reports an HTTP redirect a client refused to follow. A
// client's requests carry its credentials (Authorization, API keys in
// extra headers), which Go's HTTP client would send on to the redirect's
// target when it is on the same host name or one of its subdomains, and
// a 301, 302 or 303 would turn an A2A call's POST into a GET.
type RedirectError struct {
	// From is the URL that answered with the redirect.
	From string
	// To is the redirect's target (its Location).
	To string
	// StatusCode is the redirect's HTTP status.
	StatusCode int
}

// Error implements the error interface.
func (e *RedirectError) Error() string {
	return fmt.Sprintf("redirected to %s; not followed", e.To)
}

// RefuseRedirect is an http.Client CheckRedirect function that follows no
// redirect: the client's Do returns a *RedirectError (wrapped in its
// *url.Error) naming the target, and nothing is sent there.
func RefuseRedirect(req *http.Request, via []*http.Request) error {
	e := &RedirectError{To: req.URL.Redacted()}
	if len(via) > 0 {
		e.From = via[len(via)-1].URL.Redacted()
	}
	if req.Response != nil {
		e.StatusCode = req.Response.StatusCode
	}
	return e
}

// NoRedirects returns hc (http.DefaultClient when nil) made to refuse
// redirects with RefuseRedirect: hc itself when it already decides on
// redirects (its CheckRedirect is set), otherwise a copy that shares its
// Transport, Jar and Timeout. The transports use it for every client that
// sends credentials, so that no credential follows a redirect.
func NoRedirects(hc *http.Client) *http.Client {
	if hc == nil {
		hc = http.DefaultClient
	}
	if hc.CheckRedirect != nil {
		return hc
	}
	c := *hc
	c.CheckRedirect = RefuseRedirect
	return &c
}
