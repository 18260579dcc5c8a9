package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"parley.dev/parley/internal/httpx"
	"parley.dev/parley/internal/loadgen"
)

// loadSynopsis is the usage line and the notes of `parley load -h`.
const loadSynopsis = `load URL... [flags]     (or: parley load --ceiling|--floor ADDR [--chunks N])

Runs --concurrency clients against the A2A server at URL for --duration,
each sending its next request when the last one is answered (plain
HTTP/1.1; gRPC over HTTP/2 without TLS), and prints throughput and latency. Several URLs (replicas of
one agent) share the clients in turn. --ceiling ADDR instead serves
the cheapest possible responder, the yardstick to compare a server with;
--floor ADDR serves one that also decodes each request's message and
encodes a new answer for it, with no store and no agent.`

// load runs `parley load`: the closed-loop load generator, or with
// -ceiling or -floor a responder its figures are compared with.
func load(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("parley load", flag.ContinueOnError)
	op := fs.String("op", "send", "operation: send (blocking SendMessage \"hello\"), stream (SendStreamingMessage \"stream N\") or get (GetTask)")
	binding := fs.String("binding", "jsonrpc", "binding: jsonrpc, rest or grpc (HTTP/2 without TLS)")
	conc := fs.Int("concurrency", 64, "concurrent clients, one connection each")
	dur := fs.Duration("duration", 10*time.Second, "how long to send requests")
	chunks := fs.Int("chunks", 20, "chunks per stream (--op stream; and the ceiling's streams)")
	timeout := fs.Duration("timeout", 30*time.Second, "per-request timeout")
	var pidArgs multiFlag
	fs.Var(&pidArgs, "server-pid", "report the CPU per request and peak memory (from /proc) of this local server `PID`; repeat it once per URL to measure each URL's server apart, side by side in one run; with a --floor or --ceiling responder among the URLs, the others are given as multiples of it (docs/performance.md)")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	stalled := fs.Int("stalled-uploads", 0, "also hold `N` connections that declare a 9 MiB body, send 1 MiB and then a byte every 2 s (soak runs)")
	stalledOver := fs.String("stalled-over", "", "aim the stalled uploads at one protocol, `VERSION/BINDING` (1.0 or 0.3; jsonrpc, rest or grpc), over HTTP/2 without TLS (default: --binding over HTTP/1.1)")
	stalledToken := fs.String("stalled-token", "", "the stalled uploads and stuck reads send this bearer `TOKEN` (default: anonymous)")
	stuck := fs.Int("stuck-reads", 0, "also hold `N` GetTasks of a large task over HTTP/2 whose answers are never taken (a window of one byte), each for 35 s before it looks whether the server cut it (soak runs)")
	slowHeaders := fs.Int("slow-headers", 0, "also hold `N` connections that never finish their headers, from --slow-header-sources loopback addresses (127.0.0.2 on; Linux), beside a control client from 127.0.0.254 that fetches the card on a new connection every 100 ms and counts its refusals")
	slowSources := fs.Int("slow-header-sources", 5, "the number of loopback addresses the slow-header connections come from")
	stuckSize := fs.Int("stuck-size", 8<<20, "bytes of text in the stuck reads' task, which echoes them: a task of twice that")
	slow := fs.Int("slow-readers", 0, "also hold `N` streams of 1,000 chunks read one byte every 100 ms (soak runs)")
	cutShare := fs.Float64("cut-share", 0, "with --op stream: drop the connection of this `SHARE` (0 to 1) of streams mid-way, then resume each with SubscribeToTask and Last-Event-ID; events lost and duplicated are reported (must be 0)")
	ceiling := fs.String("ceiling", "", "serve the ceiling responder on `ADDR` instead of generating load")
	floor := fs.String("floor", "", "serve the floor responder on `ADDR` instead of generating load: the ceiling plus decoding each request and encoding its answer (docs/performance.md)")
	// Flags may come before or after the URL.
	var rest []string
	for {
		if err := parseCommandFlags(fs, args, "load", loadSynopsis, stdout); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		rest = append(rest, fs.Arg(0))
		args = fs.Args()[1:]
	}

	switch {
	case *ceiling != "" && *floor != "":
		return usageError{errors.New("--ceiling and --floor: want one of them")}
	case (*ceiling != "" || *floor != "") && len(rest) > 0:
		return usageError{fmt.Errorf("--ceiling and --floor take no URL (got %q)", rest[0])}
	case *ceiling != "":
		return serveYardstick(ctx, "--ceiling", *ceiling, loadgen.Ceiling(*chunks), *chunks, stdout, stderr)
	case *floor != "":
		return serveYardstick(ctx, "--floor", *floor, loadgen.Floor(*chunks), *chunks, stdout, stderr)
	}
	if len(rest) == 0 {
		return usageError{errors.New("want a URL, e.g. parley load http://127.0.0.1:8080 --op send (or several: replicas of one agent)")}
	}
	switch {
	case *op != loadgen.OpSend && *op != loadgen.OpStream && *op != loadgen.OpGet:
		return usageError{fmt.Errorf("--op %q: want send, stream or get", *op)}
	case *binding != loadgen.BindingJSONRPC && *binding != loadgen.BindingREST && *binding != loadgen.BindingGRPC:
		return usageError{fmt.Errorf("--binding %q: want jsonrpc, rest or grpc", *binding)}
	case *conc < 1 || *dur <= 0 || *chunks < 1:
		return usageError{errors.New("--concurrency, --duration and --chunks must be positive")}
	case *cutShare < 0 || *cutShare > 1 || *cutShare != *cutShare:
		return usageError{fmt.Errorf("--cut-share %v: want a share from 0 to 1", *cutShare)}
	case *cutShare > 0 && *op != loadgen.OpStream:
		return usageError{errors.New("--cut-share needs --op stream")}
	case *binding == loadgen.BindingGRPC && (*cutShare > 0 || *slow > 0):
		return usageError{errors.New("--cut-share and --slow-readers work on SSE streams: --binding jsonrpc or rest")}
	}
	for _, u := range rest {
		if err := checkAgentURL(u); err != nil {
			return err
		}
	}
	var pids []int
	for _, v := range pidArgs {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return usageError{fmt.Errorf("--server-pid %q: want a process id", v)}
		}
		pids = append(pids, n)
	}
	res, err := loadgen.Run(ctx, loadgen.Config{URL: rest[0], URLs: rest[1:], Op: *op, Binding: *binding, Concurrency: *conc,
		Duration: *dur, Chunks: *chunks, Timeout: *timeout, ServerPIDs: pids, StalledUploads: *stalled, StalledOver: *stalledOver, StalledToken: *stalledToken, SlowReaders: *slow, StuckReads: *stuck, StuckSize: *stuckSize, SlowHeaders: *slowHeaders, SlowHeaderSources: *slowSources, CutShare: *cutShare})
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	res.WriteText(stdout)
	return nil
}

// serveYardstick serves h, the responder the flag names (loadgen.Ceiling
// or loadgen.Floor), on addr until ctx ends.
func serveYardstick(ctx context.Context, flag, addr string, h http.Handler, chunks int, stdout, stderr io.Writer) error {
	ln, err := listen(flag, addr)
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, Protocols: new(http.Protocols),
		ErrorLog: slog.NewLogLogger(slog.New(slog.NewTextHandler(stderr, nil)).Handler(), slog.LevelWarn)}
	hs.Protocols.SetHTTP1(true)
	hs.Protocols.SetUnencryptedHTTP2(true) // the floor's gRPC
	fmt.Fprintf(stdout, "%s responder on http://%s (streams of %d chunks)\n", flag[2:], ln.Addr(), chunks)
	served := make(chan error, 1)
	go func() { served <- hs.Serve(httpx.BufferedListener(ln)) }() // read as parley serve reads
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	shutCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return hs.Shutdown(shutCtx)
}
