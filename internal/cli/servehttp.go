package cli

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"parley.dev/parley/internal/sse"
)

// httpFront is the HTTP side of `parley serve`: the server on --addr, which
// speaks every binding, and with --grpc-addr a second one that speaks gRPC
// alone. Both share one base context, so that cancelling it ends the
// requests still open (streams) while their tasks go on; the shutdown
// cancels it last (stopAccepting, then finish).
type httpFront struct {
	main       *http.Server
	grpcOnly   *http.Server // nil without --grpc-addr
	served     chan error   // what a Serve call returned, when one returns
	cancelReqs context.CancelFunc
	stopReload func()       // stops reloading the TLS certificate on SIGHUP
	parking    *sse.Parking // the parked streams, which the servers do not track (nil: none)
}

// startHTTP serves h on ln and, when gln is not nil, grpcOnly (the gRPC
// binding alone) on gln; over TLS when certs is not nil. keepAlive is the
// HTTP/2 ping interval (0: no pings).
func startHTTP(h, grpcOnly http.Handler, ln, gln net.Listener, certs *certReloader, keepAlive, bodyTimeout time.Duration, log *slog.Logger) *httpFront {
	reqCtx, cancel := context.WithCancel(context.Background())
	f := &httpFront{served: make(chan error, 2), cancelReqs: cancel, stopReload: func() {}}
	f.main = newHTTPServer(reqCtx, h, keepAlive, bodyTimeout, certs, log)
	if certs != nil {
		f.stopReload = certs.reloadOnSIGHUP()
	}
	go func() { f.served <- serveOn(f.main, ln) }()
	if gln != nil {
		f.grpcOnly = newHTTPServer(reqCtx, grpcOnly, keepAlive, bodyTimeout, certs, log)
		go func() { f.served <- serveOn(f.grpcOnly, gln) }()
	}
	return f
}

// newHTTPServer returns the server of one listener: HTTP/1.1 and HTTP/2,
// over TLS with the certificate of certs when it is not nil, else with
// cleartext HTTP/2 (h2c) as well.
func newHTTPServer(reqCtx context.Context, h http.Handler, keepAlive, bodyTimeout time.Duration, certs *certReloader, log *slog.Logger) *http.Server {
	const headerTimeout = 10 * time.Second
	hs := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: headerTimeout,
		IdleTimeout:       2 * time.Minute,
		BaseContext:       func(net.Listener) context.Context { return reqCtx },
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	if bodyTimeout > 0 {
		// The server bounds the whole request (headers and body) by
		// --body-timeout itself, at no extra cost per request; a2ahttp then
		// sets no deadline of its own.
		hs.ReadTimeout = bodyTimeout
	}
	http2Server(hs, keepAlive)
	if certs != nil {
		hs.TLSConfig = certs.tlsConfig()
		hs.Protocols.SetUnencryptedHTTP2(false)
	}
	return hs
}

// stopAccepting starts the graceful shutdown of both servers: their
// listeners close at once (no new connection; HTTP/2 clients get a
// GOAWAY), and the requests in flight go on, their contexts intact, so
// that blocking sends and streams get their answers. The returned channel
// is closed when every request the servers track has ended (parked
// streams are not theirs: see drained).
func (f *httpFront) stopAccepting(log *slog.Logger) <-chan struct{} {
	done := make(chan struct{})
	var wg sync.WaitGroup
	for _, hs := range f.servers() {
		wg.Go(func() {
			// No deadline: finish decides when to stop waiting.
			if err := hs.Shutdown(context.Background()); err != nil {
				log.Warn("http shutdown", "err", err)
			}
		})
	}
	go func() { wg.Wait(); close(done) }()
	return done
}

// finish ends the shutdown begun by stopAccepting, once the core has
// stopped: it waits up to grace for the answers to go out (the servers'
// requests, done, and the parked streams), then ends what is still open
// (streams of tasks that wait in INPUT_REQUIRED or AUTH_REQUIRED have no
// terminal event coming) and closes the remaining connections.
func (f *httpFront) finish(done <-chan struct{}, grace time.Duration) {
	deadline := time.After(grace)
	f.drained(done, deadline)
	f.cancelReqs()
	f.closeParking()
	select { // the streams just ended write their last chunk
	case <-done:
	case <-time.After(endGrace):
	}
	for _, hs := range f.servers() {
		hs.Close()
	}
}

// endGrace is how long finish lets the streams it ended close cleanly.
const endGrace = 200 * time.Millisecond

// drained waits until the servers' requests have ended (done) and no
// parked stream is left, or until deadline.
func (f *httpFront) drained(done <-chan struct{}, deadline <-chan time.Time) {
	select {
	case <-done:
	case <-deadline:
		return
	}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for f.parking != nil && f.parking.Streams() > 0 {
		select {
		case <-tick.C:
		case <-deadline:
			return
		}
	}
}

// servers returns the HTTP servers started: the main one, and the gRPC
// one when there is one.
func (f *httpFront) servers() []*http.Server {
	if f.grpcOnly == nil {
		return []*http.Server{f.main}
	}
	return []*http.Server{f.main, f.grpcOnly}
}

// close releases what startHTTP started besides the servers themselves:
// the certificate reloader and the requests' base context.
func (f *httpFront) close() {
	f.stopReload()
	f.cancelReqs()
	f.closeParking()
}

// closeParking ends the parked streams and waits for them.
func (f *httpFront) closeParking() {
	if f.parking != nil {
		f.parking.Close()
	}
}

// http2Server lets srv speak HTTP/1.1 and cleartext HTTP/2 (h2c with prior
// knowledge, as gRPC clients use it; HTTP/2 over TLS too, when served with
// TLS), and makes it ping an HTTP/2 connection that has been silent for
// keepAlive (0: no pings), closing it when the ping is not answered.
func http2Server(srv *http.Server, keepAlive time.Duration) {
	srv.Protocols = new(http.Protocols)
	srv.Protocols.SetHTTP1(true)
	srv.Protocols.SetHTTP2(true)
	srv.Protocols.SetUnencryptedHTTP2(true)
	// gRPC clients put every call on one connection, and subscriptions
	// stay open: allow more concurrent streams than the default 100.
	srv.HTTP2 = &http.HTTP2Config{MaxConcurrentStreams: 1000}
	if keepAlive > 0 {
		srv.HTTP2.SendPingTimeout = keepAlive
		srv.HTTP2.PingTimeout = max(keepAlive, 15*time.Second)
	}
}

// serveOn serves srv on ln, over TLS when srv has a TLS config.
func serveOn(srv *http.Server, ln net.Listener) error {
	if srv.TLSConfig != nil {
		return srv.ServeTLS(ln, "", "") // the certificate comes from TLSConfig.GetCertificate
	}
	return srv.Serve(ln)
}
