package loadgen

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Hostile traffic for soak runs: while the load runs, StalledUploads
// connections each declare a 9 MiB body, send the first 1 MiB at once and
// then one byte every two seconds (starting over when the server answers
// or closes), and SlowReaders connections each open a long stream and read
// it one byte every 100 ms. The server's memory and the load's latency
// show whether either can exhaust it.

// Attack counts what the hostile connections met.
type Attack struct {
	StalledUploads int            `json:"stalledUploads"`
	SlowReaders    int            `json:"slowReaders"`
	StuckReads     int            `json:"stuckReads,omitempty"`
	SlowHeaders    int            `json:"slowHeaders,omitempty"`
	Answers        map[string]int `json:"answers"`     // status lines the stalled uploads got
	Connections    int64          `json:"connections"` // slow-reader streams opened
}

// attacker runs the hostile connections until stopped.
type attacker struct {
	ep         *endpoint
	addr       string
	over       *stallTarget // the protocol stalled uploads aim at (nil: the run's binding over HTTP/1.1)
	token      string       // their bearer token ("": anonymous)
	stuckTask  string       // the task the stuck readers ask for
	gate       *dialGate    // the run's, pacing attempts after errors
	mu         sync.Mutex
	answers    map[string]int
	reconnects atomic.Int64 // slow-reader streams opened
	wg         sync.WaitGroup
}

// startAttack starts the stalled uploads, slow readers, stuck readers and
// slow headers cfg asks for against ep (cfg.StalledOver was checked by
// Run).
func startAttack(ctx context.Context, ep *endpoint, cfg *Config, gate *dialGate) (*attacker, error) {
	over, _ := parseStallTarget(cfg.StalledOver)
	a := &attacker{ep: ep, addr: ep.addr, over: over, token: cfg.StalledToken, gate: gate, answers: map[string]int{}}
	if cfg.StuckReads > 0 {
		var err error
		if a.stuckTask, err = a.makeStuckTask(ctx, cfg.StuckSize); err != nil {
			return nil, err
		}
	}
	upload := a.stalledUpload
	if over != nil {
		upload = a.stalledH2Upload
	}
	for range cfg.StalledUploads {
		a.wg.Go(func() { a.loop(ctx, upload) })
	}
	for range cfg.SlowReaders {
		a.wg.Go(func() { a.loop(ctx, a.slowReader) })
	}
	for range cfg.StuckReads {
		a.wg.Go(func() { a.loop(ctx, a.stuckRead) })
	}
	if cfg.SlowHeaders > 0 {
		a.startSlowHeaders(ctx, cfg.SlowHeaders, cfg.SlowHeaderSources)
	}
	return a, nil
}

// loop runs one hostile connection after another until ctx ends; after
// a failed dial the next waits (dialGate.dial).
func (a *attacker) loop(ctx context.Context, one func(context.Context, net.Conn)) {
	var pause time.Duration
	for ctx.Err() == nil {
		c, err := a.gate.dial(a.addr, &pause, time.Now().Add(dialTimeout), ctx.Done())
		if err != nil {
			continue
		}
		pause = 0
		stop := context.AfterFunc(ctx, func() { c.Close() })
		one(ctx, c)
		stop()
		c.Close()
	}
}

// stalledUpload declares a 9 MiB body, sends 1 MiB, then trickles.
func (a *attacker) stalledUpload(ctx context.Context, c net.Conn) {
	const declared = 9 << 20
	path, ctype := a.ep.base+"/message:send", "application/a2a+json"
	if a.ep.rpc {
		path, ctype = a.ep.rpcPath, "application/json"
	}
	auth := ""
	if a.token != "" {
		auth = "Authorization: Bearer " + a.token + "\r\n"
	}
	head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: %s\r\nContent-Length: %d\r\nA2A-Version: 1.0\r\n%s\r\n",
		path, a.ep.host, ctype, declared, auth)
	if _, err := io.WriteString(c, head); err != nil {
		return
	}
	answered := make(chan string, 1)
	go func() {
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			answered <- "closed"
			return
		}
		resp.Body.Close()
		answered <- resp.Status
	}()
	a.trickle(ctx, c, answered)
}

// trickle sends the first MiB of a stalled upload to w, then a byte every
// two seconds until the server answers (or ctx ends), and counts the
// answer.
func (a *attacker) trickle(ctx context.Context, w io.Writer, answered <-chan string) {
	const burst = 1 << 20
	chunk := []byte(strings.Repeat("x", 64<<10))
	for sent := 0; sent < burst; sent += len(chunk) {
		if _, err := w.Write(chunk); err != nil {
			break
		}
	}
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	for {
		select {
		case st := <-answered:
			a.mu.Lock()
			a.answers[st]++
			a.mu.Unlock()
			// A staller wants to hold the server's resources, not to
			// flood it: it pauses before trying again.
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
			return
		case <-ctx.Done():
			return
		case <-tick.C:
			w.Write([]byte("x"))
		}
	}
}

// slowReader opens a stream of 1,000 chunks 20 ms apart and reads it one
// byte every 100 ms.
func (a *attacker) slowReader(ctx context.Context, c net.Conn) {
	n := a.reconnects.Add(1)
	msg := strings.Replace(a.ep.message("stream 1000 every 20"), "-0000-", fmt.Sprintf("-s%03x-", n%4096), 1)
	req, _ := a.ep.send("SendStreamingMessage", "/message:stream", "text/event-stream", msg)
	if _, err := c.Write(req); err != nil {
		return
	}
	one := make([]byte, 1)
	for ctx.Err() == nil {
		c.SetReadDeadline(time.Now().Add(30 * time.Second))
		if _, err := c.Read(one); err != nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// stop waits for the hostile connections to end (ctx must be done) and
// reports them.
func (a *attacker) stop(cfg *Config) *Attack {
	a.wg.Wait()
	return &Attack{StalledUploads: cfg.StalledUploads, SlowReaders: cfg.SlowReaders, StuckReads: cfg.StuckReads,
		SlowHeaders: cfg.SlowHeaders, Answers: a.answers, Connections: a.reconnects.Load()}
}

// stallTarget is the protocol a stalled upload over HTTP/2 aims at: the
// path of its SendMessage and the start of a body the server must read
// whole before it can decode it.
type stallTarget struct {
	version, binding string
}

// parseStallTarget reads Config.StalledOver; nil for "".
func parseStallTarget(s string) (*stallTarget, error) {
	if s == "" {
		return nil, nil
	}
	v, b, _ := strings.Cut(strings.ToLower(s), "/")
	if (v != "1.0" && v != "0.3") || (b != BindingJSONRPC && b != BindingREST && b != "grpc") {
		return nil, fmt.Errorf("stalled uploads over %q: want VERSION/BINDING, VERSION 1.0 or 0.3, BINDING jsonrpc, rest or grpc", s)
	}
	return &stallTarget{version: v, binding: b}, nil
}

// request is the head of a stalled SendMessage on ep that declares size
// bytes, and the first bytes of its body.
func (st *stallTarget) request(ep *endpoint, size int) (path, ctype string, head []byte) {
	v03 := st.version == "0.3"
	switch st.binding {
	case BindingJSONRPC:
		method := "SendMessage"
		if v03 {
			method = "message/send"
		}
		return ep.rpcPath, "application/json", []byte(`{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{"message":`)
	case BindingREST:
		if v03 {
			return ep.base + "/v1/message:send", "application/json", []byte(`{"message":`)
		}
		return ep.base + "/message:send", "application/a2a+json", []byte(`{"message":`)
	}
	service := "lf.a2a.v1.A2AService"
	if v03 {
		service = "a2a.v1.A2AService"
	}
	n := size - 5 // a gRPC message frame: flag, then its length
	return "/" + service + "/SendMessage", "application/grpc", []byte{0, byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}
}

// stalledH2Upload is stalledUpload aimed at a.over, over HTTP/2 without
// TLS on the connection c.
func (a *attacker) stalledH2Upload(ctx context.Context, c net.Conn) {
	const declared = 9 << 20
	path, ctype, head := a.over.request(a.ep, declared)
	p := new(http.Protocols)
	p.SetUnencryptedHTTP2(true)
	tr := &http.Transport{Protocols: p, DialContext: func(context.Context, string, string) (net.Conn, error) { return c, nil }}
	defer tr.CloseIdleConnections()
	pr, pw := io.Pipe()
	defer pw.Close()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+a.ep.host+path, pr)
	if err != nil {
		return
	}
	if a.over.binding != "grpc" {
		req.ContentLength = declared
	}
	req.Header.Set("Content-Type", ctype)
	if a.over.version == "1.0" {
		req.Header.Set("A2A-Version", "1.0")
	}
	if a.token != "" {
		req.Header.Set("Authorization", "Bearer "+a.token)
	}
	answered := make(chan string, 1)
	go func() {
		resp, err := tr.RoundTrip(req)
		if err != nil {
			answered <- "closed"
			pr.CloseWithError(err)
			return
		}
		io.Copy(io.Discard, resp.Body) // gRPC's status is in the trailers
		resp.Body.Close()
		st := resp.Status
		if g := resp.Header.Get("Grpc-Status") + resp.Trailer.Get("Grpc-Status"); g != "" {
			st = "grpc " + g
		}
		answered <- st
		pr.CloseWithError(io.EOF)
	}()
	if _, err := pw.Write(head); err != nil {
		return
	}
	a.trickle(ctx, pw, answered)
}
