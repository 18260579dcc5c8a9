package cli_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"parley.dev/parley/internal/pgtest"
)

// TestResendAfterKill9 kills `parley serve` while 32 clients send
// blocking messages, restarts it on the same store, and sends every
// message again with its messageId (B14): each gets a task — the one it
// had when its answer came before the kill, and one at all when it did
// not, whether the process died before the message was recorded, after
// its task was stored, or between the two. On SQLite, and on PostgreSQL,
// where the new process is another replica, which takes the dead one's
// messages over once its lease lapses.
func TestResendAfterKill9(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		resendAfterKill9(t, "--store", "sqlite:"+filepath.Join(t.TempDir(), "parley.db"))
	})
	t.Run("postgres", func(t *testing.T) {
		resendAfterKill9(t, "--store", pgtest.NewDatabase(t), "--lease", "1s")
	})
}

func resendAfterKill9(t *testing.T, storeArgs ...string) {
	const clients = 32
	args := append([]string{"--agent", "conformance", "--log-level", "error"}, storeArgs...)
	p := serve(t, args...)
	send := func(addr, id string) (taskID string, status int, err error) {
		body := `{"message":{"messageId":"` + id + `","role":"ROLE_USER","parts":[{"text":"hello"}]}}`
		req, _ := http.NewRequest("POST", "http://"+addr+"/message:send", strings.NewReader(body))
		req.Header.Set("A2A-Version", "1.0")
		req.Header.Set("Content-Type", "application/a2a+json")
		c := &http.Client{Timeout: 20 * time.Second}
		resp, err := c.Do(req)
		if err != nil {
			return "", 0, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return "", resp.StatusCode, err
		}
		var m map[string]any
		if json.Unmarshal(b, &m) != nil {
			return "", resp.StatusCode, fmt.Errorf("HTTP %d %.200s", resp.StatusCode, b)
		}
		id, _ = field(m, "task", "id").(string)
		if resp.StatusCode != 200 || id == "" {
			return "", resp.StatusCode, fmt.Errorf("HTTP %d %.200s", resp.StatusCode, b)
		}
		return id, 200, nil
	}

	var mu sync.Mutex
	answered := map[string]string{} // messageId → task id
	var unanswered []string
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range clients {
		wg.Go(func() {
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				id := fmt.Sprintf("resend-%02d-%05d", w, n)
				task, _, err := send(p.addr, id)
				mu.Lock()
				if err == nil {
					answered[id] = task
				} else {
					unanswered = append(unanswered, id)
				}
				mu.Unlock()
				if err != nil {
					return // the server is gone
				}
			}
		})
	}
	time.Sleep(1500 * time.Millisecond)
	p.Signal(syscall.SIGKILL)
	p.Wait()
	close(stop)
	wg.Wait()
	if len(answered) < clients || len(unanswered) == 0 {
		t.Fatalf("%d answered and %d unanswered before the kill; the test needs both", len(answered), len(unanswered))
	}

	q := serveAt(t, p.addr, args...)
	for _, id := range unanswered {
		for range 2 { // the first resend may run it; the second must agree
			if _, status, err := send(q.addr, id); err != nil {
				t.Errorf("resend of %s, unanswered before the kill: %d %v", id, status, err)
			}
		}
	}
	checked := 0
	for id, task := range answered {
		if checked++; checked > 64 {
			break
		}
		if got, _, err := send(q.addr, id); err != nil || got != task {
			t.Errorf("resend of %s: task %q, %v; before the kill it was %q", id, got, err, task)
		}
	}
	t.Logf("%d messages answered before the kill, %d unanswered, all resent", len(answered), len(unanswered))
}
