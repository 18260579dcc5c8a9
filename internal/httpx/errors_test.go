package httpx

import (
	"net/http"
	"testing"
)

// FuzzHTTPError: no error body, however malformed, panics the decoder or
// yields an error without a code.
func FuzzHTTPError(f *testing.F) {
	for _, s := range []string{
		`{"error":{"code":404,"status":"NOT_FOUND","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND","metadata":{"a":1}}]}}`,
		`{"type":"https://x/task-not-found","title":"t","status":400,"ext":[1,"a"]}`,
		`"text"`, `{"error":"x"}`, `{"code":-32001,"message":"m","data":{}}`, `<html>`,
	} {
		f.Add(400, s)
	}
	f.Fuzz(func(t *testing.T, status int, body string) {
		e := HTTPError(status, http.Header{}, []byte(body))
		if e != nil && e.Code == 0 {
			t.Fatalf("HTTPError(%d, %q) has no code", status, body)
		}
	})
}
