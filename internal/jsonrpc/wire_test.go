package jsonrpc

import "testing"

// FuzzErrorObject: no JSON-RPC error object, however malformed, panics the
// client's decoder or yields an error without a code.
func FuzzErrorObject(f *testing.F) {
	f.Add(-32001, "m", `[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND"}]`)
	f.Add(-32602, "", `{"reason":"x"}`)
	f.Add(7, "x", `"text"`)
	f.Fuzz(func(t *testing.T, code int, msg, data string) {
		e := (&errorObject{Code: code, Message: msg, Data: []byte(data)}).toError()
		if e == nil || e.Code == 0 {
			t.Fatalf("toError(%d, %q, %q) = %v, want an error with a code", code, msg, data, e)
		}
	})
}
