package loadgen

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// Stuck readers, for soak runs: each asks for a large task (one made
// before the run, Config.StuckSize bytes of text echoed back) with GetTask
// over cleartext HTTP/2, with a flow-control window of one byte that it
// never opens, while its connection answers pings: the answer cannot
// leave the server. After stuckHold it tries to read on, which tells
// whether the server cut the answer (it should, at its write deadline),
// then starts over on a new connection. A refused GetTask (429) is
// counted and asked again a second later.

// stuckHold is how long a stuck reader holds its answer before it looks:
// longer than the server's default write deadline (30 s).
const stuckHold = 35 * time.Second

// makeStuckTask creates the task the stuck readers ask for, as
// Config.StalledToken's caller, and returns its id.
func (a *attacker) makeStuckTask(ctx context.Context, size int) (string, error) {
	text := strings.Repeat("x", size)
	body := `{"message":{"messageId":"` + a.ep.msgID + `-stuck","role":"ROLE_USER","parts":[{"text":"` + text + `"}]}}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+a.ep.host+a.ep.base+"/message:send", strings.NewReader(body))
	if err != nil {
		return "", err
	}
	a.header(req.Header)
	req.Header.Set("Content-Type", "application/a2a+json")
	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "tcp", a.addr)
	}}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr, Timeout: 2 * time.Minute}).Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var answer struct {
		Task struct {
			ID string `json:"id"`
		} `json:"task"`
	}
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &answer); resp.StatusCode != http.StatusOK || err != nil || answer.Task.ID == "" {
		return "", fmt.Errorf("the stuck readers' task: HTTP %d %.200s", resp.StatusCode, b)
	}
	return answer.Task.ID, nil
}

// header sets the headers of an attacker's request.
func (a *attacker) header(h http.Header) {
	h.Set("A2A-Version", "1.0")
	if a.token != "" {
		h.Set("Authorization", "Bearer "+a.token)
	}
}

// stuckRead is one stuck GetTask of a.stuckTask on the connection c.
func (a *attacker) stuckRead(ctx context.Context, c net.Conn) {
	p := new(http.Protocols)
	p.SetUnencryptedHTTP2(true)
	tr := &http.Transport{Protocols: p, HTTP2: &http.HTTP2Config{MaxReceiveBufferPerStream: 1},
		DialContext: func(context.Context, string, string) (net.Conn, error) { return c, nil }}
	defer tr.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+a.ep.host+a.ep.base+"/tasks/"+a.stuckTask, nil)
	if err != nil {
		return
	}
	a.header(req.Header)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		a.count("stuck: " + errKindOf(err) + " (" + lastPart(err.Error()) + ")")
		pause(ctx, time.Second)
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		a.count("stuck: " + resp.Status)
		pause(ctx, time.Second)
		return
	}
	if !pause(ctx, stuckHold) {
		return
	}
	// Two bytes: the first may be the one the window let through.
	read := make(chan error, 1)
	go func() { _, err := io.ReadFull(resp.Body, make([]byte, 2)); read <- err }()
	select {
	case err := <-read:
		if err != nil {
			a.count("stuck: cut")
		} else {
			a.count("stuck: still open")
		}
	case <-time.After(5 * time.Second):
		a.count("stuck: still open")
	case <-ctx.Done():
	}
}

// count adds one to what the hostile connections met.
func (a *attacker) count(what string) {
	a.mu.Lock()
	a.answers[what]++
	a.mu.Unlock()
}

// errKindOf names a failed request's error briefly.
func errKindOf(err error) string {
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return "timeout"
	}
	return "error"
}

// lastPart is what follows the last ": " of an error's text: its cause.
func lastPart(s string) string {
	if i := strings.LastIndex(s, ": "); i >= 0 {
		return s[i+2:]
	}
	return s
}

// pause waits d; false when ctx ended first.
func pause(ctx context.Context, d time.Duration) bool {
	return sleep(d, ctx.Done())
}
