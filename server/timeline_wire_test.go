package server_test

// The task timeline of the A2A 1.1 preview (spec PR #2129 §3.2.7, §3.2.8),
// over the wire: on the three bindings and every store, a task that asks
// for input and takes a follow-up reads back, in 1.1, as the timeline of
// the user's message, the agent's statuses, the follow-up and the statuses
// to COMPLETED, in increasing generations; its artifacts carry their
// start and end; timelineLength trims it; a 1.0 or 0.3 caller of the same
// server gets the same bytes with or without the new request members, and
// none of the new answer members.

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
	"parley.dev/parley/internal/testkit"
)

// entryText describes a timeline entry: "user:<text>" for a message, the
// short state for a status.
func entryText(e *a2a.TimelineEntry) string {
	if m := e.GetMessage(); m != nil {
		return "user:" + a2a.FirstText(m)
	}
	return strings.TrimPrefix(e.GetStatus().GetState().String(), "TASK_STATE_")
}

func TestTimelineOverTheWire(t *testing.T) {
	onEachStoreAndBinding(t, func(t *testing.T, ctx context.Context, s *testkit.Server, f client.TransportFactory, c11 *client.Client) {
		// The task: the message (1), WORKING (2), two chunks of
		// artifact a (3, 4), INPUT_REQUIRED (5); then the follow-up's
		// message (6), WORKING (7), artifact b (8), COMPLETED (9).
		statusGens := map[int64]bool{}
		var id string
		for _, text := range []string{"stream", "go on"} {
			msg := a2a.UserMessage(text)
			msg.TaskId = id
			for ev, err := range c11.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: msg}) {
				if err != nil {
					t.Fatalf("stream %q: %v", text, err)
				}
				if tk := ev.Response.GetTask(); tk != nil {
					id = tk.GetId()
				}
				if ev.Response.GetStatusUpdate() != nil {
					statusGens[ev.Generation()] = true
				}
			}
		}
		tk, err := c11.GetTask(ctx, &a2a.GetTaskRequest{Id: id})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		var gens []int64
		for _, e := range tk.GetTimeline() {
			got = append(got, entryText(e))
			gens = append(gens, e.GetGeneration())
			if e.GetStatus() != nil && !statusGens[e.GetGeneration()] {
				t.Errorf("status entry %s at %d: no status event carried that generation (%v)", entryText(e), e.GetGeneration(), statusGens)
			}
		}
		want := []string{"user:stream", "WORKING", "INPUT_REQUIRED", "user:go on", "WORKING", "COMPLETED"}
		if !slices.Equal(got, want) || !slices.Equal(gens, []int64{1, 2, 5, 6, 7, 9}) || tk.GetGeneration() != 9 {
			t.Fatalf("timeline %v at %v (task at %d); want %v at [1 2 5 6 7 9] (task at 9)", got, gens, tk.GetGeneration(), want)
		}
		if n := len(tk.GetHistory()); n < 3 {
			t.Errorf("history still populated: %d messages", n)
		}
		spans := map[string][2]int64{}
		for _, a := range tk.GetArtifacts() {
			spans[a.GetArtifactId()] = [2]int64{a.GetStartGeneration(), a.GetEndGeneration()}
		}
		if spans["a"] != [2]int64{3, 4} || spans["b"] != [2]int64{8, 8} {
			t.Errorf("artifact spans %v; want a [3 4] (streamed), b [8 8]", spans)
		}

		// timelineLength: 0 none, 2 the last two; on ListTasks too.
		for _, n := range []int32{0, 2} {
			tk, err := c11.GetTask(ctx, &a2a.GetTaskRequest{Id: id, TimelineLength: proto.Int32(n)})
			if err != nil || len(tk.GetTimeline()) != int(n) || (n == 2 && tk.GetTimeline()[0].GetGeneration() != 7) {
				t.Errorf("GetTask timelineLength %d: %v, %v", n, tk.GetTimeline(), err)
			}
			res, err := c11.ListTasks(ctx, &a2a.ListTasksRequest{TimelineLength: proto.Int32(n), IncludeArtifacts: proto.Bool(true)})
			if err != nil {
				t.Fatalf("ListTasks: %v", err)
			}
			for _, lt := range res.GetTasks() {
				if lt.GetId() == id && len(lt.GetTimeline()) != int(n) {
					t.Errorf("ListTasks timelineLength %d: %d entries", n, len(lt.GetTimeline()))
				}
			}
		}
		// A blocking send's answer: the last entry, the status it
		// stopped at, at the task's generation.
		resp, err := c11.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("stream"),
			Configuration: &a2a.SendMessageConfiguration{TimelineLength: proto.Int32(1)}})
		if st := resp.GetTask(); err != nil || len(st.GetTimeline()) != 1 || st.GetTimeline()[0].GetGeneration() != st.GetGeneration() ||
			st.GetTimeline()[0].GetStatus().GetState() != a2a.TaskState_TASK_STATE_INPUT_REQUIRED {
			t.Errorf("SendMessage timelineLength 1: %v, %v; want the INPUT_REQUIRED entry at the task's generation", st.GetTimeline(), err)
		}
		if _, err := c11.GetTask(ctx, &a2a.GetTaskRequest{Id: id, TimelineLength: proto.Int32(-1)}); !errors.Is(err, a2a.ErrInvalidParams) {
			t.Errorf("timelineLength -1: %v; want InvalidParams", err)
		}
		if _, err := c11.ListTasks(ctx, &a2a.ListTasksRequest{TimelineLength: proto.Int32(-1)}); !errors.Is(err, a2a.ErrInvalidParams) {
			t.Errorf("ListTasks timelineLength -1: %v; want InvalidParams", err)
		}
		if _, err := c11.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("stream"),
			Configuration: &a2a.SendMessageConfiguration{TimelineLength: proto.Int32(-1)}}); !errors.Is(err, a2a.ErrInvalidParams) {
			t.Errorf("SendMessage timelineLength -1: %v; want InvalidParams", err)
		}

		// 1.0: none of it, even when asked.
		c10 := versionClient(t, s, f, a2a.ProtocolVersion)
		tk10, err := c10.GetTask(ctx, &a2a.GetTaskRequest{Id: id, TimelineLength: proto.Int32(-1)})
		if err != nil || len(tk10.GetTimeline()) != 0 || tk10.GetArtifacts()[0].GetStartGeneration() != 0 {
			t.Errorf("1.0 GetTask: %v, %v; want no timeline and no artifact generations", tk10, err)
		}
	})
}

// TestTimelineNotForOlderVersions: the raw answers of GetTask in 1.0
// (JSON-RPC and HTTP+JSON) and tasks/get in 0.3 are byte for byte the
// same with and without the 1.1 request members, and hold none of the
// 1.1 answer members.
func TestTimelineNotForOlderVersions(t *testing.T) {
	s := startGenerationServer(t, nil, true)
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	c11 := versionClient(t, s, client.JSONRPC(), "1.1")
	id := awaitingInput(t, ctx, c11)
	var rpcURL, restURL string
	for _, in := range s.Card.GetSupportedInterfaces() {
		switch {
		case in.GetProtocolVersion() != a2a.ProtocolVersion:
		case in.GetProtocolBinding() == a2a.BindingJSONRPC:
			rpcURL = in.GetUrl()
		case in.GetProtocolBinding() == a2a.BindingHTTPJSON:
			restURL = in.GetUrl()
		}
	}
	do := func(method, url, version, body string) []byte {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		if version != "" {
			req.Header.Set("A2A-Version", version)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s %s: %d %s, %v", method, url, resp.StatusCode, b, err)
		}
		return b
	}
	rpc := func(method, version, extra string) []byte {
		return do("POST", rpcURL, version, `{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":{"id":"`+id+`"`+extra+`}}`)
	}
	cases := []struct {
		name        string
		plain, with []byte
	}{
		{"1.0 JSON-RPC", rpc("GetTask", "1.0", ""), rpc("GetTask", "1.0", `,"timelineLength":2,"currentGeneration":"1"`)},
		{"1.0 HTTP+JSON", do("GET", restURL+"/tasks/"+id, "1.0", ""), do("GET", restURL+"/tasks/"+id+"?timelineLength=2", "1.0", "")},
		{"0.3 JSON-RPC", rpc("tasks/get", "0.3", ""), rpc("tasks/get", "0.3", `,"timelineLength":2`)},
	}
	for _, c := range cases {
		if !bytes.Equal(c.plain, c.with) {
			t.Errorf("%s: the answer changed with the 1.1 members:\n%s\n%s", c.name, c.plain, c.with)
		}
		for _, member := range []string{`"timeline"`, `"startGeneration"`, `"endGeneration"`, `"generation"`} {
			if bytes.Contains(c.plain, []byte(member)) {
				t.Errorf("%s: the answer holds %s: %s", c.name, member, c.plain)
			}
		}
	}
	if b := rpc("GetTask", "1.1", `,"timelineLength":1`); !bytes.Contains(b, []byte(`"timeline":[{"status"`)) {
		t.Errorf("1.1 JSON-RPC GetTask timelineLength 1: %s; want the last status entry", b)
	}
}
