package cli_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"parley.dev/parley/internal/testkit"
)

// The drain of `parley serve` on SIGTERM, over real processes and the
// HTTP+JSON binding: a blocking send, a SendStreamingMessage and a
// SubscribeToTask, all on tasks the conformance agent is working on
// ("slow MS"), then SIGTERM.

// drainCalls are the calls open when SIGTERM comes.
type drainCalls struct {
	blocking chan blockingAnswer
	stream   *sseCall // SendStreamingMessage
	sub      *sseCall // SubscribeToTask, on the blocking send's task
}

type blockingAnswer struct {
	status int
	body   map[string]any
	err    error
}

// sseCall is one open SSE stream: its events as they come, then its end.
type sseCall struct {
	events chan map[string]any // closed when the stream ends
	err    error               // why it ended, when not cleanly; read after events is closed
}

// openDrainCalls starts the three calls on a server running the
// conformance agent, and returns once both tasks are WORKING and both
// streams have their first event.
func openDrainCalls(t *testing.T, p *proc, text string) *drainCalls {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	c := &drainCalls{blocking: make(chan blockingAnswer, 1)}
	go func() {
		req := restRequest(ctx, p, "/message:send", sendBody("drain-blocking", text))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			c.blocking <- blockingAnswer{err: err}
			return
		}
		defer resp.Body.Close()
		var m map[string]any
		err = json.NewDecoder(resp.Body).Decode(&m)
		c.blocking <- blockingAnswer{status: resp.StatusCode, body: m, err: err}
	}()
	c.stream = openSSE(t, restRequest(ctx, p, "/message:stream", sendBody("drain-stream", text)))
	first := nextEvent(t, "SendStreamingMessage", c.stream)
	if field(first, "task", "id") == nil {
		t.Fatalf("SendStreamingMessage: first event %v, want the task", first)
	}
	// The blocking send's task: the WORKING one that is not the stream's.
	var blockingID string
	for deadline := time.Now().Add(15 * time.Second); blockingID == ""; {
		for _, task := range listTasks(t, p) {
			if task["id"] != field(first, "task", "id") && field(task, "status", "state") == "TASK_STATE_WORKING" {
				blockingID, _ = task["id"].(string)
			}
		}
		if blockingID == "" {
			if time.Now().After(deadline) {
				t.Fatal("the blocking send's task is not WORKING")
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	sub := restRequest(ctx, p, "/tasks/"+blockingID+":subscribe", "")
	c.sub = openSSE(t, sub)
	nextEvent(t, "SubscribeToTask", c.sub) // the snapshot
	return c
}

// restRequest is an HTTP+JSON POST of body (none when "") to path.
func restRequest(ctx context.Context, p *proc, path, body string) *http.Request {
	req, _ := http.NewRequestWithContext(ctx, "POST", "http://"+p.addr+path, strings.NewReader(body))
	req.Header.Set("A2A-Version", "1.0")
	req.Header.Set("Content-Type", "application/a2a+json")
	return req
}

func sendBody(messageID, text string) string {
	return fmt.Sprintf(`{"message":{"messageId":%q,"role":"ROLE_USER","parts":[{"text":%q}]}}`, messageID, text)
}

// listTasks returns the tasks ListTasks shows.
func listTasks(t *testing.T, p *proc) []map[string]any {
	t.Helper()
	var out []map[string]any
	tasks, _ := p.getJSON(t, "/tasks")["tasks"].([]any)
	for _, task := range tasks {
		if m, ok := task.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// openSSE sends req and reads its SSE events on a goroutine.
func openSSE(t *testing.T, req *http.Request) *sseCall {
	t.Helper()
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", req.URL.Path, err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		t.Fatalf("%s: HTTP %d", req.URL.Path, resp.StatusCode)
	}
	c := &sseCall{events: make(chan map[string]any, 64)}
	go func() {
		defer close(c.events)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data:")
			if !ok {
				continue
			}
			var ev map[string]any
			if err := json.Unmarshal([]byte(strings.TrimSpace(data)), &ev); err != nil {
				c.err = fmt.Errorf("event %q: %v", data, err)
				return
			}
			c.events <- ev
		}
		c.err = sc.Err()
	}()
	return c
}

// nextEvent returns the stream's next event.
func nextEvent(t *testing.T, what string, c *sseCall) map[string]any {
	t.Helper()
	select {
	case ev, ok := <-c.events:
		if !ok {
			t.Fatalf("%s: the stream ended (%v) before its first event", what, c.err)
		}
		return ev
	case <-time.After(15 * time.Second):
		t.Fatalf("%s: no event", what)
	}
	return nil
}

// lastEvent waits for the stream to end and returns its last event.
func lastEvent(t *testing.T, what string, c *sseCall) map[string]any {
	t.Helper()
	var last map[string]any
	timeout := time.After(30 * time.Second)
	for {
		select {
		case ev, ok := <-c.events:
			if !ok {
				if c.err != nil {
					t.Errorf("%s: the stream broke: %v", what, c.err)
				}
				return last
			}
			last = ev
		case <-timeout:
			t.Fatalf("%s: the stream did not end", what)
		}
	}
}

// wantTerminalStatus checks that a stream's last event is a status update
// in state, whose message contains text ("" for any).
func wantTerminalStatus(t *testing.T, what string, ev map[string]any, state, text string) {
	t.Helper()
	got, _ := field(ev, "statusUpdate", "status", "state").(string)
	msg := fmt.Sprint(field(ev, "statusUpdate", "status", "message", "parts"))
	if got != state || !strings.Contains(msg, text) {
		t.Errorf("%s: last event %v, want a status update %s saying %q", what, ev, state, text)
	}
}

// blockingResult waits for the blocking send's answer and checks it is a
// task in state whose status message contains text ("" for any).
func blockingResult(t *testing.T, c *drainCalls, state, text string) {
	t.Helper()
	select {
	case a := <-c.blocking:
		got, _ := field(a.body, "task", "status", "state").(string)
		msg := fmt.Sprint(field(a.body, "task", "status", "message", "parts"))
		if a.err != nil || a.status != http.StatusOK || got != state || !strings.Contains(msg, text) {
			t.Errorf("blocking send: HTTP %d %v (%v), want 200 with a task %s saying %q", a.status, a.body, a.err, state, text)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the blocking send got no answer")
	}
}

// exitedWithin waits for the process to exit, at most limit after since,
// and checks it exited with status 0.
func exitedWithin(t *testing.T, p *proc, since time.Time, limit time.Duration) {
	t.Helper()
	select {
	case <-p.Exited():
	case <-time.After(time.Until(since.Add(limit)) + 10*time.Second):
		t.Fatalf("no exit %v after SIGTERM\n%s", limit+10*time.Second, p.Stderr())
	}
	took := time.Since(since)
	t.Logf("exited %v after SIGTERM", took.Round(time.Millisecond))
	if took > limit {
		t.Errorf("the process exited %v after SIGTERM, want within %v\n%s", took, limit, p.Stderr())
	}
	if err := p.Err(); err != nil {
		t.Errorf("exit after SIGTERM: %v\n%s", err, p.Stderr())
	}
}

// probe GETs /readyz at addr and returns the status, or 0 with the error
// when no connection could be made.
func probe(addr string) (int, error) {
	// A connection of its own each time: a pooled one may have been
	// closed by the shutdown, which is not what is asked.
	c := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Get("http://" + addr + "/readyz")
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// TestServeShutdownDrains: on SIGTERM with --shutdown-timeout 5s, a
// blocking send, a SendStreamingMessage and a SubscribeToTask on tasks
// still running (slow 1500) all end normally: the task COMPLETED, both
// streams with their COMPLETED status. During the drain /readyz answers
// 503 (on --metrics-addr, which stays up until the process exits) and
// --addr stops taking connections (refused). The process exits 0, well
// within the timeout.
func TestServeShutdownDrains(t *testing.T) {
	t.Parallel()
	metrics := testkit.FreeAddr(t)
	p := serve(t, "--agent", "conformance", "--store", "memory", "--shutdown-timeout", "5s", "--metrics-addr", metrics)
	if code, err := probe(metrics); code != http.StatusOK {
		t.Fatalf("/readyz before SIGTERM: %d %v, want 200", code, err)
	}
	c := openDrainCalls(t, p, "slow 1500")
	sent := time.Now()
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}

	// Readiness turns off first, while the tasks are still running (they
	// have more than a second to go): wait for the 503.
	var notReady bool
	for deadline := time.Now().Add(time.Second); !notReady && time.Now().Before(deadline); {
		code, err := probe(metrics)
		switch {
		case code == http.StatusServiceUnavailable:
			notReady = true
		case code == http.StatusOK:
			time.Sleep(5 * time.Millisecond) // the signal is on its way
		default:
			t.Fatalf("/readyz on --metrics-addr during the drain: %d %v, want 503", code, err)
		}
	}
	if !notReady {
		t.Fatal("/readyz on --metrics-addr did not answer 503 within a second of SIGTERM")
	}
	// Then --addr takes no new connection; the open calls are still on.
	var refused bool
	for deadline := time.Now().Add(time.Second); !refused && time.Now().Before(deadline); {
		code, err := probe(p.addr)
		switch {
		case err != nil && errors.Is(err, syscall.ECONNREFUSED):
			refused = true
		case code == http.StatusServiceUnavailable:
			time.Sleep(5 * time.Millisecond) // accepted just before the listener closed
		default:
			t.Fatalf("/readyz on --addr during the drain: %d %v, want 503 or a refused connection", code, err)
		}
	}
	if !refused {
		t.Error("--addr still took connections a second after SIGTERM")
	}
	select {
	case <-p.Exited():
		t.Fatal("the process exited before its tasks finished")
	default:
	}

	blockingResult(t, c, "TASK_STATE_COMPLETED", "")
	wantTerminalStatus(t, "SendStreamingMessage", lastEvent(t, "SendStreamingMessage", c.stream), "TASK_STATE_COMPLETED", "")
	wantTerminalStatus(t, "SubscribeToTask", lastEvent(t, "SubscribeToTask", c.sub), "TASK_STATE_COMPLETED", "")
	exitedWithin(t, p, sent, 5*time.Second)
	contains(t, "serve log", p.Stderr(), "drained: no task left running")
}

// TestServeShutdownTimeout: on SIGTERM with --shutdown-timeout 1s, tasks
// that would run a minute (slow 60000) are stopped when the second is up:
// the blocking send gets its task FAILED with a status message saying the
// server is shutting down, SendStreamingMessage and SubscribeToTask end
// with that FAILED status, and the process exits 0 within the timeout
// plus two seconds.
func TestServeShutdownTimeout(t *testing.T) {
	t.Parallel()
	p := serve(t, "--agent", "conformance", "--store", "memory", "--shutdown-timeout", "1s")
	c := openDrainCalls(t, p, "slow 60000")
	sent := time.Now()
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	const why = "server shutting down"
	blockingResult(t, c, "TASK_STATE_FAILED", why)
	wantTerminalStatus(t, "SendStreamingMessage", lastEvent(t, "SendStreamingMessage", c.stream), "TASK_STATE_FAILED", why)
	wantTerminalStatus(t, "SubscribeToTask", lastEvent(t, "SubscribeToTask", c.sub), "TASK_STATE_FAILED", why)
	exitedWithin(t, p, sent, time.Second+2*time.Second)
	contains(t, "serve log", p.Stderr(), "shutdown timeout reached")
}

// TestServeShutdownSecondSignal: a second SIGTERM or SIGINT during a drain
// of a minute ends it at once: the tasks still running (slow 60000) end
// FAILED as past the timeout (the blocking send gets its task FAILED,
// both streams end with that status), and the process exits 0 within two
// seconds of the second signal.
func TestServeShutdownSecondSignal(t *testing.T) {
	t.Parallel()
	for _, second := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(second.String(), func(t *testing.T) {
			t.Parallel()
			p := serve(t, "--agent", "conformance", "--store", "memory", "--shutdown-timeout", "60s")
			c := openDrainCalls(t, p, "slow 60000")
			if err := p.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			for deadline := time.Now().Add(10 * time.Second); !strings.Contains(p.Stderr(), "shutting down: draining"); {
				if time.Now().After(deadline) {
					t.Fatalf("no drain after SIGTERM\n%s", p.Stderr())
				}
				time.Sleep(10 * time.Millisecond)
			}
			select {
			case <-p.Exited():
				t.Fatal("the process exited before the second signal, with tasks running")
			case <-time.After(300 * time.Millisecond): // the drain is under way
			}
			sent := time.Now()
			if err := p.Signal(second); err != nil {
				t.Fatal(err)
			}
			const why = "server shutting down"
			blockingResult(t, c, "TASK_STATE_FAILED", why)
			wantTerminalStatus(t, "SendStreamingMessage", lastEvent(t, "SendStreamingMessage", c.stream), "TASK_STATE_FAILED", why)
			wantTerminalStatus(t, "SubscribeToTask", lastEvent(t, "SubscribeToTask", c.sub), "TASK_STATE_FAILED", why)
			exitedWithin(t, p, sent, 2*time.Second)
			contains(t, "serve log", p.Stderr(), "second signal during the drain")
			contains(t, "serve log", p.Stderr(), "shutdown cut short")
		})
	}
}
