package loadgen_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/a2ahttp"
	"parley.dev/parley/internal/agents"
	"parley.dev/parley/internal/loadgen"
	"parley.dev/parley/internal/testkit"
	"parley.dev/parley/server"
	"parley.dev/parley/taskstore/memstore"
)

// startParley serves the conformance agent on a memory store, JSON-RPC and
// HTTP+JSON mounted as `parley serve` mounts them.
func startParley(t *testing.T) string {
	t.Helper()
	quiet := slog.New(slog.DiscardHandler)
	card, err := agents.Card("conformance", []*a2a.AgentInterface{
		{Url: "http://127.0.0.1/", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.ProtocolVersion},
		{Url: "http://127.0.0.1", ProtocolBinding: a2a.BindingHTTPJSON, ProtocolVersion: a2a.ProtocolVersion},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(&server.Options{Card: card, Agent: agents.Conformance(), Store: memstore.New(), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	h, err := a2ahttp.New(srv, &a2ahttp.Options{Card: card, KeepAlive: -1, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	ts := h2cServer(t, h)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Close(ctx)
	})
	return ts.URL
}

// h2cServer serves h over HTTP/1.1 and HTTP/2 without TLS (gRPC), as
// `parley serve` and the floor do, until the test ends.
func h2cServer(t *testing.T, h http.Handler) *httptest.Server {
	ts := httptest.NewUnstartedServer(h)
	ts.Config.Protocols = new(http.Protocols)
	ts.Config.Protocols.SetHTTP1(true)
	ts.Config.Protocols.SetUnencryptedHTTP2(true)
	ts.Start()
	t.Cleanup(ts.Close)
	return ts
}

// TestRun drives Parley, the ceiling and the floor for half a second per
// operation and checks that the figures hang together. It asserts no
// timing.
func TestRun(t *testing.T) {
	ceiling := httptest.NewServer(loadgen.Ceiling(5))
	t.Cleanup(ceiling.Close)
	floor := httptest.NewServer(loadgen.Floor(5))
	t.Cleanup(floor.Close)
	targets := map[string]string{"parley": startParley(t), "ceiling": ceiling.URL, "floor": floor.URL}
	runs := []struct{ op, binding string }{
		{loadgen.OpSend, loadgen.BindingJSONRPC},
		{loadgen.OpStream, loadgen.BindingREST},
		{loadgen.OpGet, loadgen.BindingREST},
		{loadgen.OpGet, loadgen.BindingJSONRPC},
	}
	for _, name := range []string{"parley", "ceiling", "floor"} {
		for _, r := range runs {
			t.Run(name+"/"+r.op+"/"+r.binding, func(t *testing.T) {
				res, err := loadgen.Run(t.Context(), loadgen.Config{URL: targets[name], Op: r.op, Binding: r.binding,
					Concurrency: 4, Duration: time.Second / 2, Chunks: 5, ServerPIDs: []int{os.Getpid()}})
				if err != nil {
					t.Fatal(err)
				}
				if res.Errors != 0 {
					t.Fatalf("%d errors %v, first: %s", res.Errors, res.ErrorKinds, res.FirstError)
				}
				if res.OK < 4 || res.RPS <= 0 {
					t.Fatalf("ok %d, rps %f: want some requests", res.OK, res.RPS)
				}
				if !(0 < res.P50 && res.P50 <= res.P90 && res.P90 <= res.P99 && res.P99 <= res.Max && res.Max <= res.Elapsed) {
					t.Fatalf("latencies out of order: p50 %v p90 %v p99 %v max %v elapsed %v", res.P50, res.P90, res.P99, res.Max, res.Elapsed)
				}
				s := res.Server
				if s == nil || s.CPUms < 0 || s.PeakRSSBytes <= 0 || s.HWMBytes < s.PeakRSSBytes/2 || s.Requests != res.OK {
					t.Fatalf("server stats %+v", s)
				}
				var out bytes.Buffer
				res.WriteText(&out)
				t.Log(out.String())
			})
		}
	}
}

// TestRunServerPerURL: with a server pid per URL, each server is charged
// with the requests its URL got, which add up to the run's; a pid count
// that matches neither one nor the URLs is refused.
func TestRunServerPerURL(t *testing.T) {
	a, b := startParley(t), startParley(t)
	pid := os.Getpid() // both servers are in this process: the split of requests is what is checked
	res, err := loadgen.Run(t.Context(), loadgen.Config{URL: a, URLs: []string{b}, Op: loadgen.OpSend, Binding: loadgen.BindingJSONRPC,
		Concurrency: 4, Duration: time.Second / 2, ServerPIDs: []int{pid, pid}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Server != nil || len(res.Servers) != 2 {
		t.Fatalf("server %+v, servers %d: want one figure per URL", res.Server, len(res.Servers))
	}
	for i, url := range []string{a, b} {
		if s := res.Servers[i]; s.URL != url || s.Requests < 2 || s.CPUmsPerOp <= 0 && s.CPUms > 0 {
			t.Errorf("server %d: %+v", i, s)
		}
	}
	if n := res.Servers[0].Requests + res.Servers[1].Requests; n != res.OK+res.Errors {
		t.Errorf("the servers got %d requests, the run made %d", n, res.OK+res.Errors)
	}
	var out bytes.Buffer
	res.WriteText(&out)
	if strings.Count(out.String(), "  server ") != 2 {
		t.Errorf("text output lacks a line per server:\n%s", out.String())
	}
	_, err = loadgen.Run(t.Context(), loadgen.Config{URL: a, URLs: []string{b, a}, Op: loadgen.OpSend, Binding: loadgen.BindingJSONRPC,
		Concurrency: 3, Duration: time.Second / 10, ServerPIDs: []int{pid, pid}})
	if err == nil || !strings.Contains(err.Error(), "2 server pids for 3 URLs") {
		t.Errorf("two pids for three URLs: %v", err)
	}
}

// TestRunRatiosToYardsticks: side by side with the floor and the ceiling,
// the other server's line gives its CPU per request as a multiple of
// theirs, which are recognised by what they answer at YardstickPath.
func TestRunRatiosToYardsticks(t *testing.T) {
	parley := startParley(t)
	floor := httptest.NewServer(loadgen.Floor(5))
	t.Cleanup(floor.Close)
	ceiling := httptest.NewServer(loadgen.Ceiling(5))
	t.Cleanup(ceiling.Close)
	pid := os.Getpid()
	res, err := loadgen.Run(t.Context(), loadgen.Config{URL: parley, URLs: []string{floor.URL, ceiling.URL}, Op: loadgen.OpSend,
		Binding: loadgen.BindingJSONRPC, Concurrency: 3, Duration: time.Second / 2, ServerPIDs: []int{pid, pid, pid}})
	if err != nil {
		t.Fatal(err)
	}
	if got := []string{res.Servers[0].Yardstick, res.Servers[1].Yardstick, res.Servers[2].Yardstick}; got[0] != "" || got[1] != "floor" || got[2] != "ceiling" {
		t.Fatalf("yardsticks %q, want none, floor, ceiling", got)
	}
	var out bytes.Buffer
	res.WriteText(&out)
	lines := strings.Split(out.String(), "\n")
	var parleyLine string
	for _, l := range lines {
		if strings.Contains(l, "  server ") && strings.HasSuffix(l, "ceiling") && strings.Contains(l, "× floor") {
			parleyLine = l
		}
	}
	want := fmt.Sprintf("%.2f× floor, %.2f× ceiling", res.Servers[0].CPUmsPerOp/res.Servers[1].CPUmsPerOp, res.Servers[0].CPUmsPerOp/res.Servers[2].CPUmsPerOp)
	if !strings.Contains(parleyLine, parley+": "+want) || !strings.Contains(out.String(), floor.URL+" (the floor)") {
		t.Errorf("want %q on the first server's line and the floor named:\n%s", want, out.String())
	}
}

// TestRunRefusesBadConfig: a wrong URL, operation or binding is an error
// before any load.
func TestRunRefusesBadConfig(t *testing.T) {
	for _, cfg := range []loadgen.Config{
		{URL: "https://127.0.0.1:1", Op: loadgen.OpSend, Binding: loadgen.BindingREST},
		{URL: "http://127.0.0.1:1", Op: "cancel", Binding: loadgen.BindingREST},
		{URL: "http://127.0.0.1:1", Op: loadgen.OpSend, Binding: "thrift"},
		{URL: "http://127.0.0.1:1", Op: loadgen.OpStream, Binding: loadgen.BindingGRPC, CutShare: 0.5},
		{URL: "http://127.0.0.1:1", Op: loadgen.OpStream, Binding: loadgen.BindingGRPC, SlowReaders: 1},
	} {
		if _, err := loadgen.Run(t.Context(), cfg); err == nil {
			t.Errorf("%+v: no error", cfg)
		}
	}
}

// TestRunCutStreams: with CutShare, a share of streams is dropped mid-way
// and resumed with Last-Event-ID on both bindings; Parley loses and
// repeats nothing.
func TestRunCutStreams(t *testing.T) {
	url := startParley(t)
	for _, b := range []string{loadgen.BindingJSONRPC, loadgen.BindingREST} {
		t.Run(b, func(t *testing.T) {
			res, err := loadgen.Run(t.Context(), loadgen.Config{URL: url, Op: loadgen.OpStream, Binding: b,
				Concurrency: 4, Duration: time.Second / 2, Chunks: 10, CutShare: 0.5})
			if err != nil {
				t.Fatal(err)
			}
			if res.Errors != 0 || res.OK < 4 {
				t.Fatalf("%d ok, %d errors %v, first: %s", res.OK, res.Errors, res.ErrorKinds, res.FirstError)
			}
			r := res.Resume
			if r == nil || r.StreamsCut < 2 || r.EventsLost != 0 || r.EventsDuplicated != 0 {
				t.Fatalf("resume stats %+v, want some streams cut, nothing lost or repeated", r)
			}
			var out bytes.Buffer
			res.WriteText(&out)
			if !strings.Contains(out.String(), "events     0 lost, 0 duplicated; ") {
				t.Errorf("text output lacks the events line:\n%s", out.String())
			}
		})
	}
}

// TestRunSpreads: with several URLs the clients are shared among them.
func TestRunSpreads(t *testing.T) {
	var hits [3]atomic.Int64
	var urls []string
	for i := range hits {
		ceiling := loadgen.Ceiling(5)
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hits[i].Add(1)
			ceiling.ServeHTTP(w, r)
		}))
		t.Cleanup(ts.Close)
		urls = append(urls, ts.URL)
	}
	res, err := loadgen.Run(t.Context(), loadgen.Config{URL: urls[0], URLs: urls[1:], Op: loadgen.OpSend,
		Binding: loadgen.BindingJSONRPC, Concurrency: 6, Duration: time.Second / 4})
	if err != nil || res.Errors != 0 {
		t.Fatalf("%v; %+v", err, res)
	}
	for i := range hits {
		if hits[i].Load() == 0 {
			t.Errorf("server %d got no request", i)
		}
	}
	var out bytes.Buffer
	res.WriteText(&out)
	if !strings.Contains(out.String(), urls[2]) {
		t.Errorf("the report does not name every URL:\n%s", out.String())
	}
}

// TestStalledUploadsReachEveryProtocol: --stalled-over aims the stalled
// uploads at each protocol, whose own refusal they meet: an anonymous one
// is refused before its body (gRPC's status UNAUTHENTICATED, 401 on the
// HTTP bindings), an authenticated one is cut at the body deadline.
func TestStalledUploadsReachEveryProtocol(t *testing.T) {
	srv := testkit.StartServer(t, &testkit.Options{Quiet: true, HTTP: func(o *a2ahttp.Options) {
		o.Tokens = map[string]string{"secret": "alice"}
		o.BodyTimeout = 300 * time.Millisecond
	}})
	for _, over := range []string{"1.0/jsonrpc", "1.0/rest", "1.0/grpc", "0.3/jsonrpc", "0.3/rest", "0.3/grpc"} {
		for _, token := range []string{"", "secret"} {
			want := "401 Unauthorized"
			if strings.HasSuffix(over, "grpc") {
				want = "grpc 16"
			}
			if token != "" {
				want = "408 Request Timeout"
			}
			t.Run(over+"/token="+token, func(t *testing.T) {
				t.Parallel()
				res, err := loadgen.Run(context.Background(), loadgen.Config{URL: srv.HTTP.URL, Op: loadgen.OpSend, Binding: loadgen.BindingREST,
					Concurrency: 1, Duration: 800 * time.Millisecond, StalledUploads: 1, StalledOver: over, StalledToken: token})
				if err != nil {
					t.Fatal(err)
				}
				if res.Attack.Answers[want] == 0 {
					t.Errorf("answers %v, want %q", res.Attack.Answers, want)
				}
			})
		}
	}
	if _, err := loadgen.Run(context.Background(), loadgen.Config{URL: srv.HTTP.URL, StalledUploads: 1, StalledOver: "2.0/grpc"}); err == nil {
		t.Error("--stalled-over 2.0/grpc accepted")
	}
}

// bindings are the load's bindings, every one of which dials through the
// run's dial gate.
var bindings = []string{loadgen.BindingJSONRPC, loadgen.BindingREST, loadgen.BindingGRPC}

// TestRunBacksOffWhenTheServerDies: on every binding, the server answers,
// then is gone (its port closed) for the rest of the run. The workers'
// connection attempts back off: the failed dials number at most 100 a
// second of the run, and each worker's first.
func TestRunBacksOffWhenTheServerDies(t *testing.T) {
	for _, b := range bindings {
		t.Run(b, func(t *testing.T) {
			t.Parallel()
			ts := h2cServer(t, loadgen.Ceiling(5))
			const workers = 16
			time.AfterFunc(300*time.Millisecond, ts.Close)
			res, err := loadgen.Run(t.Context(), loadgen.Config{URL: ts.URL, Op: loadgen.OpSend, Binding: b,
				Concurrency: workers, Duration: 2 * time.Second, Timeout: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			dials := res.ErrorKinds["dial"]
			t.Logf("%d answered, then %d failed dials in %v: %v", res.OK, dials, res.Elapsed, res.ErrorKinds)
			if res.OK == 0 || dials == 0 {
				t.Fatalf("the run should have had answers, then failed dials: %d ok, %v", res.OK, res.ErrorKinds)
			}
			if limit := workers + int(100*res.Elapsed.Seconds()) + 1; dials > limit {
				t.Errorf("%d failed dials in %v, want at most %d", dials, res.Elapsed, limit)
			}
		})
	}
}

// TestRunBacksOffWhenConnectionsClose: on every binding, a server that
// accepts every connection and closes it at once, before any answer. The
// attempts back off: the connections accepted during the run number at
// most 100 a second, after the workers' first ones.
func TestRunBacksOffWhenConnectionsClose(t *testing.T) {
	for _, b := range bindings {
		t.Run(b, func(t *testing.T) {
			t.Parallel()
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ln.Close() })
			var accepted atomic.Int64
			go func() {
				for {
					c, err := ln.Accept()
					if err != nil {
						return
					}
					accepted.Add(1)
					c.Close()
				}
			}()
			const workers = 16
			res, err := loadgen.Run(t.Context(), loadgen.Config{URL: "http://" + ln.Addr().String(), Op: loadgen.OpSend,
				Binding: b, Concurrency: workers, Duration: 2 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			n := int(accepted.Load())
			t.Logf("%d connections accepted and closed in %v: %v", n, res.Elapsed, res.ErrorKinds)
			if res.OK != 0 || res.Errors == 0 {
				t.Fatalf("%d answers, %d errors from a server that closes every connection", res.OK, res.Errors)
			}
			if limit := workers + int(100*res.Elapsed.Seconds()) + 1; n > limit {
				t.Errorf("%d connections in %v, want at most %d", n, res.Elapsed, limit)
			}
		})
	}
}

// TestRunGRPC drives Parley, the floor and the ceiling over gRPC (HTTP/2
// without TLS) side by side for each operation: every answer is the one
// expected, each server is charged with its own requests and Parley's line
// is given as a multiple of the yardsticks'.
func TestRunGRPC(t *testing.T) {
	parley := startParley(t)
	floor := h2cServer(t, loadgen.Floor(5))
	ceiling := h2cServer(t, loadgen.Ceiling(5))
	pid := os.Getpid()
	for _, op := range []string{loadgen.OpSend, loadgen.OpStream, loadgen.OpGet} {
		t.Run(op, func(t *testing.T) {
			res, err := loadgen.Run(t.Context(), loadgen.Config{URL: parley, URLs: []string{floor.URL, ceiling.URL}, Op: op,
				Binding: loadgen.BindingGRPC, Concurrency: 6, Duration: time.Second / 2, Chunks: 5, ServerPIDs: []int{pid, pid, pid}})
			if err != nil {
				t.Fatal(err)
			}
			if res.Errors != 0 || res.OK < 6 {
				t.Fatalf("%d ok, %d errors %v, first: %s", res.OK, res.Errors, res.ErrorKinds, res.FirstError)
			}
			if res.Resume != nil {
				t.Errorf("resume stats %+v over gRPC, whose streams carry no event numbers", res.Resume)
			}
			s := res.Servers
			if len(s) != 3 || s[1].Yardstick != "floor" || s[2].Yardstick != "ceiling" || s[0].Requests+s[1].Requests+s[2].Requests != res.OK {
				t.Fatalf("servers %+v %+v %+v", s[0], s[1], s[2])
			}
			var out bytes.Buffer
			res.WriteText(&out)
			if !strings.Contains(out.String(), " over grpc, ") || !strings.Contains(out.String(), "× floor, ") {
				t.Errorf("text output:\n%s", out.String())
			}
		})
	}
}

// TestRunGRPCFailures: over gRPC a wrong answer is counted by its kind: a
// stream shorter than asked for, a server that answers a gRPC request
// without a gRPC status (with JSON), a gRPC status other than OK.
func TestRunGRPCFailures(t *testing.T) {
	floor := h2cServer(t, loadgen.Floor(5))
	jsonOnly := h2cServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"task":{}}`))
	}))
	refusing := startParleyTokens(t)
	for _, c := range []struct {
		name, url, op, kind string
	}{
		{"short stream", floor.URL, loadgen.OpStream, "short stream"},
		{"no status", jsonOnly.URL, loadgen.OpSend, "grpc no status"},
		{"unauthenticated", refusing, loadgen.OpSend, "grpc 16"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := loadgen.Run(t.Context(), loadgen.Config{URL: c.url, Op: c.op, Binding: loadgen.BindingGRPC,
				Concurrency: 2, Duration: time.Second / 4, Chunks: 10})
			if err != nil {
				t.Fatal(err)
			}
			if res.OK != 0 || res.ErrorKinds[c.kind] == 0 || res.ErrorKinds[c.kind] != res.Errors {
				t.Fatalf("%d ok, errors %v (first: %s): want only %q", res.OK, res.ErrorKinds, res.FirstError, c.kind)
			}
		})
	}
}

// startParleyTokens serves the conformance agent to bearer tokens only:
// the load's anonymous requests are refused.
func startParleyTokens(t *testing.T) string {
	srv := testkit.StartServer(t, &testkit.Options{Quiet: true, HTTP: func(o *a2ahttp.Options) {
		o.Tokens = map[string]string{"secret": "alice"}
	}})
	return srv.HTTP.URL
}
