package cli_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// TestServeDiskFullInterruptedTask: a task whose stream broke because the
// disk filled is ended FAILED as soon as the store writes again, not at
// the next step of a retry backoff grown during the outage; and the
// moment GetTask says FAILED, resuming its stream with Last-Event-ID
// answers the events it missed, FAILED last.
func TestServeDiskFullInterruptedTask(t *testing.T) {
	disk := smallDisk(t, 16<<20)
	p := serve(t, "--agent", "conformance", "--store", "sqlite:"+filepath.Join(disk, "parley.db"), "--log-level", "error")
	resp := openStream(t, p, `{"message":{"messageId":"full-stream","role":"ROLE_USER","parts":[{"text":"stream 1000000 every 5"}]}}`)
	ids := make(chan string, 1)
	broken := make(chan sseLog, 1)
	go func() { broken <- readStreamNotify(resp, ids) }()
	id := <-ids
	filler := fill(t, disk)
	var last uint64
	select {
	case l := <-broken:
		for _, n := range l.ids {
			last = max(last, n)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the stream of a task on a full disk did not end")
	}
	if last == 0 {
		t.Fatal("the stream had no event before it broke")
	}
	// Full for long enough that a backoff doubling from 0.5 s would next
	// try about 7 s after the space returns.
	time.Sleep(8 * time.Second)
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	back := time.Now()
	for taskState(p.getJSON(t, "/tasks/"+id)) != "TASK_STATE_FAILED" {
		if time.Since(back) > 30*time.Second {
			t.Fatal("the interrupted task was not ended once space returned")
		}
		time.Sleep(20 * time.Millisecond)
	}
	took := time.Since(back)
	t.Logf("the interrupted task read FAILED %v after the space returned", took.Round(time.Millisecond))
	if took > 3*time.Second {
		t.Errorf("the interrupted task read FAILED %v after the space returned, want within 2 s", took)
	}

	req, _ := http.NewRequest("GET", "http://"+p.addr+"/tasks/"+id+":subscribe", nil)
	req.Header.Set("A2A-Version", "1.0")
	req.Header.Set("Last-Event-ID", strconv.FormatUint(last, 10))
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if r.StatusCode != http.StatusOK {
		r.Body.Close()
		t.Fatalf("resuming the ended task's stream after event %d: %s", last, r.Status)
	}
	l := readStream(r)
	checkConsecutive(t, "the resumed stream", l.ids, last+1)
	if len(l.ids) == 0 || lastState(l) != "TASK_STATE_FAILED" || taskState(l.events[len(l.events)-1]["statusUpdate"]) == "" {
		t.Fatalf("the resumed stream after event %d: %v; want the missed events, FAILED last", last, l.events)
	}
}
