package cli_test

import (
	"context"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/pgtest"
)

// outage is a TCP proxy to a target that can be taken down (every
// connection cut, new ones refused: the port is closed) and brought back
// on the same port, as a database server that stops and restarts; or
// silenced (cut): the bytes of every connection, in both directions, are
// read and dropped and nothing is closed, as when the network between
// drops packets (a new connection is accepted, and hears nothing either).
type outage struct {
	addr, target string
	cut          atomic.Bool
	mu           sync.Mutex
	ln           net.Listener
	conns        map[net.Conn]struct{}
}

func startOutage(t *testing.T, target string) *outage {
	t.Helper()
	o := &outage{target: target, conns: map[net.Conn]struct{}{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o.addr = ln.Addr().String()
	o.serve(ln)
	t.Cleanup(o.down)
	return o
}

func (o *outage) serve(ln net.Listener) {
	o.mu.Lock()
	o.ln = ln
	o.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", o.target)
			if err != nil {
				c.Close()
				continue
			}
			o.mu.Lock()
			o.conns[c], o.conns[up] = struct{}{}, struct{}{}
			o.mu.Unlock()
			go o.pipe(up, c)
			go o.pipe(c, up)
		}
	}()
}

// pipe copies src to dst, dropping what it reads while cut, and closes dst
// when src ends.
func (o *outage) pipe(dst, src net.Conn) {
	defer dst.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 && !o.cut.Load() {
			if _, err := dst.Write(buf[:n]); err != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// down closes the port and cuts every connection.
func (o *outage) down() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.ln != nil {
		o.ln.Close()
		o.ln = nil
	}
	for c := range o.conns {
		c.Close()
		delete(o.conns, c)
	}
}

// up opens the port again.
func (o *outage) up(t *testing.T) {
	t.Helper()
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		t.Fatal(err)
	}
	o.serve(ln)
}

// TestServePostgresOutage: `parley serve` on PostgreSQL whose server goes
// away (the port closed, every connection cut) for a moment and for longer
// than the replica's lease: meanwhile sends are answered UnavailableError
// on the three bindings and readiness is off; once it is back, readiness
// turns on and sends succeed, without a restart.
func TestServePostgresOutage(t *testing.T) {
	u, err := url.Parse(pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	o := startOutage(t, u.Host)
	u.Host = o.addr
	p := serve(t, "--agent", "conformance", "--store", u.String(), "--log-level", "error", "--lease", "2s")
	base := "http://" + p.addr
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	card, c := resolveClient(t, ctx, base)
	if _, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("hello")}); err != nil {
		t.Fatal(err)
	}
	for _, gone := range []time.Duration{time.Second, 5 * time.Second} { // within the lease, and past it
		o.down()
		waitReady(t, base, 503)
		for _, b := range []string{a2a.BindingJSONRPC, a2a.BindingHTTPJSON, a2a.BindingGRPC} {
			_, err := bindingClient(t, card, b).SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("hello")})
			if a2a.AsError(err).Code != a2a.CodeUnavailable {
				t.Errorf("outage of %v, %s: a send got %v, want UnavailableError", gone, b, err)
			}
		}
		time.Sleep(gone)
		o.up(t)
		waitReady(t, base, 200)
		deadline := time.Now().Add(15 * time.Second)
		for {
			resp, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("hello")})
			if err == nil && resp.GetTask().GetStatus().GetState() == a2a.TaskState_TASK_STATE_COMPLETED {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("after an outage of %v, sends still fail: %v %v", gone, resp, err)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
}
