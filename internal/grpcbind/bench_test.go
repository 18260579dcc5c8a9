package grpcbind_test

import (
	"bytes"
	"io"
	"net/http"
	"syscall"
	"testing"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/grpcbind"
	"parley.dev/parley/internal/testenv"
	"parley.dev/parley/internal/testkit"
)

// BenchmarkGzipBombRefused sends, over loopback HTTP/2, a SendMessage of
// 9.3 MB that inflates to 9 GiB, and reports the CPU time of the whole
// process per refusal (cpu-ms/op: the server's inflating and the client's
// sending together) beside the wall time.
func BenchmarkGzipBombRefused(b *testing.B) {
	srv, _ := testkit.NewCore(b, []*a2a.AgentInterface{
		{Url: "127.0.0.1:1", ProtocolBinding: a2a.BindingGRPC, ProtocolVersion: "1.0"},
	}, nil)
	base := testkit.ServeH2C(b, grpcbind.NewHandler(srv, nil), nil).URL
	client := testkit.H2CClient()
	bomb := testenv.GzipBomb(9 << 30)
	frame := append([]byte{1, byte(len(bomb) >> 24), byte(len(bomb) >> 16), byte(len(bomb) >> 8), byte(len(bomb))}, bomb...)
	b.SetBytes(int64(len(frame)))
	start := cpuTime()
	b.ResetTimer()
	for b.Loop() {
		req, _ := http.NewRequest(http.MethodPost, base+"/lf.a2a.v1.A2AService/SendMessage", bytes.NewReader(frame))
		req.Header.Set("Content-Type", "application/grpc")
		req.Header.Set("Grpc-Encoding", "gzip")
		req.Header.Set("A2A-Version", "1.0")
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if s := resp.Trailer.Get("Grpc-Status") + resp.Header.Get("Grpc-Status"); s != "8" {
			b.Fatalf("grpc-status %q, want 8 (RESOURCE_EXHAUSTED)", s)
		}
	}
	b.ReportMetric(float64(cpuTime()-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}

// cpuTime is the CPU time (user and system) this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
