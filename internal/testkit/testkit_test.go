package testkit_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
	"parley.dev/parley/internal/testkit"
)

// TestStartServer: the card served lists the three bindings at the
// server's own address, and a client speaks to each of them.
func TestStartServer(t *testing.T) {
	t.Parallel()
	s := testkit.StartServer(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	card, err := client.Resolve(ctx, s.URL, nil)
	if err != nil {
		t.Fatalf("Resolve(%s) = %v", s.URL, err)
	}
	if got := card.GetSupportedInterfaces()[2].GetUrl(); got != s.Addr {
		t.Errorf("gRPC interface url = %q, want %q", got, s.Addr)
	}
	for _, f := range []client.TransportFactory{client.JSONRPC(), client.REST(), client.GRPC()} {
		c, err := client.New(card, &client.Options{Transports: []client.TransportFactory{f}})
		if err != nil {
			t.Fatal(err)
		}
		evs, err := testkit.Collect(c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: a2a.UserMessage("stream 2")}))
		want := []string{"task:TASK_STATE_SUBMITTED", "status:TASK_STATE_WORKING", "artifact:chunk 0", "artifact:chunk 1", "status:TASK_STATE_COMPLETED"}
		if got := testkit.Kinds(evs); err != nil || !slices.Equal(got, want) {
			t.Errorf("%s: SendStreamingMessage = %q, %v; want %q", c.Interface().GetProtocolBinding(), got, err, want)
		}
		c.Close()
	}
}

// TestReadSSE: events come back with their names, ids and joined data.
func TestReadSSE(t *testing.T) {
	t.Parallel()
	in := ": keep-alive\n\nid: 1\ndata: {\"a\":1}\n\nevent: error\ndata: x\ndata: y\n\n"
	evs := testkit.ReadSSE(t, strings.NewReader(in), "error")
	if len(evs) != 2 || evs[0].ID != 1 || string(evs[0].Data) != `{"a":1}` || evs[1].Name != "error" || string(evs[1].Data) != "x\ny" {
		t.Fatalf("ReadSSE(%q) = %+v", in, evs)
	}
}

// TestExchange: a handler's answer is recorded with the request's
// version header; the deadline is reported.
func TestExchange(t *testing.T) {
	t.Parallel()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(r.Header.Get("A2A-Version")))
	})
	rec, timedOut := testkit.Exchange(t, h, httptestRequest())
	if rec.Body.String() != "1.0" || timedOut {
		t.Fatalf("Exchange = %q, timed out %v; want 1.0, false", rec.Body.String(), timedOut)
	}
	slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	if _, timedOut := testkit.Exchange(t, slow, httptestRequest()); !timedOut {
		t.Fatal("a handler that waited for the deadline did not time out")
	}
}

func httptestRequest() *http.Request {
	r, _ := http.NewRequest(http.MethodPost, "/", strings.NewReader("{}"))
	return r
}
