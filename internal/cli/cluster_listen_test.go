package cli_test

import (
	"context"
	"fmt"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"parley.dev/parley/internal/pgtest"
)

// TestClusterListenDropped: the replicas' LISTEN connections (and only
// those) are terminated by PostgreSQL while both replicas run tasks that
// streams and the other replica follow; then the database goes away for a
// second (every connection cut) while both run tasks that do not write
// meanwhile. Nobody asked for a cancel: every task, its stream and its
// follower on the other replica end COMPLETED, and blocking sends answer
// COMPLETED.
func TestClusterListenDropped(t *testing.T) {
	db := pgtest.NewDatabase(t)
	u, err := url.Parse(db)
	if err != nil {
		t.Fatal(err)
	}
	o := startOutage(t, u.Host)
	u.Host = o.addr
	args := []string{"--agent", "conformance", "--store", u.String(), "--lease", "3s", "--log-level", "warn"}
	reps := [2]*proc{serve(t, args...), serve(t, args...)}
	for _, fault := range []string{"pg_terminate_backend", "outage"} {
		t.Run(fault, func(t *testing.T) {
			var ids []string
			var wg sync.WaitGroup
			var mu sync.Mutex
			ended := map[string]string{} // what each stream, follower and blocking send ended with
			note := func(what, state string) { mu.Lock(); ended[what] = state; mu.Unlock() }
			for i, p := range reps {
				other := reps[1-i]
				for k := range 3 {
					got := p.post(t, "/message:send", fmt.Sprintf(`{"message":{"messageId":"%s-%d-%d","role":"ROLE_USER","parts":[{"text":"slow 4000"}]},
						"configuration":{"returnImmediately":true}}`, fault, i, k))
					id, _ := field(got, "task", "id").(string)
					if id == "" {
						t.Fatalf("send on %s: %v", p.addr, got)
					}
					ids = append(ids, id)
				}
				wg.Go(func() {
					got := p.post(t, "/message:send", fmt.Sprintf(`{"message":{"messageId":"%s-%d-block","role":"ROLE_USER","parts":[{"text":"slow 4000"}]}}`, fault, i))
					note(fmt.Sprintf("blocking send on replica %d", i), taskState(field(got, "task")))
				})
				if fault == "outage" {
					continue // a task that writes during an outage fails: the store is unavailable
				}
				resp := openStream(t, p, fmt.Sprintf(`{"message":{"messageId":"%s-%d-stream","role":"ROLE_USER","parts":[{"text":"stream 40 every 100"}]}}`, fault, i))
				got := make(chan string, 1)
				wg.Go(func() {
					l := readStreamNotify(resp, got)
					note(fmt.Sprintf("stream on replica %d", i), lastState(l))
				})
				id := <-got
				ids = append(ids, id)
				wg.Go(func() {
					note(fmt.Sprintf("follower on replica %d", 2-i), lastState(subscribe(t, other, id, 1)))
				})
			}
			time.Sleep(500 * time.Millisecond) // every task WORKING, every follower following
			switch fault {
			case "pg_terminate_backend":
				if n := terminateListeners(t, db); n != len(reps) {
					t.Fatalf("terminated %d LISTEN connections, want %d", n, len(reps))
				}
			case "outage":
				o.down()
				time.Sleep(time.Second)
				o.up(t)
			}
			wg.Wait()
			for what, state := range ended {
				if state != "TASK_STATE_COMPLETED" {
					t.Errorf("the %s ended %s", what, state)
				}
			}
			if want := map[string]int{"outage": 1, "pg_terminate_backend": 3}[fault] * len(reps); len(ended) != want {
				t.Errorf("%d streams, followers and blocking sends ended: %v", len(ended), ended)
			}
			for _, id := range ids {
				if s := waitTerminal(t, reps[0], id); s != "TASK_STATE_COMPLETED" {
					t.Errorf("task %s ended %s", id, s)
				}
			}
		})
	}
}

// lastState is the state of the last status update of a stream.
func lastState(l sseLog) string {
	for i := len(l.events) - 1; i >= 0; i-- {
		if s := taskState(l.events[i]["statusUpdate"]); s != "" {
			return s
		}
	}
	return "(no status)"
}

// terminateListeners terminates, in PostgreSQL, every session of the
// database at db that is listening for notifications, and returns how
// many it terminated.
func terminateListeners(t *testing.T, db string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	err = conn.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE 'LISTEN%'`).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// waitTerminal waits until the task is in a terminal state on p and
// returns the state.
func waitTerminal(t *testing.T, p *proc, id string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		s := taskState(p.getJSON(t, "/tasks/"+id))
		switch s {
		case "TASK_STATE_COMPLETED", "TASK_STATE_CANCELED", "TASK_STATE_FAILED", "TASK_STATE_REJECTED":
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s is still %s", id, s)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
