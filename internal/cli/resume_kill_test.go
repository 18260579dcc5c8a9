package cli_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// sseLog is what one raw SSE reader received: each event's id and JSON.
type sseLog struct {
	ids    []uint64
	events []map[string]any
}

// readStream reads an SSE response until it ends or breaks, and returns
// what arrived. A broken connection is not an error here: it is the point.
func readStream(resp *http.Response) sseLog { return readStreamNoting(resp, nil) }

// readStreamNoting is readStream calling seen, when not nil, with the
// number of events read after each one.
func readStreamNoting(resp *http.Response, seen func(n int)) sseLog {
	defer resp.Body.Close()
	var out sseLog
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var id uint64
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "id: "):
			id, _ = strconv.ParseUint(line[4:], 10, 64)
		case strings.HasPrefix(line, "data: "):
			var m map[string]any
			if json.Unmarshal([]byte(line[6:]), &m) == nil {
				out.ids = append(out.ids, id)
				out.events = append(out.events, m)
				if seen != nil {
					seen(len(out.ids))
				}
			}
			id = 0
		}
	}
	return out
}

// TestResumeAfterKill9 kills `parley serve` (SQLite) in the middle of 64
// streams, restarts it on the same file and port, and resumes every stream
// with Last-Event-ID: each gets exactly the events after the last one it
// had (none lost, none twice), ending with the crash-recovery FAILED state.
func TestResumeAfterKill9(t *testing.T) {
	const streams = 64
	db := filepath.Join(t.TempDir(), "parley.db")
	p := serve(t, "--agent", "conformance", "--store", "sqlite:"+db, "--log-level", "error")
	addr := p.addr
	logs := make([]sseLog, streams)
	var wg, twoEach sync.WaitGroup // twoEach: every stream has two events
	twoEach.Add(streams)
	for i := range streams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := fmt.Sprintf(`{"message":{"messageId":"kill-%d","role":"ROLE_USER","parts":[{"text":"stream 100000 every 2"}]}}`, i)
			req, _ := http.NewRequest("POST", "http://"+addr+"/message:stream", strings.NewReader(body))
			req.Header.Set("A2A-Version", "1.0")
			req.Header.Set("Content-Type", "application/a2a+json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Errorf("stream %d: %v", i, err)
				twoEach.Done()
				return
			}
			var once sync.Once
			logs[i] = readStreamNoting(resp, func(n int) {
				if n >= 2 {
					once.Do(twoEach.Done)
				}
			})
			once.Do(twoEach.Done) // ended or broken before its second event
		}()
	}
	// The kill comes once every stream is under way, however slow the
	// machine, and some time after: in the middle of the streams.
	twoEach.Wait()
	time.Sleep(500 * time.Millisecond)
	p.Signal(syscall.SIGKILL)
	p.Wait()
	wg.Wait()

	var before, after int
	defer func() {
		t.Logf("%d streams: %d events before the kill, %d more after resuming", streams, before, after)
	}()
	q := serveAt(t, addr, "--agent", "conformance", "--store", "sqlite:"+db, "--log-level", "error")
	for i, l := range logs {
		if len(l.ids) < 2 {
			t.Fatalf("stream %d got %d events before the kill; the test needs more", i, len(l.ids))
		}
		checkConsecutive(t, fmt.Sprintf("stream %d before the kill", i), l.ids, 1)
		taskID, _ := field(l.events[0], "task", "id").(string)
		last := l.ids[len(l.ids)-1]
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+q.addr+"/tasks/"+taskID+":subscribe", nil)
		req.Header.Set("A2A-Version", "1.0")
		req.Header.Set("Last-Event-ID", strconv.FormatUint(last, 10))
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 200 {
			cancel()
			t.Fatalf("stream %d: resume after %d: %v %v", i, last, err, resp)
		}
		rest := readStream(resp)
		cancel()
		if len(rest.ids) == 0 {
			t.Fatalf("stream %d: resume after %d gave nothing; want at least the FAILED status", i, last)
		}
		checkConsecutive(t, fmt.Sprintf("stream %d resumed", i), rest.ids, last+1)
		before, after = before+len(l.ids), after+len(rest.ids)
		end := rest.events[len(rest.events)-1]
		if field(end, "statusUpdate", "status", "state") != "TASK_STATE_FAILED" {
			t.Fatalf("stream %d: the resumed stream ends with %v, want the crash-recovery FAILED status", i, end)
		}
		for j, ev := range rest.events[:len(rest.events)-1] {
			if field(ev, "artifactUpdate") == nil {
				t.Fatalf("stream %d: resumed event %d is %v, want an artifact chunk", i, rest.ids[j], ev)
			}
		}
	}
}

// checkConsecutive fails unless ids are from, from+1, from+2, ...
func checkConsecutive(t *testing.T, what string, ids []uint64, from uint64) {
	t.Helper()
	for j, id := range ids {
		if id != from+uint64(j) {
			t.Fatalf("%s: event ids %v…: id %d at position %d, want %d (a gap or a duplicate)", what, ids[:min(len(ids), 10)], id, j, from+uint64(j))
		}
	}
}
