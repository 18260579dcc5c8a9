package a2ahttp

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"connectrpc.com/grpcreflect"
	"google.golang.org/protobuf/reflect/protoreflect"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/agents"
	"parley.dev/parley/internal/httpx"
	"parley.dev/parley/server"
)

// The pipeline, tested for every entry of the protocol table over the real
// wire (HTTP/2 cleartext, as gRPC needs): a protocol added to the table is
// covered by these tests without a test of its own.

// matrixServer serves the echo agent with every protocol on, on a loopback
// port, and returns its handler and base URL. adjust, if any, changes the
// core's options and the HTTP server before they are used.
func matrixServer(t *testing.T, opts Options, adjust ...func(*server.Options, *http.Server)) (*Handler, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	ifaces, err := Interfaces(base)
	if err != nil {
		t.Fatal(err)
	}
	so := &server.Options{Agent: agents.Echo()}
	hs := &http.Server{Protocols: new(http.Protocols)}
	hs.Protocols.SetHTTP1(true)
	hs.Protocols.SetUnencryptedHTTP2(true)
	for _, f := range adjust {
		f(so, hs)
	}
	h := matrixHandler(t, ifaces, so, opts)
	hs.Handler = h
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	return h, base
}

// matrixHandler returns a handler of the core so makes (its card listing
// ifaces) with every protocol on; the core is closed when the test ends.
func matrixHandler(t *testing.T, ifaces []*a2a.AgentInterface, so *server.Options, opts Options) *Handler {
	t.Helper()
	so.Card = &a2a.AgentCard{Name: "matrix", Description: "protocol matrix", Version: "1.0.0",
		SupportedInterfaces: ifaces, Capabilities: &a2a.AgentCapabilities{Streaming: ptrTo(true)},
		DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills: []*a2a.AgentSkill{{Id: "echo", Name: "echo", Description: "echo", Tags: []string{"echo"}}}}
	core, err := server.New(so)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { core.Close(context.Background()) })
	opts.Card = so.Card
	h, err := New(core, &opts)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func ptrTo[T any](v T) *T { return &v }

// newH2C returns a client speaking HTTP/2 without TLS, on a connection
// of its own.
func newH2C() *http.Client {
	p := new(http.Protocols)
	p.SetUnencryptedHTTP2(true)
	return &http.Client{Transport: &http.Transport{Protocols: p}}
}

// upload is a SendMessage request of p whose body arrives as the test
// writes it: it declares size bytes and sends sent of them at once.
type upload struct {
	resp chan *http.Response
	body *io.PipeWriter
}

func startUpload(t *testing.T, base string, p *protocol, auth string, size, sent int) *upload {
	t.Helper()
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	// The request's goroutine ends before the test does: it may log.
	t.Cleanup(func() { cancel(); pw.Close(); <-done })
	head := p.sendBody([]byte(`{"message":`))
	data := append(head, bytes.Repeat([]byte(" "), max(0, sent-len(head)))...)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+p.sendPath, pr)
	req.ContentLength = int64(max(size, len(data)))
	req.Header.Set("Content-Type", p.sendType)
	req.Header.Set("A2A-Version", p.version)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	u := &upload{resp: make(chan *http.Response, 1), body: pw}
	go func() {
		defer close(done)
		resp, err := newH2C().Do(req)
		if err != nil {
			if ctx.Err() == nil {
				t.Logf("%s %s: %v", p.version, p.binding, err)
			}
			u.resp <- nil
			return
		}
		body, _ := io.ReadAll(resp.Body) // gRPC's status may be in the trailers
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(body))
		u.resp <- resp
	}()
	go pw.Write(data)
	return u
}

// answer waits up to wait for the response; nil when none came.
func (u *upload) answer(wait time.Duration) *http.Response {
	select {
	case r := <-u.resp:
		return r
	case <-time.After(wait):
		return nil
	}
}

// outcome is what a refusal says: the gRPC status code when there is one,
// else the HTTP status.
func outcome(r *http.Response) string {
	if r == nil {
		return "no answer"
	}
	if g := r.Header.Get("Grpc-Status"); g != "" {
		return "grpc " + g
	}
	if g := r.Trailer.Get("Grpc-Status"); g != "" {
		return "grpc " + g
	}
	return r.Status
}

// busyRefusal says what is wrong with r as the refusal of a request the
// server has no room for ("" when nothing is): UnavailableError in p's
// shape, gRPC UNAVAILABLE with its details (ErrorInfo, RetryInfo), or HTTP
// 503 with Retry-After and an error body naming the reason UNAVAILABLE
// (JSON-RPC's an error object with -32603).
func busyRefusal(p *protocol, r *http.Response) string {
	got := outcome(r)
	if r == nil {
		return got
	}
	if p.binding == a2a.BindingGRPC {
		details := r.Header.Get("Grpc-Status-Details-Bin") + r.Trailer.Get("Grpc-Status-Details-Bin")
		if got != "grpc 14" || details == "" {
			return fmt.Sprintf("%s (details %q), want UNAVAILABLE with details", got, details)
		}
		return ""
	}
	body, _ := io.ReadAll(r.Body)
	if got != "503 Service Unavailable" || r.Header.Get("Retry-After") != "1" || !bytes.Contains(body, []byte("UNAVAILABLE")) {
		return fmt.Sprintf("%s, Retry-After %q, body %s; want 503 with Retry-After 1 and the reason UNAVAILABLE", got, r.Header.Get("Retry-After"), body)
	}
	if p.binding == a2a.BindingJSONRPC && !bytes.Contains(body, []byte(`"code":-32603`)) {
		return fmt.Sprintf("JSON-RPC body %s, want an error object with -32603", body)
	}
	return ""
}

func forEachProtocol(t *testing.T, h *Handler, f func(t *testing.T, p, other *protocol)) {
	if len(h.protocols) != 6 {
		t.Fatalf("%d protocols in the table, want 6 (two versions × three bindings)", len(h.protocols))
	}
	for i := range h.protocols {
		p, other := &h.protocols[i], &h.protocols[(i+1)%len(h.protocols)]
		t.Run(p.version+"/"+p.binding, func(t *testing.T) { f(t, p, other) })
	}
}

// TestPipelineRefusesAnonymousBeforeTheBody: with credentials required, a
// request without them is refused while its body has not arrived.
func TestPipelineRefusesAnonymousBeforeTheBody(t *testing.T) {
	h, base := matrixServer(t, Options{Tokens: map[string]string{"tok": "alice"}})
	forEachProtocol(t, h, func(t *testing.T, p, _ *protocol) {
		got := outcome(startUpload(t, base, p, "", 9<<20, 10).answer(answerWait))
		if got != "401 Unauthorized" && got != "grpc 16" {
			t.Errorf("anonymous 9 MiB upload, body not sent: %s, want 401 / UNAUTHENTICATED before the body", got)
		}
	})
}

// TestPipelineCutsStalledUploads: a body that stops arriving is cut at the
// read deadline.
func TestPipelineCutsStalledUploads(t *testing.T) {
	h, base := matrixServer(t, Options{BodyTimeout: 300 * time.Millisecond})
	forEachProtocol(t, h, func(t *testing.T, p, _ *protocol) {
		start := time.Now()
		got := outcome(startUpload(t, base, p, "", 1<<20, 1000).answer(answerWait))
		if got != "408 Request Timeout" || time.Since(start) < 250*time.Millisecond {
			t.Errorf("stalled upload: %s after %v, want 408 at the 300 ms deadline", got, time.Since(start).Round(time.Millisecond))
		}
	})
}

// TestPipelineSharesTheBodyBudget: a stalled upload on one protocol holds
// budget that a large upload on the next one cannot have.
func TestPipelineSharesTheBodyBudget(t *testing.T) {
	const budget = 200 << 10
	h, base := matrixServer(t, Options{BodyBudget: budget, MaxPendingAnonymous: -1})
	forEachProtocol(t, h, func(t *testing.T, p, other *protocol) {
		holder := startUpload(t, base, other, "", 1<<20, 200<<10)
		// The holder's 200 KiB grow its buffer to 256 KiB, of which all
		// but the free 64 KiB are held: less than FreeBodyBytes is left,
		// so the next upload cannot grow its buffer past the free part.
		awaitBudget(t, h.budget, "an upload holds the budget", func(left int64) bool { return left < httpx.FreeBodyBytes })
		r := startUpload(t, base, p, "", 1<<20, 200<<10).answer(answerWait)
		if why := busyRefusal(p, r); why != "" {
			t.Errorf("upload while %s/%s holds the budget: %s", other.version, other.binding, why)
		}
		holder.body.Close()
		// The server lets go of the holder's bytes when it sees the body
		// end, a moment after Close: the next protocol's holder must not
		// meet them (it would be refused, and hold nothing).
		awaitBudget(t, h.budget, "the budget given back", func(left int64) bool { return left == budget })
	})
}

// answerWait bounds the wait for an answer the server gives at once: long,
// so that a loaded machine does not fail the test; an answer that comes
// ends the wait.
const answerWait = 15 * time.Second

// awaitBudget waits until the bytes of b not held satisfy ok: a fixed
// pause was too short on a loaded machine. The 30 s are a safety net for
// a budget that never gets there, not a bound on the server.
func awaitBudget(t *testing.T, b *httpx.Budget, what string, ok func(left int64) bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if ok(b.Left()) {
			return
		}
	}
	t.Fatalf("waited 30 s for %s: %d bytes left", what, b.Left())
}

// TestPipelineCapsPendingAnonymous: the anonymous cap counts uploads of
// every protocol together.
func TestPipelineCapsPendingAnonymous(t *testing.T) {
	h, base := matrixServer(t, Options{MaxPendingAnonymous: 1})
	forEachProtocol(t, h, func(t *testing.T, p, other *protocol) {
		holder := startUpload(t, base, other, "", 1<<20, 10)
		time.Sleep(150 * time.Millisecond)
		r := startUpload(t, base, p, "", 1<<20, 10).answer(answerWait)
		if why := busyRefusal(p, r); why != "" {
			t.Errorf("anonymous upload while %s/%s holds the one slot: %s", other.version, other.binding, why)
		}
		holder.body.Close()
		holder.answer(answerWait)
	})
}

// TestPipelineRateIsPerPrincipal: a principal's rate is one bucket across
// every protocol.
func TestPipelineRateIsPerPrincipal(t *testing.T) {
	h, base := matrixServer(t, Options{Tokens: map[string]string{"tok": "alice"}, RateLimit: 0.001, RateBurst: 1})
	n := 0
	forEachProtocol(t, h, func(t *testing.T, p, other *protocol) {
		if n == 0 {
			startUpload(t, base, other, "Bearer tok", 0, 0).answer(answerWait) // the one request the bucket holds
		}
		n++
		got := outcome(startUpload(t, base, p, "Bearer tok", 0, 0).answer(answerWait))
		if got != "429 Too Many Requests" && got != "grpc 8" {
			t.Errorf("a request over alice's rate: %s, want 429 / RESOURCE_EXHAUSTED", got)
		}
	})
}

// TestProtocolTableMatchesTheCard: every interface of the card is served
// by an entry of the table, and the other way round.
func TestProtocolTableMatchesTheCard(t *testing.T) {
	h, _ := matrixServer(t, Options{})
	served := map[string]bool{}
	for _, p := range h.protocols {
		served[p.version+" "+p.binding] = true
	}
	listed := map[string]bool{}
	for _, in := range h.Card().GetSupportedInterfaces() {
		listed[in.GetProtocolVersion()+" "+in.GetProtocolBinding()] = true
	}
	for k := range served {
		if !listed[k] {
			t.Errorf("%s is served but the card does not list it", k)
		}
	}
	for k := range listed {
		if !served[k] {
			t.Errorf("the card lists %s, which is not served", k)
		}
	}
	if !strings.Contains(strings.Join(mapKeys(served), ","), "0.3 GRPC") {
		t.Errorf("v0.3 gRPC is not in the table: %v", served)
	}
}

// TestReflectionListsEveryGRPCProtocol: gRPC reflection lists the
// service of every gRPC entry of the table.
func TestReflectionListsEveryGRPCProtocol(t *testing.T) {
	h, base := matrixServer(t, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st := grpcreflect.NewClient(newH2C(), base, connect.WithGRPC()).NewStream(ctx)
	defer st.Close()
	names, err := st.ListServices()
	if err != nil {
		t.Fatalf("ListServices: %v", err)
	}
	listed := strings.Join(namesOf(names), " ")
	for _, p := range h.protocols {
		if p.binding != a2a.BindingGRPC {
			continue
		}
		service := strings.Split(strings.TrimPrefix(p.sendPath, "/"), "/")[0]
		if !strings.Contains(" "+listed+" ", " "+service+" ") {
			t.Errorf("reflection lists %s, not %s (%s over gRPC)", listed, service, p.version)
		}
	}
}

func namesOf(ns []protoreflect.FullName) []string {
	var s []string
	for _, n := range ns {
		s = append(s, string(n))
	}
	return s
}

// TestV03OffEverywhere: a server that does not serve 0.3 has no v0.3
// entry and its card lists no 0.3 interface.
func TestV03OffEverywhere(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	ln.Close()
	ifaces, _ := Interfaces("http://" + ln.Addr().String())
	card := &a2a.AgentCard{Name: "v1", Description: "v1 only", Version: "1.0.0", SupportedInterfaces: ifaces,
		Capabilities: &a2a.AgentCapabilities{}, DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills: []*a2a.AgentSkill{{Id: "echo", Name: "echo", Description: "echo", Tags: []string{"echo"}}}}
	core, err := server.New(&server.Options{Card: card, Agent: agents.Echo(), ProtocolVersions: []string{"1.0"}})
	if err != nil {
		t.Fatal(err)
	}
	defer core.Close(context.Background())
	h, err := New(core, &Options{Card: card})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range h.protocols {
		if p.version != a2a.ProtocolVersion {
			t.Errorf("protocol %s/%s served, but the server serves only 1.0", p.version, p.binding)
		}
	}
	for _, in := range h.Card().GetSupportedInterfaces() {
		if in.GetProtocolVersion() != a2a.ProtocolVersion {
			t.Errorf("the card lists %s %s, but the server serves only 1.0", in.GetProtocolVersion(), in.GetProtocolBinding())
		}
	}
}

func mapKeys(m map[string]bool) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

// TestPipelineChallenges: a 401 carries the Bearer challenge on every
// protocol (gRPC's in its response headers too); for a refused token it
// says error="invalid_token", for a request without credentials it names
// no error (RFC 6750 §3.1).
func TestPipelineChallenges(t *testing.T) {
	h, base := matrixServer(t, Options{Tokens: map[string]string{"tok": "alice"}})
	forEachProtocol(t, h, func(t *testing.T, p, _ *protocol) {
		for _, c := range []struct{ auth, want string }{
			{"", `Bearer realm="a2a"`},
			{"Bearer wrong", `Bearer realm="a2a", error="invalid_token"`},
			{"bearer wrong", `Bearer realm="a2a", error="invalid_token"`},
		} {
			r := startUpload(t, base, p, c.auth, 100, 100).answer(answerWait)
			if got := outcome(r); got != "401 Unauthorized" && got != "grpc 16" {
				t.Errorf("Authorization %q: %s, want 401 / UNAUTHENTICATED", c.auth, got)
				continue
			}
			if got := r.Header.Get("WWW-Authenticate"); got != c.want {
				t.Errorf("Authorization %q: WWW-Authenticate %q, want %q", c.auth, got, c.want)
			}
		}
	})
}
