package client_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
	"parley.dev/parley/internal/a2aconnect"
	"parley.dev/parley/internal/sse"
	"parley.dev/parley/internal/testkit"
	"parley.dev/parley/server"
	"parley.dev/parley/taskstore"
	"parley.dev/parley/taskstore/memstore"
)

// slowText is a burst of chunks sent back to back: with a subscriber
// buffer of one event, the stream's writer falls behind the agent and the
// server cuts the reader off.
const slowText = "stream 3000"

// startSlow starts a server whose readers may fall one event behind.
func startSlow(t *testing.T) (*testkit.Server, taskstore.Store) {
	store := memstore.New()
	s := testkit.StartServer(t, &testkit.Options{Store: store, Quiet: true,
		Mutate: func(_ *a2a.AgentCard, o *server.Options) { o.SubscriberBuffer = 1 }})
	return s, store
}

// TestSlowReaderWire: a reader the server cut off for falling behind gets,
// on every binding, an InternalError whose metadata lastEventId is the
// number of the last event it was sent, so that it can resume after it.
func TestSlowReaderWire(t *testing.T) {
	t.Parallel()
	s, _ := startSlow(t)
	body := `{"message":{"messageId":"%s","role":"ROLE_USER","parts":[{"text":"` + slowText + `"}]}}`
	t.Run("JSONRPC", func(t *testing.T) {
		t.Parallel()
		env := `{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":` + strings.Replace(body, "%s", a2a.NewID(), 1) + `}`
		evs := postSSE(t, s.URL+"/", "application/json", env)
		last, end := evs[len(evs)-2], evs[len(evs)-1]
		w, err := testkit.RPCWireError(errorMember(t, end.Data))
		checkCutOff(t, w, err, last.ID)
	})
	t.Run("HTTP+JSON", func(t *testing.T) {
		t.Parallel()
		evs := postSSE(t, s.URL+"/message:stream", "application/a2a+json", strings.Replace(body, "%s", a2a.NewID(), 1))
		last, end := evs[len(evs)-2], evs[len(evs)-1]
		w, err := testkit.StatusWireError(500, errorMember(t, end.Data))
		checkCutOff(t, w, err, last.ID)
	})
	t.Run("GRPC", func(t *testing.T) {
		t.Parallel()
		c := a2aconnect.NewA2AServiceClient(testkit.H2CClient(), s.URL, connect.WithGRPC())
		req := connect.NewRequest(&a2a.SendMessageRequest{Message: a2a.UserMessage(slowText)})
		req.Header().Set("A2A-Version", "1.0")
		st, err := c.SendStreamingMessage(testCtx(t), req)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		n := 0
		for st.Receive() {
			n++
		}
		first, _ := strconv.ParseUint(st.ResponseHeader().Get("first-event-id"), 10, 64)
		var ce *connect.Error
		if !errors.As(st.Err(), &ce) {
			t.Fatalf("after %d events the stream ended with %v, want the cut-off status", n, st.Err())
		}
		w := &testkit.WireError{Message: ce.Message()}
		if ce.Code() == connect.CodeInternal {
			w.Code = a2a.CodeInternal
		}
		for _, d := range ce.Details() {
			if v, err := d.Value(); err == nil {
				if ei, ok := v.(*errdetails.ErrorInfo); ok {
					w.ErrorInfo, w.Reason, w.Metadata = true, ei.GetReason(), ei.GetMetadata()
				}
			}
		}
		checkCutOff(t, w, nil, first+uint64(n)-1)
	})
}

// postSSE posts body and reads the whole event stream; it fails the test
// unless there are at least two events.
func postSSE(t *testing.T, url, contentType, body string) []sse.Event {
	t.Helper()
	req, _ := http.NewRequestWithContext(testCtx(t), http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("A2A-Version", "1.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	evs := testkit.ReadSSE(t, resp.Body, "error", "message")
	if len(evs) < 2 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("%d events (%s), want a stream cut off after some", len(evs), b)
	}
	return evs
}

// errorMember returns the "error" member of a JSON-RPC response or of an
// HTTP+JSON error body.
func errorMember(t *testing.T, data []byte) []byte {
	t.Helper()
	i := strings.Index(string(data), `"error":`)
	if i < 0 {
		t.Fatalf("last event %s, want an error (the reader was never cut off?)", data)
	}
	return []byte(strings.TrimSuffix(strings.TrimSpace(string(data[i+len(`"error":`):])), "}"))
}

// checkCutOff checks that w is the cut-off error naming last as the last
// event sent.
func checkCutOff(t *testing.T, w *testkit.WireError, err error, last uint64) {
	t.Helper()
	if err != nil {
		t.Fatalf("decoding the error: %v", err)
	}
	if w.Code != a2a.CodeInternal || w.Metadata["lastEventId"] != strconv.FormatUint(last, 10) {
		t.Fatalf("error %s; want InternalError with metadata lastEventId %d (the last event sent)", w, last)
	}
}

// TestSlowReaderResumed: a client the server cuts off for reading too
// slowly resumes after the last event it got, and its iterator yields the
// task's whole log.
func TestSlowReaderResumed(t *testing.T) {
	t.Parallel()
	for _, b := range bindings {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			s, store := startSlow(t)
			var cutOff atomic.Int64
			c, err := client.New(s.Card, &client.Options{Transports: []client.TransportFactory{b.factory}, Resumes: 50,
				OnResume: func(_ string, _ uint64, cause error) {
					var ae *a2a.Error
					if errors.As(cause, &ae) && ae.Code == a2a.CodeInternal {
						cutOff.Add(1)
					}
				}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			evs, err := testkit.Collect(c.SendStreamingMessage(testCtx(t), &a2a.SendMessageRequest{Message: a2a.UserMessage(slowText)}))
			if err != nil {
				t.Fatalf("stream error after %d events: %v", len(evs), err)
			}
			log, err := store.Events(context.Background(), taskstore.Scope{}, evs[0].TaskID(), 0, 10_000)
			if err != nil {
				t.Fatal(err)
			}
			compareLog(t, evs, log)
			if cutOff.Load() == 0 {
				t.Errorf("the server never cut the reader off: the test proved nothing")
			}
		})
	}
}
