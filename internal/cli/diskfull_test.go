package cli_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"connectrpc.com/connect"
	"connectrpc.com/grpchealth"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
)

// smallDisk mounts a tmpfs of size bytes on a new directory and returns
// it, unmounted when the test ends. Where mounting is not allowed the test
// is skipped, except under CI=true, where .ci/run runs as a user that may.
func smallDisk(t *testing.T, size int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "disk")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", size), "tmpfs", dir).CombinedOutput()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("mounting a tmpfs (required under CI): %v %s", err, out)
		}
		t.Skipf("needs to mount a small tmpfs (as root), which is not allowed here: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	return dir
}

// fill writes a file on dir until the filesystem is full.
func fill(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	block := make([]byte, 64<<10)
	for {
		if _, err := f.Write(block); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			return path
		}
	}
}

// TestServeDiskFull runs `parley serve` on a SQLite file on a small tmpfs
// and fills the filesystem under a running stream: the stream ends with an
// error instead of hanging, sends are answered UnavailableError (503 with
// Retry-After; gRPC UNAVAILABLE) on the three bindings, readiness turns off;
// once space returns readiness turns on again, without a restart, the
// stream's task is ended FAILED saying why, and sends succeed.
func TestServeDiskFull(t *testing.T) {
	disk := smallDisk(t, 16<<20)
	p := serve(t, "--agent", "conformance", "--store", "sqlite:"+filepath.Join(disk, "parley.db"), "--log-level", "error")
	base := "http://" + p.addr
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	card, c := resolveClient(t, ctx, base)

	// A stream whose task writes a chunk every 5 ms.
	var taskID string
	streamEnd := make(chan error, 1)
	firstEvent := make(chan struct{})
	go func() {
		var last error
		for ev, err := range c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("stream 1000000 every 5")}) {
			if err != nil {
				last = err
				break
			}
			if taskID == "" {
				taskID = ev.TaskID()
				close(firstEvent)
			}
		}
		streamEnd <- last
	}()
	<-firstEvent
	filler := fill(t, disk)

	select {
	case err := <-streamEnd:
		if err == nil {
			t.Error("the stream ended without an error while its task could not be written")
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the stream of a task on a full disk did not end")
	}
	waitReady(t, base, http.StatusServiceUnavailable)
	if st := grpcHealth(t, p.addr); st != grpchealth.StatusNotServing {
		t.Errorf("gRPC health on a full disk: %v, want NOT_SERVING", st)
	}

	for _, b := range []string{a2a.BindingJSONRPC, a2a.BindingHTTPJSON, a2a.BindingGRPC} {
		one := bindingClient(t, card, b)
		_, err := one.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("hello")})
		if a2a.AsError(err).Code != a2a.CodeUnavailable {
			t.Errorf("%s: a send on a full disk: %v, want UnavailableError", b, err)
		}
	}
	req, _ := http.NewRequest("POST", base+"/message:send", strings.NewReader(`{"message":{"messageId":"full-1","role":"ROLE_USER","parts":[{"text":"hello"}]}}`))
	req.Header.Set("A2A-Version", "1.0")
	req.Header.Set("Content-Type", "application/a2a+json")
	if resp, err := http.DefaultClient.Do(req); err != nil {
		t.Error(err)
	} else {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
			t.Errorf("REST send on a full disk: %s, Retry-After %q; want 503 with Retry-After", resp.Status, resp.Header.Get("Retry-After"))
		}
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	waitReady(t, base, http.StatusOK)
	if st := grpcHealth(t, p.addr); st != grpchealth.StatusServing {
		t.Errorf("gRPC health once space returned: %v, want SERVING", st)
	}
	for {
		tk, err := c.GetTask(ctx, &a2a.GetTaskRequest{Id: taskID})
		if err != nil {
			t.Fatal(err)
		}
		if st := tk.GetStatus().GetState(); a2a.IsTerminal(st) {
			if st != a2a.TaskState_TASK_STATE_FAILED {
				t.Fatalf("the stream's task ended %v, want FAILED", st)
			}
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("the stream's task was not ended once space returned")
		case <-time.After(100 * time.Millisecond):
		}
	}
	if _, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("hello")}); err != nil {
		t.Errorf("a send once space returned: %v", err)
	}
}

// waitReady polls /readyz until it answers want (at most 15 s).
func waitReady(t *testing.T, base string, want int) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		resp, err := http.Get(base + "/readyz")
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == want {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz did not answer %d within 15 s (last: %v %v)", want, resp, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// resolveClient resolves the card at base and returns it with a client
// that does not retry (the tests see every answer).
func resolveClient(t *testing.T, ctx context.Context, base string) (*a2a.AgentCard, *client.Client) {
	t.Helper()
	card, err := client.Resolve(ctx, base, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(card, &client.Options{Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return card, c
}

// grpcHealth asks the gRPC health service at addr about the A2A service.
func grpcHealth(t *testing.T, addr string) grpchealth.Status {
	t.Helper()
	p := new(http.Protocols)
	p.SetUnencryptedHTTP2(true)
	hc := grpchealth.NewClient(&http.Client{Transport: &http.Transport{Protocols: p}}, "http://"+addr, connect.WithGRPC())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	res, err := hc.Check(ctx, &grpchealth.CheckRequest{Service: "lf.a2a.v1.A2AService"})
	if err != nil {
		t.Fatalf("gRPC health check: %v", err)
	}
	return res.Status
}

// bindingClient is a client of card restricted to one v1.0 binding.
func bindingClient(t *testing.T, card *a2a.AgentCard, binding string) *client.Client {
	t.Helper()
	f := map[string]client.TransportFactory{a2a.BindingJSONRPC: client.JSONRPC(), a2a.BindingHTTPJSON: client.REST(), a2a.BindingGRPC: client.GRPC()}[binding]
	c, err := client.New(card, &client.Options{Transports: []client.TransportFactory{f}, Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestServeSmallDiskWAL runs `parley serve` on a SQLite file on a 16 MiB
// tmpfs: 1,000 sends succeed while the write-ahead log stays within its
// worst size on that volume (docs/operations.md: twice an eighth of the
// volume, plus a group commit); with the volume then filled and the
// process killed, a restart on the same file opens it and reads back every
// acknowledged task; and once space returns, sends succeed again without
// another restart.
func TestServeSmallDiskWAL(t *testing.T) {
	const size = 16 << 20
	disk := smallDisk(t, size)
	db := filepath.Join(disk, "parley.db")
	p := serve(t, "--agent", "conformance", "--store", "sqlite:"+db, "--log-level", "error")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	_, c := resolveClient(t, ctx, "http://"+p.addr)

	const sends, workers = 1000, 4
	worst := int64(2*size/8 + 1<<20) // twice the budget, and a group commit's pages
	var (
		mu      sync.Mutex
		acked   []string
		walPeak int64
	)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < sends; i += workers {
				resp, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage(fmt.Sprintf("hello %d", i))})
				if err != nil {
					t.Errorf("send %d of %d: %v", i, sends, err)
					return
				}
				fi, err := os.Stat(db + "-wal")
				mu.Lock()
				acked = append(acked, resp.GetTask().GetId())
				if err == nil {
					walPeak = max(walPeak, fi.Size())
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	t.Logf("%d sends; the WAL's largest size seen: %d bytes", len(acked), walPeak)
	if walPeak > worst {
		t.Errorf("the WAL reached %d bytes on a %d-byte volume, past its stated worst %d", walPeak, size, worst)
	}

	filler := fill(t, disk)
	_, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("on a full disk")})
	if err != nil && a2a.AsError(err).Code != a2a.CodeUnavailable {
		t.Errorf("a send on a full disk: %v, want success or UnavailableError", err)
	}
	p.Kill()

	p = serve(t, "--agent", "conformance", "--store", "sqlite:"+db, "--log-level", "error")
	_, c = resolveClient(t, ctx, "http://"+p.addr)
	for _, id := range acked {
		tk, err := c.GetTask(ctx, &a2a.GetTaskRequest{Id: id})
		if err != nil || tk.GetStatus().GetState() != a2a.TaskState_TASK_STATE_COMPLETED {
			t.Fatalf("after a restart on a full disk, acknowledged task %s: %v %v", id, tk.GetStatus().GetState(), err)
		}
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	back := time.Now().Add(10 * time.Second)
	for {
		_, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("space returned")})
		if err == nil {
			break
		}
		if a2a.AsError(err).Code != a2a.CodeUnavailable || time.Now().After(back) {
			t.Fatalf("10 s after space returned, a send still fails: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	waitReady(t, "http://"+p.addr, http.StatusOK)
}
