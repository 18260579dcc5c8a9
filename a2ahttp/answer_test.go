package a2ahttp

import (
	"context"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
	"parley.dev/parley/internal/transport"
	"parley.dev/parley/server"
)

// Answers nobody takes, tested for every entry of the protocol table over
// every wire a client may use (HTTP/1.1, cleartext HTTP/2, HTTP/2 over
// TLS), with each protocol's own client transport: a client that stops
// reading loses the answer at the write deadline, and the server gives
// back what the call held.

// bigAnswers is the size of the artifact bigAgent answers with: more than
// the test clients' HTTP/2 stream window (64 KiB) and socket buffers,
// compressed too (gRPC gzips).
const bigAnswers = 1 << 20

// incompressible is bigAnswers letters that gzip cannot shrink below
// three quarters.
var incompressible = func() string {
	const letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, bigAnswers)
	for i := range b {
		b[i] = letters[r.IntN(len(letters))]
	}
	return string(b)
}()

// bigAgent answers "idle MS" by waiting MS milliseconds between WORKING
// and a small artifact, "late MS" by waiting as long before a bigAnswers
// artifact, and any other message with a bigAnswers artifact at once.
func bigAgent() server.Agent {
	return server.AgentFunc(func(ctx context.Context, req *server.Request, em *server.Emitter) error {
		if err := em.Status(a2a.TaskState_TASK_STATE_WORKING, nil); err != nil {
			return err
		}
		text := incompressible
		cmd, ms, _ := strings.Cut(a2a.JoinText(req.Message.GetParts()), " ")
		if cmd == "idle" || cmd == "late" {
			d, _ := time.ParseDuration(ms + "ms")
			select {
			case <-time.After(d):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if cmd == "idle" {
			text = "awake"
		}
		if err := em.Artifact(a2a.TextArtifact("out", text)); err != nil {
			return err
		}
		return em.Status(a2a.TaskState_TASK_STATE_COMPLETED, nil)
	})
}

// wires are the ways a client reaches the handler.
var wires = []string{"HTTP/1.1", "h2c", "h2+TLS"}

// smallBuffers makes a socket's buffers as small as the kernel allows, so
// that an answer not read fills them at once.
func smallBuffers(c syscall.RawConn) {
	c.Control(func(fd uintptr) {
		syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
		syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_SNDBUF, 4096)
	})
}

// smallListener is a listener whose connections have small buffers.
type smallListener struct{ net.Listener }

func (l smallListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		if rc, err := tc.SyscallConn(); err == nil {
			smallBuffers(rc)
		}
	}
	return c, err
}

// wireServer serves bigAgent with every protocol on over wire, and
// returns the handler, the interfaces to reach it (a gRPC one with its
// scheme) and the http.Transport of a client. configure, if any, sets
// the http.Server up before it starts.
func wireServer(t *testing.T, wire string, opts Options, configure ...func(*http.Server)) (*Handler, []*a2a.AgentInterface, *http.Transport) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	scheme := "http://"
	if wire == "h2+TLS" {
		scheme = "https://"
	}
	base := scheme + ln.Addr().String()
	ifaces, err := Interfaces(base)
	if err != nil {
		t.Fatal(err)
	}
	ifaces[2].Url = base // with its scheme: gRPC over TLS
	h := matrixHandler(t, ifaces, &server.Options{Agent: bigAgent()}, opts)
	hs := httptest.NewUnstartedServer(h)
	hs.Listener = smallListener{ln}
	hs.Config.Protocols = new(http.Protocols)
	hs.Config.Protocols.SetHTTP1(true)
	for _, f := range configure {
		f(hs.Config)
	}
	var tr *http.Transport
	window := &http.HTTP2Config{MaxReceiveBufferPerStream: 64 << 10, MaxReceiveBufferPerConnection: 64 << 10}
	switch wire {
	case "HTTP/1.1":
		hs.Start()
		tr = &http.Transport{Protocols: new(http.Protocols)}
		tr.Protocols.SetHTTP1(true)
		tr.DialContext = (&net.Dialer{Control: func(_, _ string, c syscall.RawConn) error { smallBuffers(c); return nil }}).DialContext
	case "h2c":
		hs.Config.Protocols.SetUnencryptedHTTP2(true)
		hs.Start()
		tr = &http.Transport{Protocols: new(http.Protocols), HTTP2: window}
		tr.Protocols.SetUnencryptedHTTP2(true)
	default:
		hs.Config.Protocols.SetHTTP2(true)
		hs.EnableHTTP2 = true
		hs.StartTLS()
		tr = &http.Transport{Protocols: new(http.Protocols), HTTP2: window,
			TLSClientConfig: hs.Client().Transport.(*http.Transport).TLSClientConfig.Clone()}
		tr.Protocols.SetHTTP2(true)
	}
	t.Cleanup(hs.Close)
	return h, ifaces, tr
}

// stuckReader is a client that reads no answer until released: its round
// trips return once the test closes release, their bodies unread till
// then.
type stuckReader struct {
	next    http.RoundTripper
	release chan struct{}
}

func (s *stuckReader) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := s.next.RoundTrip(r)
	<-s.release
	return resp, err
}

// protocolTransport returns p's client transport over rt.
func protocolTransport(t *testing.T, p *protocol, ifaces []*a2a.AgentInterface, rt http.RoundTripper) transport.Transport {
	t.Helper()
	for _, f := range client.AllTransports() {
		if !strings.EqualFold(f.Binding, p.binding) || (f.Version == "") != (p.version == a2a.ProtocolVersion) {
			continue
		}
		for _, in := range ifaces {
			if in.GetProtocolBinding() == p.binding {
				h := http.Header{}
				if p.version == a2a.ProtocolVersion {
					h.Set("A2A-Version", p.version)
				}
				tr, err := f.New(in, transport.Config{HTTPClient: &http.Client{Transport: rt}, Header: h})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { tr.Close() })
				return tr
			}
		}
	}
	t.Fatalf("no client transport for %s %s", p.version, p.binding)
	return nil
}

func textMessage(text string) *a2a.SendMessageRequest {
	return &a2a.SendMessageRequest{Message: &a2a.Message{MessageId: a2a.NewID(), Role: a2a.Role_ROLE_USER,
		Parts: []*a2a.Part{{Content: &a2a.Part_Text{Text: text}}}}}
}

// inFlight is the number of callers with anything in flight.
func (h *Handler) inFlight() int {
	h.callers.mu.Lock()
	defer h.callers.mu.Unlock()
	return len(h.callers.m)
}

// awaitReleased waits until the handler holds nothing for any caller.
func awaitReleased(t *testing.T, h *Handler, what string) {
	t.Helper()
	await(t, 20*time.Second, what+": the call is still held after its answer stopped being read", func() bool { return h.inFlight() == 0 })
}

// awaitPending waits until a call is in flight.
func awaitPending(t *testing.T, h *Handler) {
	t.Helper()
	await(t, 10*time.Second, "the call never reached the handler", func() bool { return h.inFlight() > 0 })
}

// await waits up to wait for cond, and fails with why when it does not
// come.
func await(t *testing.T, wait time.Duration, why string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(wait); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s (waited %v)", why, wait)
		}
	}
}

// TestPipelineCutsAnswersNotTaken: a unary answer and a stream event that
// the client does not take within WriteTimeout are cut, on every protocol
// and wire, and the call is given back; the client then sees a failed
// call, not a whole answer.
func TestPipelineCutsAnswersNotTaken(t *testing.T) {
	for _, wire := range wires {
		t.Run(wire, func(t *testing.T) {
			h, ifaces, base := wireServer(t, wire, Options{WriteTimeout: 200 * time.Millisecond})
			forEachProtocol(t, h, func(t *testing.T, p, _ *protocol) {
				if wire == "HTTP/1.1" && p.binding == a2a.BindingGRPC {
					t.Skip("gRPC needs HTTP/2")
				}
				stuck := &stuckReader{next: base}
				tr := protocolTransport(t, p, ifaces, stuck)
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				for _, c := range cutCalls {
					stuck.release = make(chan struct{})
					type outcome struct {
						whole bool
						err   error
					}
					done := make(chan outcome, 1)
					go func() {
						whole, err := c.run(ctx, tr)
						done <- outcome{whole, err}
					}()
					awaitPending(t, h)
					awaitReleased(t, h, c.name)
					close(stuck.release)
					if o := <-done; o.whole || o.err == nil {
						t.Errorf("%s: the whole answer %v, error %v; want it cut, and an error", c.name, o.whole, o.err)
					}
				}
			})
		})
	}
}

// cutCalls are the calls whose answers TestPipelineCutsAnswersNotTaken
// leaves untaken: run reports whether the big answer arrived whole, and
// the call's error.
var cutCalls = []struct {
	name string
	run  func(ctx context.Context, tr transport.Transport) (whole bool, err error)
}{
	{"SendMessage", func(ctx context.Context, tr transport.Transport) (bool, error) {
		resp, err := tr.Call(ctx, a2a.MethodByName(a2a.MethodSendMessage), textMessage("big"))
		return err == nil && len(resp.(*a2a.SendMessageResponse).GetTask().GetArtifacts()) > 0, err
	}},
	{"SendStreamingMessage", func(ctx context.Context, tr transport.Transport) (whole bool, last error) {
		for ev, err := range tr.Stream(ctx, a2a.MethodByName(a2a.MethodSendStreamingMessage), textMessage("big")) {
			whole = whole || ev.Response.GetArtifactUpdate() != nil
			last = err
		}
		return whole, last
	}},
}

// TestIdleStreamOutlivesWriteTimeout: the write deadline runs only while
// a write waits: a stream silent for longer (no keep-alives) goes on, on
// every protocol and wire.
func TestIdleStreamOutlivesWriteTimeout(t *testing.T) {
	for _, wire := range wires {
		t.Run(wire, func(t *testing.T) {
			h, ifaces, base := wireServer(t, wire, Options{WriteTimeout: 100 * time.Millisecond, KeepAlive: -1})
			forEachProtocol(t, h, func(t *testing.T, p, _ *protocol) {
				if wire == "HTTP/1.1" && p.binding == a2a.BindingGRPC {
					t.Skip("gRPC needs HTTP/2")
				}
				tr := protocolTransport(t, p, ifaces, base)
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				var got string
				for ev, err := range tr.Stream(ctx, a2a.MethodByName(a2a.MethodSendStreamingMessage), textMessage("idle 400")) {
					if err != nil {
						t.Fatalf("stream: %v", err)
					}
					if a := ev.Response.GetArtifactUpdate(); a != nil {
						got = a2a.JoinText(a.GetArtifact().GetParts())
					}
				}
				if got != "awake" {
					t.Errorf("stream: artifact %q, want %q", got, "awake")
				}
			})
		})
	}
}

// held is what the handler counts for all callers: calls in flight and
// bytes of answers being written.
func (h *Handler) held() (calls int, answering int64) {
	h.callers.mu.Lock()
	defer h.callers.mu.Unlock()
	for _, c := range h.callers.m {
		calls, answering = calls+c.calls, answering+c.answering
	}
	return calls, answering
}

// TestCallerBoundsCountAnswersNotTaken: calls whose answers are not taken
// count against their caller until they are, on every protocol: over
// MaxCalls, or over AnswerBudget, the next call is refused with
// RateLimited; once the answers are taken, the caller may call again.
func TestCallerBoundsCountAnswersNotTaken(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opts  Options
		stuck int
	}{
		{"MaxCalls", Options{MaxCalls: 2, AnswerBudget: -1, WriteTimeout: time.Minute}, 2},
		{"AnswerBudget", Options{MaxCalls: -1, AnswerBudget: bigAnswers / 2, WriteTimeout: time.Minute}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, ifaces, base := wireServer(t, "h2c", tc.opts)
			forEachProtocol(t, h, func(t *testing.T, p, _ *protocol) {
				stuck := &stuckReader{next: base, release: make(chan struct{})}
				tr := protocolTransport(t, p, ifaces, stuck)
				free := protocolTransport(t, p, ifaces, base.Clone()) // a connection of its own: the stuck ones hold its window
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				send := a2a.MethodByName(a2a.MethodSendMessage)
				done := make(chan error, tc.stuck)
				for range tc.stuck {
					go func() {
						_, err := tr.Call(ctx, send, textMessage("big"))
						done <- err
					}()
				}
				await(t, 10*time.Second, "the stuck calls are not all in flight, their answers charged", func() bool {
					calls, answering := h.held()
					return calls == tc.stuck && (answering > 0) == (tc.opts.AnswerBudget > 0)
				})
				_, err := free.Call(ctx, send, textMessage("idle 0"))
				if a2a.AsError(err).Code != a2a.CodeRateLimited {
					t.Errorf("a call while %d answers are not taken: %v, want RateLimited", tc.stuck, err)
				}
				close(stuck.release)
				for range tc.stuck {
					if err := <-done; err != nil {
						t.Errorf("a stuck call, once read: %v", err)
					}
				}
				awaitReleased(t, h, "the answers taken")
				if _, err := free.Call(ctx, send, textMessage("idle 0")); err != nil {
					t.Errorf("a call once the answers are taken: %v", err)
				}
			})
		})
	}
}

// TestParkedStreamWriteDeadline: a SubscribeToTask stream parked off
// net/http (HTTP/1.1, silent for a while) whose client stops reading meets
// the one write deadline every answer meets, on every protocol that parks:
// the handler's (Options.WriteTimeout), or the http.Server's WriteTimeout
// when that applies instead; with neither, none: the stream waits for its
// reader past what was once Parking's own 30 s deadline, and reaches it
// whole.
func TestParkedStreamWriteDeadline(t *testing.T) {
	for _, c := range []struct {
		name     string
		opts     Options
		serverTO time.Duration
		cut      bool
	}{
		{"Options.WriteTimeout", Options{WriteTimeout: 200 * time.Millisecond}, 0, true},
		{"http.Server.WriteTimeout", Options{WriteTimeout: -1}, 200 * time.Millisecond, true},
		{"none", Options{WriteTimeout: -1}, 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if !c.cut && testing.Short() {
				t.Skip("waits 32 s for a deadline that must not come")
			}
			t.Parallel()
			parking := NewParking(0)
			c.opts.Parking, c.opts.KeepAlive = parking, -1
			h, ifaces, base := wireServer(t, "HTTP/1.1", c.opts, func(s *http.Server) { s.WriteTimeout = c.serverTO })
			t.Cleanup(parking.Close) // after the subtests, which may run in parallel; before the server's Close
			forEachProtocol(t, h, func(t *testing.T, p, _ *protocol) {
				if p.binding == a2a.BindingGRPC {
					t.Skip("gRPC needs HTTP/2, where nothing parks")
				}
				if !c.cut {
					t.Parallel() // each waits on its own stream
				}
				parkedStreamMeets(t, h, parking, p, ifaces, base, c.cut)
			})
		})
	}
}

// parkedStreamMeets subscribes, with a client that reads nothing until
// released, to a task that sends a bigAnswers artifact once the stream
// has parked, and checks that the stream is cut (cut) or, 32 s later,
// still open, then read whole.
func parkedStreamMeets(t *testing.T, h *Handler, parking *Parking, p *protocol, ifaces []*a2a.AgentInterface, base *http.Transport, cut bool) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	id := sendLate(t, ctx, p, ifaces, base)
	if cut {
		awaitReleased(t, h, "SendMessage")
	}
	stuck := &stuckReader{next: base.Clone(), release: make(chan struct{})}
	tr := protocolTransport(t, p, ifaces, stuck)
	type outcome struct {
		artifact int
		state    a2a.TaskState
		err      error
	}
	done := make(chan outcome, 1)
	go func() {
		var o outcome
		sub := &a2a.SubscribeToTaskRequest{Id: id}
		for ev, err := range tr.Stream(ctx, a2a.MethodByName(a2a.MethodSubscribeToTask), sub) {
			if err != nil {
				o.err = err
				break
			}
			if a := ev.Response.GetArtifactUpdate(); a != nil {
				o.artifact += len(a2a.JoinText(a.GetArtifact().GetParts()))
			}
			if s := ev.Response.GetStatusUpdate(); s != nil {
				o.state = s.GetStatus().GetState()
			}
		}
		done <- o
	}()
	parked := false
	if cut {
		await(t, 10*time.Second, "the stream did not park, or was not cut once parked", func() bool {
			parked = parked || parking.Streams() > 0
			return parked && h.inFlight() == 0 // the parked stream cut, its slot given back
		})
		close(stuck.release)
		return // the client resumes the stream it lost, which is not under test
	}
	await(t, 10*time.Second, "the stream did not park", func() bool { return parking.Streams() > 0 })
	select {
	case <-time.After(32 * time.Second):
	case o := <-done:
		t.Fatalf("the stream ended before its client read: %+v", o)
	}
	close(stuck.release)
	if o := <-done; o.err != nil || o.artifact != bigAnswers || o.state != a2a.TaskState_TASK_STATE_COMPLETED {
		t.Errorf("the stream, read 32 s late: %d of %d artifact bytes, last state %v, error %v", o.artifact, bigAnswers, o.state, o.err)
	}
}

// TestUnaryAnswerLength: a unary answer says its length (Content-Length),
// on both HTTP bindings, over every wire, small or large, success or
// error: the writer's watch over an HTTP/2 answer's last bytes (which
// flushes them before the handler returns, so that net/http no longer
// counts them) does not take the length away.
func TestUnaryAnswerLength(t *testing.T) {
	send := func(text string) string {
		return `{"message":{"messageId":"m-` + text + `-` + strconv.FormatInt(time.Now().UnixNano(), 36) +
			`","role":"ROLE_USER","parts":[{"text":"` + text + `"}]}}`
	}
	for _, wire := range wires {
		t.Run(wire, func(t *testing.T) {
			_, ifaces, tr := wireServer(t, wire, Options{})
			hc := &http.Client{Transport: tr}
			rpc, rest := ifaces[0].Url, ifaces[1].Url
			for _, c := range []struct {
				name, url, body string
				status          int
			}{
				{"JSON-RPC small", rpc, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":` + send("idle 0") + `}`, 200},
				{"JSON-RPC large", rpc, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":` + send("big") + `}`, 200},
				{"JSON-RPC error", rpc, `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"nope"}}`, 200},
				{"HTTP+JSON small", rest + "/message:send", send("idle 0"), 200},
				{"HTTP+JSON large", rest + "/message:send", send("big"), 200},
				{"HTTP+JSON error", rest + "/tasks/nope", "", 404},
			} {
				method := http.MethodPost
				if c.body == "" {
					method = http.MethodGet
				}
				req, err := http.NewRequest(method, c.url, strings.NewReader(c.body))
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("A2A-Version", "1.0")
				if c.body != "" {
					req.Header.Set("Content-Type", "application/json")
				}
				resp, err := hc.Do(req)
				if err != nil {
					t.Fatalf("%s: %v", c.name, err)
				}
				b, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil || resp.StatusCode != c.status {
					t.Fatalf("%s: %s %v %.200s", c.name, resp.Status, err, b)
				}
				if wantMajor := 1 + btoi(wire != "HTTP/1.1"); resp.ProtoMajor != wantMajor {
					t.Fatalf("%s: answered over %s, want HTTP/%d", c.name, resp.Proto, wantMajor)
				}
				if resp.ContentLength != int64(len(b)) { // -1 when the answer said no length
					t.Errorf("%s over %s: Content-Length %d, body %d bytes", c.name, resp.Proto, resp.ContentLength, len(b))
				}
			}
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestParkingCloseEndsStuckStream: with no write deadline, a parked
// stream whose client stopped reading does not hold the server's shutdown:
// Parking.Close closes its connection once its grace has passed.
func TestParkingCloseEndsStuckStream(t *testing.T) {
	parking := NewParking(0)
	h, ifaces, base := wireServer(t, "HTTP/1.1", Options{WriteTimeout: -1, Parking: parking, KeepAlive: -1})
	p := &h.protocols[slices.IndexFunc(h.protocols, func(p protocol) bool { return p.binding == a2a.BindingHTTPJSON })]
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	id := sendLate(t, ctx, p, ifaces, base)
	stuck := &stuckReader{next: base.Clone(), release: make(chan struct{})}
	defer close(stuck.release)
	go func() {
		sub := &a2a.SubscribeToTaskRequest{Id: id}
		for range protocolTransport(t, p, ifaces, stuck).Stream(ctx, a2a.MethodByName(a2a.MethodSubscribeToTask), sub) {
		}
	}()
	await(t, 10*time.Second, "the stream did not park", func() bool { return parking.Streams() > 0 })
	time.Sleep(time.Second) // the agent's artifact is being written, and not taken
	closed := make(chan struct{})
	start := time.Now()
	go func() {
		parking.Close()
		close(closed)
	}()
	select {
	case <-closed:
		t.Logf("Close returned in %v", time.Since(start))
	case <-time.After(10 * time.Second):
		t.Fatal("Parking.Close waits for a stream whose client stopped reading")
	}
}

// sendLate sends "late 300" (a bigAnswers artifact 300 ms on) over p, returning at
// once, and returns the task's id.
func sendLate(t *testing.T, ctx context.Context, p *protocol, ifaces []*a2a.AgentInterface, base *http.Transport) string {
	t.Helper()
	req := textMessage("late 300")
	req.Configuration = &a2a.SendMessageConfiguration{ReturnImmediately: true}
	resp, err := protocolTransport(t, p, ifaces, base.Clone()).Call(ctx, a2a.MethodByName(a2a.MethodSendMessage), req)
	if err != nil {
		t.Fatal(err)
	}
	return resp.(*a2a.SendMessageResponse).GetTask().GetId()
}
