package cli_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"connectrpc.com/grpchealth"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/pgtest"
)

// TestServePostgresPartition: `parley serve` on PostgreSQL behind a network
// that goes silent (packets dropped, no connection reset). Meanwhile every
// call answers within a few store timeouts: sends and GetTask with
// UnavailableError on the three bindings, gRPC health NOT_SERVING, /readyz
// 503; once the network heals, sends succeed again without a restart.
func TestServePostgresPartition(t *testing.T) {
	const timeout = time.Second // --store-timeout, short to keep the test quick
	const patience = 5 * timeout
	u, err := url.Parse(pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	part := startOutage(t, u.Host)
	u.Host = part.addr
	p := serve(t, "--agent", "conformance", "--store", u.String(), "--store-timeout", timeout.String(), "--log-level", "error")
	base := "http://" + p.addr
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	card, c := resolveClient(t, ctx, base)
	sent, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("hello")})
	if err != nil {
		t.Fatal(err)
	}
	taskID := sent.GetTask().GetId()

	// timed runs one call and fails the test if it took longer than
	// patience.
	var slowest time.Duration
	calls := 0
	timed := func(what string, call func() error) error {
		start := time.Now()
		err := call()
		took := time.Since(start)
		slowest, calls = max(slowest, took), calls+1
		if took > patience {
			t.Errorf("during the partition, %s took %v (more than %v): %v", what, took.Round(time.Millisecond), patience, err)
		}
		return err
	}
	part.cut.Store(true)
	for end := time.Now().Add(12 * time.Second); time.Now().Before(end); {
		for _, b := range []string{a2a.BindingJSONRPC, a2a.BindingHTTPJSON, a2a.BindingGRPC} {
			one := bindingClient(t, card, b)
			err := timed(b+" SendMessage", func() error {
				_, err := one.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("hello")})
				return err
			})
			if a2a.AsError(err).Code != a2a.CodeUnavailable {
				t.Errorf("during the partition, %s SendMessage: %v, want UnavailableError", b, err)
			}
			err = timed(b+" GetTask", func() error {
				_, err := one.GetTask(ctx, &a2a.GetTaskRequest{Id: taskID})
				return err
			})
			if a2a.AsError(err).Code != a2a.CodeUnavailable {
				t.Errorf("during the partition, %s GetTask: %v, want UnavailableError", b, err)
			}
		}
		timed("gRPC health", func() error {
			if st := grpcHealth(t, p.addr); st != grpchealth.StatusNotServing {
				t.Errorf("during the partition, gRPC health: %v, want NOT_SERVING", st)
			}
			return nil
		})
		timed("/readyz", func() error {
			resp, err := http.Get(base + "/readyz")
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode != http.StatusServiceUnavailable {
					t.Errorf("during the partition, /readyz: %s, want 503", resp.Status)
				}
			}
			return err
		})
		if t.Failed() {
			break
		}
	}
	part.cut.Store(false)
	t.Logf("during the partition, %d calls; the slowest took %v", calls, slowest.Round(time.Millisecond))

	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("hello")})
		if err == nil && resp.GetTask().GetStatus().GetState() == a2a.TaskState_TASK_STATE_COMPLETED {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the partition healed, sends still fail: %v %v", resp, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	waitReady(t, base, http.StatusOK)
}
