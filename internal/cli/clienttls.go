package cli

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"

	"parley.dev/parley/internal/httpx"
)

// The client commands reach an agent over https with the system's trusted
// roots. --ca-cert adds the CAs of a PEM bundle to them (an agent whose
// certificate a private CA signed), and --client-cert with --client-key
// present a certificate in the TLS handshake, for an agent that
// authenticates its callers by mutual TLS (MutualTlsSecurityScheme, spec
// §4.5.6). The same settings serve every call of the command: the
// card, and each binding (gRPC included, which runs over the same TLS).

// loadTLS reads --ca-cert, --client-cert and --client-key into c.tls, left
// nil when none is given. A file that cannot be read or holds nothing
// usable is a usage error naming it.
func (c *common) loadTLS() error {
	if (c.clientCert == "") != (c.clientKey == "") {
		return usageError{errors.New("--client-cert and --client-key go together: give both, or neither")}
	}
	if c.caCert == "" && c.clientCert == "" && !c.insecure {
		return nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: c.insecure}
	if c.caCert != "" {
		pem, err := os.ReadFile(c.caCert)
		if err != nil {
			return usageError{fmt.Errorf("--ca-cert: %w", err)}
		}
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool() // no system roots here: the bundle alone
		}
		if !pool.AppendCertsFromPEM(pem) {
			return usageError{fmt.Errorf("--ca-cert %s: no PEM certificate in the file (want one or more -----BEGIN CERTIFICATE----- blocks)", c.caCert)}
		}
		cfg.RootCAs = pool
	}
	if c.clientCert != "" {
		cert, err := tls.LoadX509KeyPair(c.clientCert, c.clientKey)
		if err != nil {
			return usageError{fmt.Errorf("--client-cert %s, --client-key %s: %v", c.clientCert, c.clientKey, err)}
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	c.tls = cfg
	return nil
}

// tlsTransport returns a copy of the default transport that uses the
// command's TLS settings, or nil when it has none.
func (c *common) tlsTransport() *http.Transport {
	if c.tls == nil {
		return nil
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = c.tls.Clone()
	return t
}

// checkHTTPClient is the HTTP client of `parley check` when TLS flags are
// given (nil otherwise: check's own defaults). Like check's default, it
// does not follow redirects for operations, which are graded on the
// response itself, but it does for the agent card, which may sit behind
// one.
func (c *common) checkHTTPClient() *http.Client {
	t := c.tlsTransport()
	if t == nil {
		return nil
	}
	return &http.Client{Transport: t, CheckRedirect: func(r *http.Request, via []*http.Request) error {
		if len(via) < 10 && strings.HasPrefix(via[0].URL.Path, "/.well-known/") {
			return nil
		}
		return http.ErrUseLastResponse
	}}
}

// tlsHint explains a TLS failure the user can fix with a flag: a server
// certificate that no trusted CA signed, or that names another host; a
// client certificate the agent asked for and did not get, or did not
// accept. It returns "" for other errors.
func (c *common) tlsHint(err error) string {
	var (
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
		alert    tls.AlertError
	)
	switch {
	case errors.As(err, &unknown):
		return c.untrustedHint()
	case errors.As(err, &hostname):
		return "the agent's TLS certificate is for another host: use a host name the certificate lists"
	case errors.As(err, &invalid):
		return "the agent's TLS certificate is not valid (expired, not yet valid, or not for serving)"
	case errors.As(err, &alert):
		switch alert {
		case 116: // certificate_required (TLS 1.3)
			return "the agent requires a TLS client certificate: give --client-cert FILE and --client-key FILE"
		case 42, 43, 44, 45, 46, 48: // bad, unsupported, revoked, expired, unknown certificate; unknown_ca
			if c.clientCert == "" {
				return "the agent refused the TLS handshake over a client certificate: give --client-cert FILE and --client-key FILE"
			}
			return fmt.Sprintf("the agent did not accept the client certificate --client-cert %s (not issued by a CA it trusts, or expired)", c.clientCert)
		}
	}
	// Some layers flatten the error to text; recognise the alerts by it.
	msg := err.Error()
	switch {
	case strings.Contains(msg, "tls: certificate required"):
		return "the agent requires a TLS client certificate: give --client-cert FILE and --client-key FILE"
	case strings.Contains(msg, "certificate signed by unknown authority"):
		return c.untrustedHint()
	case c.clientCert != "" && (strings.Contains(msg, "tls: bad certificate") || strings.Contains(msg, "tls: unknown certificate authority")):
		return fmt.Sprintf("the agent did not accept the client certificate --client-cert %s (not issued by a CA it trusts, or expired)", c.clientCert)
	case strings.Contains(msg, "https://") && httpx.ClosedBeforeAnswer(err):
		// TLS 1.3: the server judges the client's certificate after the
		// client finished its handshake, and its refusal may reach the
		// client only as a connection that broke before any answer (reset,
		// a broken pipe, an end of file), whichever the race gives.
		if c.clientCert != "" {
			return fmt.Sprintf("the agent closed the connection after the TLS handshake: it probably did not accept the client certificate --client-cert %s (not issued by a CA it trusts, or expired)", c.clientCert)
		}
		return "the agent closed the connection after the TLS handshake: it probably requires a TLS client certificate: give --client-cert FILE and --client-key FILE"
	}
	return ""
}

// untrustedHint is the advice about a server certificate no trusted CA
// signed.
func (c *common) untrustedHint() string {
	if c.caCert != "" {
		return fmt.Sprintf("the agent's TLS certificate is not trusted: no CA in --ca-cert %s (nor the system's) signed it", c.caCert)
	}
	return "the agent's TLS certificate is not trusted (signed by an unknown CA): give that CA's certificate with --ca-cert FILE"
}
