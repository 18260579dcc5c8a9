package loadgen

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestCheckIDs: the event numbers of a stream are judged whole when they
// run from 1 to the last once each; a gap is lost, a repeat duplicated.
func TestCheckIDs(t *testing.T) {
	for _, tc := range []struct {
		body      string
		lost, dup int
		kind      string
	}{
		{"id: 1\ndata: a\n\nid: 2\ndata: b\n\nid: 3\ndata: c\n\n", 0, 0, ""},
		{"id: 1\ndata: a\n\nid: 3\ndata: c\n\n", 1, 0, "lost or duplicated events"},
		{"id: 1\ndata: a\n\nid: 2\ndata: b\n\nid: 2\ndata: b\n\nid: 3\ndata: c\n\n", 0, 1, "lost or duplicated events"},
		{"id: 2\ndata: b\n\n", 1, 0, "lost or duplicated events"}, // event 1 never came
		{"data: a\n\n", 0, 0, ""}, // unnumbered: nothing to judge
		{"id: x\ndata: a\n\n", 0, 0, "bad event id"},
		{"id: 99999999999\ndata: a\n\n", 0, 0, "bad event id"},
	} {
		w := &worker{}
		if kind := w.checkIDs([]byte(tc.body)); kind != tc.kind || w.eventsLost != tc.lost || w.eventsDup != tc.dup {
			t.Errorf("checkIDs(%q) = %q, lost %d, dup %d; want %q, %d, %d", tc.body, kind, w.eventsLost, w.eventsDup, tc.kind, tc.lost, tc.dup)
		}
	}
}

// TestCutAgainstBadResume: a server that does not honour Last-Event-ID
// (it replays the stream from the start) is caught: its cut streams count
// duplicated events and fail.
func TestCutAgainstBadResume(t *testing.T) {
	var mu sync.Mutex
	var subscribes []string
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, ":subscribe") {
			mu.Lock()
			subscribes = append(subscribes, r.Method+" "+r.URL.Path+" after "+r.Header.Get("Last-Event-ID"))
			mu.Unlock()
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, `id: 1`+"\ndata: "+`{"task":{"id":"t-1","status":{"state":"TASK_STATE_WORKING"}}}`+"\n\n")
		for i := 2; i <= 4; i++ {
			w.(http.Flusher).Flush()
			fmt.Fprintf(w, "id: %d\ndata: {\"artifactUpdate\":{}}\n\n", i)
		}
		fmt.Fprint(w, "id: 5\ndata: {\"statusUpdate\":{\"status\":{\"state\":\"TASK_STATE_COMPLETED\"}}}\n\n")
	}))
	defer hs.Close()
	res, err := Run(t.Context(), Config{URL: hs.URL, Op: OpStream, Binding: BindingREST, Concurrency: 1,
		Duration: 200 * time.Millisecond, Chunks: 2, CutShare: 1})
	if err != nil {
		t.Fatal(err)
	}
	r := res.Resume
	if r.StreamsCut == 0 || r.EventsDuplicated == 0 || res.ErrorKinds["lost or duplicated events"] == 0 {
		t.Fatalf("resume stats %+v, errors %v; want cut streams with duplicated events counted as failures", r, res.ErrorKinds)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(subscribes) == 0 || !strings.HasPrefix(subscribes[0], "GET /tasks/t-1:subscribe after ") {
		t.Errorf("subscribe requests %q, want GET /tasks/t-1:subscribe with Last-Event-ID", subscribes)
	}
}

// FuzzCheckIDs: whatever a server sends, judging its event numbers never
// panics, and the counts hold: no negative count, a repeat for every id
// beyond the distinct ones.
func FuzzCheckIDs(f *testing.F) {
	f.Add([]byte("id: 1\ndata: a\n\nid: 2\ndata: b\n\n"))
	f.Add([]byte("id: 3\nid: 3\nid:\nid: 18446744073709551615\n"))
	f.Add([]byte(`data: {"task":{"id":"`))
	f.Fuzz(func(t *testing.T, body []byte) {
		w := &worker{}
		kind := w.checkIDs(body)
		if w.eventsLost < 0 || w.eventsDup < 0 || (kind == "" && w.eventsLost+w.eventsDup > 0) {
			t.Fatalf("checkIDs(%q) = %q, lost %d, dup %d", body, kind, w.eventsLost, w.eventsDup)
		}
		if dup := len(eventIDs(body, nil)); kind == "" && w.eventsDup > dup {
			t.Fatalf("checkIDs(%q): %d repeats among %d ids", body, w.eventsDup, dup)
		}
		_ = taskID(body)
	})
}
