package jsonrpc_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/jsonrpc"
	"parley.dev/parley/internal/transport"
)

// startPeer serves JSON-RPC answers made by answer from the request's
// method and raw id, the way another SDK's server might.
func startPeer(t *testing.T, answer func(method, id string) string) *jsonrpc.Transport {
	t.Helper()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, answer(req.Method, string(req.ID)))
	}))
	t.Cleanup(hs.Close)
	tr, err := jsonrpc.NewTransport(hs.URL+"/", transport.Config{HTTPClient: hs.Client(), Header: http.Header{}})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestClientReadsReasonFirst: the client identifies a JSON-RPC error by its
// ErrorInfo reason before its code: the official Go SDK's authentication
// error (-31401, UNAUTHENTICATED) is UnauthenticatedError, not an internal
// error, and a known reason wins over a code that says otherwise.
func TestClientReadsReasonFirst(t *testing.T) {
	t.Parallel()
	info := func(reason string) string {
		return `[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"` + reason + `","domain":"a2a-protocol.org","metadata":{"timestamp":"2026-01-01T00:00:00Z"}}]`
	}
	for _, c := range []struct {
		code int
		data string
		want a2a.Code
	}{
		{-31401, info("UNAUTHENTICATED"), a2a.CodeUnauthenticated},
		{-31403, info("UNAUTHORIZED"), a2a.CodePermissionDenied}, // the official Go SDK's permission denied
		{-31401, `null`, a2a.CodeUnauthenticated},
		{-31403, `null`, a2a.CodePermissionDenied},
		{-32603, info("TASK_NOT_FOUND"), a2a.CodeTaskNotFound},
		{-32001, info("SOMETHING_ELSE"), a2a.CodeTaskNotFound},
		{-32001, `null`, a2a.CodeTaskNotFound},
		{-31999, info("SOMETHING_ELSE"), a2a.CodeInternal},
	} {
		tr := startPeer(t, func(_, id string) string {
			b, _ := json.Marshal(c.code)
			return `{"jsonrpc":"2.0","id":` + id + `,"error":{"code":` + string(b) + `,"message":"refused","data":` + c.data + `}}`
		})
		_, err := tr.Call(context.Background(), a2a.MethodByName(a2a.MethodGetTask), &a2a.GetTaskRequest{Id: "t"})
		var ae *a2a.Error
		if !errors.As(err, &ae) || ae.Code != c.want {
			t.Errorf("GetTask answered code %d data %s = %v, want %s", c.code, c.data, err, c.want.Name())
		}
	}
}

// TestClientEmptyResult: a response with neither result nor error, or a
// null result, is success for DeleteTaskPushNotificationConfig (which
// returns nothing) and still a broken response for an operation with a
// result.
func TestClientEmptyResult(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, tail := range []string{`}`, `,"result":null}`, `,"result":{}}`} {
		tr := startPeer(t, func(_, id string) string { return `{"jsonrpc":"2.0","id":` + id + tail })
		del := &a2a.DeleteTaskPushNotificationConfigRequest{TaskId: "t", Id: "c"}
		if _, err := tr.Call(ctx, a2a.MethodByName(a2a.MethodDeleteTaskPushNotificationConfig), del); err != nil {
			t.Errorf("DeleteTaskPushNotificationConfig answered {...%s = %v, want success", tail, err)
		}
		if tail == `,"result":{}}` {
			continue
		}
		_, err := tr.Call(ctx, a2a.MethodByName(a2a.MethodGetTask), &a2a.GetTaskRequest{Id: "t"})
		var te *transport.Error
		if !errors.As(err, &te) {
			t.Errorf("GetTask answered {...%s = %v, want a *transport.Error", tail, err)
		}
	}
	// The id is still checked.
	tr := startPeer(t, func(string, string) string { return `{"jsonrpc":"2.0","id":999}` })
	if _, err := tr.Call(ctx, a2a.MethodByName(a2a.MethodDeleteTaskPushNotificationConfig), &a2a.DeleteTaskPushNotificationConfigRequest{TaskId: "t", Id: "c"}); err == nil {
		t.Errorf("DeleteTaskPushNotificationConfig answered with another id = nil error, want one")
	}
}
