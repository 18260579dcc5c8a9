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
	Answers        map[string]int `json:"answers"`     // status lines the stalled uploads got
	Connections    int64          `json:"connections"` // slow-reader streams opened
}

// attacker runs the hostile connections until stopped.
type attacker struct {
	ep         *endpoint
	addr       string
	mu         sync.Mutex
	answers    map[string]int
	reconnects atomic.Int64 // slow-reader streams opened
	wg         sync.WaitGroup
}

// startAttack starts n stalled uploads and m slow readers against ep.
func startAttack(ctx context.Context, ep *endpoint, uploads, readers int) *attacker {
	a := &attacker{ep: ep, addr: ep.addr, answers: map[string]int{}}
	for range uploads {
		a.wg.Go(func() { a.loop(ctx, a.stalledUpload) })
	}
	for range readers {
		a.wg.Go(func() { a.loop(ctx, a.slowReader) })
	}
	return a
}

// loop runs one hostile connection after another until ctx ends.
func (a *attacker) loop(ctx context.Context, one func(context.Context, net.Conn)) {
	for ctx.Err() == nil {
		c, err := net.DialTimeout("tcp", a.addr, 5*time.Second)
		if err != nil {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		stop := context.AfterFunc(ctx, func() { c.Close() })
		one(ctx, c)
		stop()
		c.Close()
	}
}

// stalledUpload declares a 9 MiB body, sends 1 MiB, then trickles.
func (a *attacker) stalledUpload(ctx context.Context, c net.Conn) {
	const declared, burst = 9 << 20, 1 << 20
	path, ctype := a.ep.base+"/message:send", "application/a2a+json"
	if a.ep.rpc {
		path, ctype = a.ep.rpcPath, "application/json"
	}
	head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: %s\r\nContent-Length: %d\r\nA2A-Version: 1.0\r\n\r\n",
		path, a.ep.host, ctype, declared)
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
	chunk := []byte(strings.Repeat("x", 64<<10))
	for sent := 0; sent < burst; sent += len(chunk) {
		if _, err := c.Write(chunk); err != nil {
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
			c.Write([]byte("x"))
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
func (a *attacker) stop(uploads, readers int) *Attack {
	a.wg.Wait()
	return &Attack{StalledUploads: uploads, SlowReaders: readers, Answers: a.answers, Connections: a.reconnects.Load()}
}
