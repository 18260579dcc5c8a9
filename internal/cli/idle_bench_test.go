package cli_test

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// BenchmarkIdleStreams opens many SubscribeToTask streams on one task of a
// `parley serve` process, reports the server's resident memory per idle
// stream (bytes/stream, from /proc VmRSS, a second after the last stream
// opened: every stream is parked by then, see sse.Parking), then has the
// task finish and checks that every stream receives every event to the
// end. The count is PARLEY_IDLE_STREAMS (default 2000; the target of
// 16 KiB per stream is for 10,000). Run it once:
// go test -run X -bench IdleStreams -benchtime 1x.
func BenchmarkIdleStreams(b *testing.B) {
	n := 2000
	if v, err := strconv.Atoi(os.Getenv("PARLEY_IDLE_STREAMS")); err == nil && v > 0 {
		n = v
	}
	for range b.N {
		p := serve(b, "--agent", "conformance", "--store", "memory", "--log-level", "error", "--max-conns", "0")
		parked := p.post(b, "/message:send", `{"message":{"messageId":"idle-1","role":"ROLE_USER","parts":[{"text":"input-required"}]}}`)
		id, _ := field(parked, "task", "id").(string)
		time.Sleep(200 * time.Millisecond)
		before := rss(b, p.PID())
		conns := make([]*bufio.Reader, n)
		for i := range n {
			c, err := net.Dial("tcp", p.addr)
			if err != nil {
				b.Fatalf("stream %d: %v", i, err)
			}
			defer c.Close()
			fmt.Fprintf(c, "GET /tasks/%s:subscribe HTTP/1.1\r\nHost: %s\r\nA2A-Version: 1.0\r\n\r\n", id, p.addr)
			conns[i] = bufio.NewReaderSize(c, 1024)
			// The snapshot arrives before the next stream opens, so every
			// stream is subscribed when the memory is read.
			if ids := readEvents(conns[i], 1); len(ids) != 1 {
				b.Fatalf("stream %d: no snapshot", i)
			}
		}
		time.Sleep(time.Second) // long enough to be parked (sse.DefaultParkAfter)
		after := rss(b, p.PID())
		b.ReportMetric(float64(after-before)/float64(n), "bytes/stream")
		b.ReportMetric(float64(n), "streams")

		// The follow-up completes the task: three events (WORKING, the
		// artifact, COMPLETED) that every stream must get, then its end.
		var wg sync.WaitGroup
		missed := make(chan string, n)
		for i, r := range conns {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if ids := readEvents(r, -1); len(ids) != 3 {
					missed <- fmt.Sprintf("stream %d got events %v", i, ids)
				}
			}()
		}
		p.post(b, "/message:send", `{"message":{"messageId":"idle-2","taskId":"`+id+`","role":"ROLE_USER","parts":[{"text":"done"}]}}`)
		wg.Wait()
		close(missed)
		for m := range missed {
			b.Error(m)
		}
		p.Stop()
	}
}

// readEvents reads SSE events from a chunked HTTP/1.1 response (headers
// first, if not read yet) and returns their ids: want of them, or all until
// the stream ends (want < 0).
func readEvents(r *bufio.Reader, want int) []string {
	var ids []string
	for want < 0 || len(ids) < want {
		line, err := r.ReadString('\n')
		if err != nil {
			return ids
		}
		if strings.HasPrefix(line, "id: ") {
			ids = append(ids, strings.TrimSpace(line[4:]))
		}
		if line == "0\r\n" { // the last chunk: the stream ended
			return ids
		}
	}
	return ids
}

// rss is the resident memory of a process, from /proc.
func rss(tb testing.TB, pid int) int64 {
	tb.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		tb.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	tb.Fatal("no VmRSS")
	return 0
}
