package loadgen

import (
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"
)

// Slow headers, for soak runs: Config.SlowHeaders connections spread over
// Config.SlowHeaderSources loopback addresses (127.0.0.2, 127.0.0.3, …:
// Linux routes all of 127/8 to the loopback interface) each send the start
// of a request and never finish its headers, opened again whenever the
// server closes them; beside them a control client from 127.0.0.254
// fetches the agent card on a new connection every 100 ms. Its answers are
// counted as "control: served" and "control: refused": a server whose
// connection bounds are fair refuses it none.

// slowHeader holds one connection from src that never finishes its
// headers, until the server closes it.
func (a *attacker) slowHeader(ctx context.Context, src string) {
	for ctx.Err() == nil {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 5 * time.Second}
		c, err := d.DialContext(ctx, "tcp", a.addr)
		if err != nil {
			pause(ctx, 100*time.Millisecond)
			continue
		}
		stop := context.AfterFunc(ctx, func() { c.Close() })
		if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: "+a.ep.host+"\r\n"); err == nil {
			io.Copy(io.Discard, c) // until the server answers or closes it
		}
		stop()
		c.Close()
		pause(ctx, 100*time.Millisecond)
	}
}

// control fetches the card from 127.0.0.254 on a new connection every
// 100 ms and counts the answers.
func (a *attacker) control(ctx context.Context) {
	tr := &http.Transport{DisableKeepAlives: true,
		DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.254")}, Timeout: 5 * time.Second}).DialContext}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	for pause(ctx, 100*time.Millisecond) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+a.addr+"/.well-known/agent-card.json", nil)
		if err != nil {
			return
		}
		req.Host = a.ep.host
		resp, err := hc.Do(req)
		switch {
		case ctx.Err() != nil:
			return
		case err == nil && resp.StatusCode == http.StatusOK:
			a.count("control: served")
		default:
			a.count("control: refused")
		}
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
}

// startSlowHeaders starts n slow-header connections over sources
// addresses, and the control client.
func (a *attacker) startSlowHeaders(ctx context.Context, n, sources int) {
	for i := range n {
		src := "127.0.0." + strconv.Itoa(2+i%max(sources, 1))
		a.wg.Go(func() { a.slowHeader(ctx, src) })
	}
	a.wg.Go(func() { a.control(ctx) })
}
