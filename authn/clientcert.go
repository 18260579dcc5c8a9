package authn

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"

	"parley.dev/parley/a2a"
)

// ClientCert authenticates a request by the TLS client certificate its
// connection presented and the handshake verified (see ClientCAs). The
// principal is the certificate's first subject alternative name, URI (a
// SPIFFE ID, say), then DNS name, then email address, else its subject
// common name. A connection without a verified certificate names nobody.
type ClientCert struct {
	// Rights are the rights of the principals certificates name, by
	// principal; a principal not in it has every right. A certificate
	// says nothing of rights itself, so they are the operator's to give.
	Rights map[string]a2a.Rights
}

// Authenticate implements a2ahttp.Authenticator.
func (c ClientCert) Authenticate(r *http.Request) (string, error) {
	p, _, err := c.AuthenticateRights(r)
	return p, err
}

// AuthenticateRights implements a2ahttp.RightsAuthenticator: Authenticate,
// with the principal's Rights.
func (c ClientCert) AuthenticateRights(r *http.Request) (string, a2a.Rights, error) {
	if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 || len(r.TLS.VerifiedChains[0]) == 0 {
		return "", nil, nil
	}
	p := CertPrincipal(r.TLS.VerifiedChains[0][0])
	if p == "" {
		return "", nil, errors.New("the client certificate names no one (no subject alternative name or common name)")
	}
	return p, slices.Clone(c.Rights[p]), nil
}

// CertPrincipal is the principal a certificate names (see ClientCert).
func CertPrincipal(c *x509.Certificate) string {
	switch {
	case len(c.URIs) > 0:
		return c.URIs[0].String()
	case len(c.DNSNames) > 0:
		return c.DNSNames[0]
	case len(c.EmailAddresses) > 0:
		return c.EmailAddresses[0]
	}
	return c.Subject.CommonName
}

// ClientCAs reads a PEM file of CA certificates that client certificates
// must chain to.
func ClientCAs(file string) (*x509.CertPool, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("%s holds no PEM certificate", file)
	}
	return pool, nil
}

// ClientAuthMode maps "require" and "optional" to the TLS setting: a
// certificate is then always asked for and, when given, verified against
// the CAs (an untrusted or expired one fails the handshake); with
// "require" a connection without one fails too.
func ClientAuthMode(mode string) (tls.ClientAuthType, error) {
	switch mode {
	case "require":
		return tls.RequireAndVerifyClientCert, nil
	case "optional":
		return tls.VerifyClientCertIfGiven, nil
	}
	return 0, fmt.Errorf("client auth %q: want require or optional", mode)
}
