package cli

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"
)

// certReloader holds the server's TLS certificate, read from --tls-cert and
// --tls-key at start-up and again on SIGHUP; connections already open keep
// the certificate they were made with.
type certReloader struct {
	certFile, keyFile string
	log               *slog.Logger
	cert              atomic.Pointer[tls.Certificate]
	configure         func(*tls.Config) // adds client certificate settings; may be nil
}

// load reads the key pair; on failure the current certificate stays.
func (c *certReloader) load() error {
	cert, err := tls.LoadX509KeyPair(c.certFile, c.keyFile)
	if err != nil {
		return fmt.Errorf("TLS certificate (--tls-cert %s, --tls-key %s): %w", c.certFile, c.keyFile, err)
	}
	c.cert.Store(&cert)
	if leaf := cert.Leaf; leaf != nil {
		c.log.Info("TLS certificate", "subject", leaf.Subject.String(), "dns", leaf.DNSNames, "ips", leaf.IPAddresses, "notAfter", leaf.NotAfter)
		if time.Now().After(leaf.NotAfter) {
			c.log.Warn("the TLS certificate has expired", "notAfter", leaf.NotAfter)
		}
	}
	return nil
}

// tlsConfig is a server TLS config that serves the current certificate.
// ALPN offers h2 and http/1.1 (http.Server.ServeTLS adds them from the
// server's Protocols). TLS 1.2 is the oldest version accepted (the spec asks
// that SSLv3, TLS 1.0 and 1.1 be off); TLS 1.3 is chosen whenever the client
// has it.
func (c *certReloader) tlsConfig() *tls.Config {
	cfg := &tls.Config{
		MinVersion: tls.VersionTLS12,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			return c.cert.Load(), nil
		},
	}
	if c.configure != nil {
		c.configure(cfg)
	}
	return cfg
}

// reloadOnSIGHUP reloads the certificate each time the process gets SIGHUP,
// until the returned function is called.
func (c *certReloader) reloadOnSIGHUP() (stop func()) {
	return onSIGHUP(func() {
		if err := c.load(); err != nil {
			c.log.Error("TLS certificate not reloaded; the previous one stays in use", "err", err)
		} else {
			c.log.Info("TLS certificate reloaded")
		}
	})
}

// onSIGHUP calls reload each time the process gets SIGHUP, until the
// returned function is called.
func onSIGHUP(reload func()) (stop func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-ch:
				reload()
			case <-done:
				return
			}
		}
	}()
	return func() { signal.Stop(ch); close(done) }
}
