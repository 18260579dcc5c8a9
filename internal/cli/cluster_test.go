package cli_test

// Three `parley serve` replicas on one PostgreSQL database
// (docs/replicas.md), over the real wire.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"parley.dev/parley/internal/pgtest"
)

// pushLog records the push notifications a webhook got, by task.
type pushLog struct {
	mu     sync.Mutex
	byTask map[string][]map[string]any
}

func newPushLog(t *testing.T) (*pushLog, string) {
	l := &pushLog{byTask: map[string][]map[string]any{}}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m map[string]any
		b, _ := io.ReadAll(r.Body)
		if json.Unmarshal(b, &m) != nil {
			w.WriteHeader(400)
			return
		}
		id, _ := field(m, "task", "id").(string)
		for _, k := range []string{"statusUpdate", "artifactUpdate"} {
			if s, ok := field(m, k, "taskId").(string); ok {
				id = s
			}
		}
		l.mu.Lock()
		l.byTask[id] = append(l.byTask[id], m)
		l.mu.Unlock()
	}))
	t.Cleanup(ts.Close)
	return l, ts.URL + "/hook"
}

func (l *pushLog) of(id string) []map[string]any {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]map[string]any(nil), l.byTask[id]...)
}

// openStream starts a REST streaming send on p and returns the response.
func openStream(t *testing.T, p *proc, body string) *http.Response {
	t.Helper()
	return openStreamAs(t, p, "1.0", body)
}

// openStreamAs is openStream in A2A version v (the A2A-Version header).
func openStreamAs(t *testing.T, p *proc, v, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("POST", "http://"+p.addr+"/message:stream", strings.NewReader(body))
	req.Header.Set("A2A-Version", v)
	req.Header.Set("Content-Type", "application/a2a+json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("stream on %s: %v %v", p.addr, err, resp)
	}
	return resp
}

// subscribe follows a task on p, from Last-Event-ID after when after > 0.
func subscribe(t *testing.T, p *proc, taskID string, after uint64) sseLog {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+p.addr+"/tasks/"+taskID+":subscribe", nil)
	req.Header.Set("A2A-Version", "1.0")
	if after > 0 {
		req.Header.Set("Last-Event-ID", strconv.FormatUint(after, 10))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("subscribe on %s: %v %v", p.addr, err, resp)
	}
	return readStream(resp)
}

func taskState(task any) string { s, _ := field(task, "status", "state").(string); return s }

// generation reads a generation as ProtoJSON writes an int64: a string.
func generation(v any) uint64 {
	s, _ := v.(string)
	g, _ := strconv.ParseUint(s, 10, 64)
	return g
}

// getGeneration is a 1.1 GetTask on p (A2A-Version: 1.1, the preview's
// Task.generation) and returns the task and its generation.
func getGeneration(t *testing.T, p *proc, id string) (map[string]any, uint64) {
	t.Helper()
	req, _ := http.NewRequest("GET", "http://"+p.addr+"/tasks/"+id, nil)
	req.Header.Set("A2A-Version", "1.1")
	task := p.do(t, req)
	if field(task, "id") != id {
		t.Fatalf("1.1 GetTask %s on %s: %v", id, p.addr, task)
	}
	return task, generation(task["generation"])
}

// checkEventGenerations fails unless every event of a 1.1 stream carries
// the generation of the task after it, which in Parley is the event's
// sequence number, its SSE id.
func checkEventGenerations(t *testing.T, what string, l sseLog) {
	t.Helper()
	for j, ev := range l.events {
		var g uint64
		for _, k := range []string{"task", "statusUpdate", "artifactUpdate"} {
			if ev[k] != nil {
				g = generation(field(ev, k, "generation"))
			}
		}
		if g != l.ids[j] {
			t.Fatalf("%s: event %d (id %d) has generation %d: %v", what, j, l.ids[j], g, ev)
		}
	}
}

// TestCluster runs three replicas on one database and, in turn: follows
// a stream on the other two; cancels from another replica; continues a
// task on another replica; sends one messageId to two replicas at once;
// walks ListTasks across them; kills -9 the replica running streams with
// push configurations and checks that the others end its tasks FAILED
// within the lease, that every stream resumes on another replica with
// nothing lost or repeated, and that every notification is delivered.
//
// It runs twice: as parley serve runs by default, and with the A2A 1.1
// preview on beside v1.0 and v0.3, which v1.0 callers (every call above)
// must not notice; there, after the kill, a 1.1 GetTask on a replica that
// lives on reports a task's generation (the 1.1 draft's Task.generation,
// §3.2.2) as the number of events the task logged, whichever replica
// wrote them, and a task continued there counts on by one per event.
func TestCluster(t *testing.T) {
	t.Run("default", func(t *testing.T) { testCluster(t, false) })
	t.Run("preview", func(t *testing.T) { testCluster(t, true) })
}

func testCluster(t *testing.T, preview bool) {
	db := pgtest.NewDatabase(t)
	hooks, hookURL := newPushLog(t)
	const lease = 2 * time.Second
	args := []string{"--agent", "conformance", "--store", db, "--lease", lease.String(), "--push-allow-private",
		"--push-timeout", "2s", "--log-level", "warn"}
	v := "1.0" // the version of the waiting task's streams below
	if preview {
		args, v = append(args, "--protocol-versions", "1.1,1.0,0.3"), "1.1"
	}
	reps := []*proc{serve(t, args...), serve(t, args...), serve(t, args...)}

	t.Run("follow", func(t *testing.T) {
		resp := openStream(t, reps[0], `{"message":{"messageId":"f-1","role":"ROLE_USER","parts":[{"text":"stream 30 every 20"}]},
			"configuration":{"taskPushNotificationConfig":{"url":"`+hookURL+`"}}}`)
		ids := make(chan string, 1)
		var onA sseLog
		done := make(chan struct{})
		go func() {
			defer close(done)
			onA = readStreamNotify(resp, ids)
		}()
		id := <-ids
		var others [2]sseLog
		var wg sync.WaitGroup
		for i := range others {
			wg.Go(func() { others[i] = subscribe(t, reps[1+i], id, 1) })
		}
		wg.Wait()
		<-done
		checkConsecutive(t, "on the first replica", onA.ids, 1)
		if taskState(onA.events[len(onA.events)-1]["statusUpdate"]) != "TASK_STATE_COMPLETED" {
			t.Fatalf("the stream ends with %v", onA.events[len(onA.events)-1])
		}
		for i, o := range others {
			checkConsecutive(t, fmt.Sprintf("replica %d", i+2), o.ids, 2)
			if len(o.ids) != len(onA.ids)-1 {
				t.Fatalf("replica %d got %d events after the first, want %d", i+2, len(o.ids), len(onA.ids)-1)
			}
			for j, ev := range o.events {
				a, _ := json.Marshal(onA.events[j+1])
				b, _ := json.Marshal(ev)
				if string(a) != string(b) {
					t.Fatalf("replica %d, event %d: %s\nfirst replica: %s", i+2, o.ids[j], b, a)
				}
			}
		}
		// No replica died: every event notified exactly once, in order.
		pushes := checkPushes(t, hooks, id, 30, "TASK_STATE_COMPLETED")
		if len(pushes) != len(onA.ids) {
			t.Fatalf("%d notifications for %d events", len(pushes), len(onA.ids))
		}
	})

	t.Run("cancel", func(t *testing.T) {
		got := reps[0].post(t, "/message:send", `{"message":{"messageId":"c-1","role":"ROLE_USER","parts":[{"text":"slow 60000"}]},
			"configuration":{"returnImmediately":true}}`)
		id, _ := field(got, "task", "id").(string)
		canceled := reps[1].post(t, "/tasks/"+id+":cancel", `{}`)
		if taskState(canceled) != "TASK_STATE_CANCELED" {
			t.Fatalf("CancelTask on another replica: %v", canceled)
		}
		for _, p := range reps {
			if s := taskState(p.getJSON(t, "/tasks/"+id)); s != "TASK_STATE_CANCELED" {
				t.Errorf("the task on %s is %s", p.addr, s)
			}
		}
	})

	t.Run("follow-up", func(t *testing.T) {
		got := reps[0].post(t, "/message:send", `{"message":{"messageId":"u-1","role":"ROLE_USER","parts":[{"text":"input-required"}]}}`)
		id, _ := field(got, "task", "id").(string)
		done := reps[2].post(t, "/message:send", `{"message":{"messageId":"u-2","taskId":"`+id+`","role":"ROLE_USER","parts":[{"text":"more"}]}}`)
		if taskState(field(done, "task")) != "TASK_STATE_COMPLETED" {
			t.Fatalf("the follow-up on another replica: %v", done)
		}
	})

	t.Run("same messageId at once", func(t *testing.T) {
		for i := range 5 {
			body := fmt.Sprintf(`{"message":{"messageId":"same-%d","role":"ROLE_USER","parts":[{"text":"hello"}]}}`, i)
			var got [2]map[string]any
			var wg sync.WaitGroup
			for k := range got {
				wg.Go(func() { got[k] = reps[k].post(t, "/message:send", body) })
			}
			wg.Wait()
			a, b := field(got[0], "task", "id"), field(got[1], "task", "id")
			if a == nil || a != b {
				t.Fatalf("one messageId on two replicas: %v and %v", got[0], got[1])
			}
		}
	})

	t.Run("ListTasks walk", func(t *testing.T) {
		want := int(field(reps[0].getJSON(t, "/tasks"), "totalSize").(float64))
		seen := map[string]bool{}
		token := ""
		for page := 0; ; page++ {
			p := reps[page%3]
			list := p.getJSON(t, "/tasks?pageSize=2&pageToken="+token)
			tasks, _ := list["tasks"].([]any)
			if len(tasks) == 0 {
				t.Fatalf("page %d on %s: %v", page, p.addr, list)
			}
			for _, tk := range tasks {
				id := field(tk, "id").(string)
				if seen[id] {
					t.Fatalf("task %s twice", id)
				}
				seen[id] = true
			}
			token, _ = list["nextPageToken"].(string)
			if token == "" {
				break
			}
		}
		if len(seen) != want {
			t.Fatalf("the walk found %d tasks of %d", len(seen), want)
		}
	})

	t.Run("kill -9", func(t *testing.T) {
		const streams = 8
		logs := make([]sseLog, streams)
		ids := make([]string, streams)
		var wg sync.WaitGroup
		for i := range streams {
			resp := openStream(t, reps[0], fmt.Sprintf(`{"message":{"messageId":"k-%d","role":"ROLE_USER","parts":[{"text":"stream 100000 every 20"}]},
				"configuration":{"taskPushNotificationConfig":{"url":%q}}}`, i, hookURL))
			got := make(chan string, 1)
			wg.Go(func() { logs[i] = readStreamNotify(resp, got) })
			ids[i] = <-got
		}
		// A task left waiting for input by the replica about to die, made
		// by a stream (1.1 with the preview: its events carry generations
		// 1, 2, ...).
		waiting := readStream(openStreamAs(t, reps[0], v, `{"message":{"messageId":"k-wait","role":"ROLE_USER","parts":[{"text":"input-required"}]}}`))
		if n := len(waiting.events); n < 2 || taskState(waiting.events[n-1]["statusUpdate"]) != "TASK_STATE_INPUT_REQUIRED" {
			t.Fatalf("the %s stream of input-required: %v", v, waiting.events)
		}
		checkConsecutive(t, "the stream of input-required", waiting.ids, 1)
		if preview {
			checkEventGenerations(t, "the 1.1 stream of input-required", waiting)
		}
		waitingID, _ := field(waiting.events[0], "task", "id").(string)
		// Followers of two of the tasks on the replicas that live on.
		followed := make([]sseLog, 2)
		var fwg sync.WaitGroup
		for i := range followed {
			fwg.Go(func() { followed[i] = subscribe(t, reps[1+i], ids[i], 1) })
		}
		time.Sleep(time.Second)
		reps[0].Signal(syscall.SIGKILL)
		killed := time.Now()
		reps[0].Wait()
		wg.Wait()

		// Ended FAILED by another replica within the lease (renewed every
		// lease/3, so it lapses at most a lease after the kill, and the
		// others look every lease/3).
		for {
			if taskState(reps[1].getJSON(t, "/tasks/"+ids[0])) == "TASK_STATE_FAILED" {
				break
			}
			if time.Since(killed) > 2*lease+time.Second {
				t.Fatalf("the task of the killed replica is not FAILED %v after the kill", time.Since(killed))
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Logf("tasks of the killed replica FAILED %v after the kill (lease %v)", time.Since(killed).Round(time.Millisecond), lease)

		for i, l := range logs {
			if len(l.ids) < 2 {
				t.Fatalf("stream %d got %d events before the kill", i, len(l.ids))
			}
			checkConsecutive(t, fmt.Sprintf("stream %d before the kill", i), l.ids, 1)
			last := l.ids[len(l.ids)-1]
			rest := subscribe(t, reps[1+i%2], ids[i], last)
			checkConsecutive(t, fmt.Sprintf("stream %d resumed on another replica", i), rest.ids, last+1)
			end := rest.events[len(rest.events)-1]
			if taskState(end["statusUpdate"]) != "TASK_STATE_FAILED" {
				t.Fatalf("stream %d resumed ends with %v, want FAILED", i, end)
			}
			chunks := 0
			for _, ev := range append(l.events, rest.events...) {
				if ev["artifactUpdate"] != nil {
					chunks++
				}
			}
			checkPushes(t, hooks, ids[i], chunks, "TASK_STATE_FAILED")
			// Its generation, on both replicas that live on: the events it
			// logged, those of the dead replica and the FAILED one written
			// by another (numbered from 1 without a gap, as checked).
			logged := uint64(len(l.ids) + len(rest.ids))
			for _, p := range reps[1:] {
				if !preview {
					break
				}
				task, g := getGeneration(t, p, ids[i])
				if g != logged || g != rest.ids[len(rest.ids)-1] || taskState(task) != "TASK_STATE_FAILED" {
					t.Fatalf("stream %d: 1.1 GetTask on %s after the kill: generation %d (%s); the task logged %d events, the last id %d",
						i, p.addr, g, taskState(task), logged, rest.ids[len(rest.ids)-1])
				}
			}
		}

		// The waiting task, made on the dead replica, at the generation of
		// its last event on both that live on; continued on one of them
		// by a 1.1 stream, it counts on by one per event, from the task
		// snapshot that opens the stream (the generation it had, plus
		// the follow-up's own timeline entry, which is no event).
		before := waiting.ids[len(waiting.ids)-1]
		for _, p := range reps[1:] {
			if !preview {
				break
			}
			if task, g := getGeneration(t, p, waitingID); g != before || taskState(task) != "TASK_STATE_INPUT_REQUIRED" {
				t.Fatalf("the waiting task: 1.1 GetTask on %s after the kill: generation %d (%s), want %d", p.addr, g, taskState(task), before)
			}
		}
		more := readStream(openStreamAs(t, reps[1], v, `{"message":{"messageId":"k-more","taskId":"`+waitingID+`","role":"ROLE_USER","parts":[{"text":"more"}]}}`))
		if n := len(more.events); n < 3 || taskState(more.events[n-1]["statusUpdate"]) != "TASK_STATE_COMPLETED" {
			t.Fatalf("the follow-up's %s stream: %v", v, more.events)
		}
		checkConsecutive(t, "the follow-up's stream", more.ids, before+1)
		after := more.ids[len(more.ids)-1]
		for _, p := range reps[1:] {
			if !preview {
				break
			}
			checkEventGenerations(t, "the follow-up's 1.1 stream", more)
			if task, g := getGeneration(t, p, waitingID); g != after || taskState(task) != "TASK_STATE_COMPLETED" {
				t.Fatalf("the waiting task: 1.1 GetTask on %s after its follow-up: generation %d (%s), want %d", p.addr, g, taskState(task), after)
			}
		}
		// A v1.0 GetTask sees no generation, on the same replica.
		if task := reps[1].getJSON(t, "/tasks/"+waitingID); task["generation"] != nil || taskState(task) != "TASK_STATE_COMPLETED" {
			t.Fatalf("v1.0 GetTask (preview %v): %v", preview, task)
		}
		// The followers on other replicas saw it all without a break.
		fwg.Wait()
		for i, f := range followed {
			checkConsecutive(t, fmt.Sprintf("follower of stream %d", i), f.ids, 2)
			if end := f.events[len(f.events)-1]; taskState(end["statusUpdate"]) != "TASK_STATE_FAILED" {
				t.Fatalf("follower of stream %d ends with %v", i, end)
			}
		}
	})
}

// readStreamNotify is readStream that sends the task id of the first
// event on id.
func readStreamNotify(resp *http.Response, id chan<- string) sseLog {
	pr, pw := io.Pipe()
	body := resp.Body
	go func() {
		defer pw.Close()
		buf := make([]byte, 4096)
		sent := false
		var acc strings.Builder
		for {
			n, err := body.Read(buf)
			if n > 0 {
				pw.Write(buf[:n])
				if !sent {
					acc.Write(buf[:n])
					if i := strings.Index(acc.String(), `"id":"`); i >= 0 {
						s := acc.String()[i+6:]
						if j := strings.IndexByte(s, '"'); j >= 0 {
							id <- s[:j]
							sent = true
						}
					}
				}
			}
			if err != nil {
				if !sent {
					id <- ""
				}
				return
			}
		}
	}()
	resp.Body = pr
	l := readStream(resp)
	body.Close()
	return l
}

// checkPushes waits until the webhook got task id's notifications: the
// Task first, every chunk in order (a chunk again only as a resend of the
// ones just before, after a kill: at least once), then the final state.
// It returns them.
func checkPushes(t *testing.T, hooks *pushLog, id string, chunks int, final string) []map[string]any {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		got := hooks.of(id)
		if n := len(got); n > 0 && taskState(got[n-1]["statusUpdate"]) == final {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s: %d notifications; want %s last", id, len(got), final)
		}
		time.Sleep(100 * time.Millisecond)
	}
	got := hooks.of(id)
	if got[0]["task"] == nil {
		t.Fatalf("task %s: the first notification is %v, want the Task", id, got[0])
	}
	next, resent := 0, 0
	for _, m := range got[1 : len(got)-1] {
		if m["statusUpdate"] != nil {
			continue // WORKING
		}
		parts, _ := field(m, "artifactUpdate", "artifact", "parts").([]any)
		text, _ := field(parts[0], "text").(string)
		n, err := strconv.Atoi(strings.TrimPrefix(text, "chunk "))
		switch {
		case err != nil:
			t.Fatalf("task %s: notification %v", id, m)
		case n == next:
			next++
		case n < next:
			resent++
		default:
			t.Fatalf("task %s: chunk %d after chunk %d: one lost", id, n, next-1)
		}
	}
	if next != chunks {
		t.Fatalf("task %s: %d chunks notified of %d", id, next, chunks)
	}
	if resent > 0 {
		t.Logf("task %s: %d chunks notified again after the kill", id, resent)
	}
	return got
}
