package client_test

import (
	"errors"
	"io"
	"net/http"
	"slices"
	"testing"

	"parley.dev/parley/a2a"
	"parley.dev/parley/client"
)

// TestErrorShapes: error bodies are read by their shape whatever the
// content type (seed 000 B8), with the ErrorInfo reason first and the HTTP
// status as the fallback.
func TestErrorShapes(t *testing.T) {
	t.Parallel()
	const info = `{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org","metadata":{"taskId":"t9"}}`
	cases := []struct {
		name       string
		binding    string
		status     int
		ctype      string
		body       string
		header     map[string]string
		code       a2a.Code // 0: a TransportError is expected
		statusCode int      // of the TransportError
		meta       map[string]string
		violations []string
	}{
		{name: "rpc.Status a2a+json", status: 404, ctype: "application/a2a+json",
			body: `{"error":{"code":404,"status":"NOT_FOUND","message":"gone","details":[` + info + `]}}`,
			code: a2a.CodeTaskNotFound, meta: map[string]string{"taskId": "t9"}},
		{name: "rpc.Status plain json, reason wins over status", status: 400, ctype: "application/json",
			body: `{"error":{"code":400,"status":"INVALID_ARGUMENT","message":"x","details":[` + info + `]}}`,
			code: a2a.CodeTaskNotFound},
		{name: "rpc.Status problem+json (Rust)", status: 400, ctype: "application/problem+json",
			body: `{"error":{"code":400,"status":"FAILED_PRECONDITION","message":"x","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_CANCELABLE","domain":"a2a-protocol.org"}]}}`,
			code: a2a.CodeTaskNotCancelable},
		{name: "BadRequest violations", status: 400, ctype: "application/a2a+json",
			body: `{"error":{"code":400,"status":"INVALID_ARGUMENT","message":"bad","details":[{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":"pageSize","description":"too big"}]}]}}`,
			code: a2a.CodeInvalidParams, violations: []string{"pageSize"}},
		{name: "status name only", status: 400, ctype: "application/json",
			body: `{"error":{"code":400,"status":"FAILED_PRECONDITION","message":"x"}}`, code: a2a.CodeUnsupportedOperation},
		{name: "problem type URI", status: 400, ctype: "application/problem+json",
			body: `{"type":"https://a2a-protocol.org/errors/version-not-supported","title":"Version not supported","status":400,"detail":"use 1.0","supportedVersions":["1.0","1.1"]}`,
			code: a2a.CodeVersionNotSupported, meta: map[string]string{"supportedVersions": "1.0,1.1"}},
		{name: "problem title", status: 400, ctype: "application/problem+json",
			body: `{"type":"about:blank","title":"Unsupported operation","status":400}`, code: a2a.CodeUnsupportedOperation},
		{name: "problem status only", status: 404, ctype: "application/problem+json",
			body: `{"title":"Not Found","status":404}`, code: a2a.CodeTaskNotFound},
		{name: "JSON string (.NET 404)", status: 404, ctype: "application/json", body: `"Task not found"`, code: a2a.CodeTaskNotFound},
		{name: "JSON-RPC code in a REST body", status: 400, ctype: "application/json",
			body: `{"error":{"code":-32002,"message":"not cancelable"}}`, code: a2a.CodeTaskNotCancelable},
		{name: "error name as reason", status: 400, ctype: "application/json",
			body: `{"error":{"code":400,"message":"x","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"ExtensionSupportRequiredError"}]}}`,
			code: a2a.CodeExtensionSupportRequired},
		{name: "413", status: 413, ctype: "application/a2a+json",
			body: `{"error":{"code":413,"status":"RESOURCE_EXHAUSTED","message":"too big"}}`, code: a2a.CodeRequestTooLarge},
		{name: "bare 401 with challenge", status: 401, ctype: "text/plain", body: "no",
			header: map[string]string{"WWW-Authenticate": `Bearer realm="x"`}, code: a2a.CodeUnauthenticated},
		{name: "HTML 503 from a proxy", status: 503, ctype: "text/html", body: "<h1>down</h1>", statusCode: 503},
		{name: "UNAVAILABLE body", status: 503, ctype: "application/json",
			body: `{"error":{"code":503,"status":"UNAVAILABLE","message":"later"}}`, statusCode: 503},
		{name: "HTML 404", status: 404, ctype: "text/html", body: "<h1>no</h1>", statusCode: 404},
		{name: "success that is not JSON", status: 200, ctype: "text/html", body: "<h1>hi</h1>", statusCode: 200},
		// JSON-RPC
		{name: "JSON-RPC error", binding: a2a.BindingJSONRPC, status: 200, ctype: "application/json",
			body: `{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"gone","data":[` + info + `]}}`,
			code: a2a.CodeTaskNotFound, meta: map[string]string{"taskId": "t9"}},
		{name: "JSON-RPC v0.3 data object", binding: a2a.BindingJSONRPC, status: 200, ctype: "application/json",
			body: `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad","data":{"reason":"whatever"}}}`, code: a2a.CodeInvalidParams},
		{name: "JSON-RPC unknown code with reason", binding: a2a.BindingJSONRPC, status: 200, ctype: "application/json",
			body: `{"jsonrpc":"2.0","id":1,"error":{"code":-31999,"message":"x","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"UNSUPPORTED_OPERATION"}]}}`,
			code: a2a.CodeUnsupportedOperation},
		{name: "JSON-RPC unknown code", binding: a2a.BindingJSONRPC, status: 200, ctype: "application/json",
			body: `{"jsonrpc":"2.0","id":1,"error":{"code":-31999,"message":"x"}}`, code: a2a.CodeInternal, meta: map[string]string{"jsonrpcCode": "-31999"}},
		{name: "JSON-RPC error under 401", binding: a2a.BindingJSONRPC, status: 401, ctype: "application/json",
			body: `{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"who are you"}}`, code: a2a.CodeUnauthenticated},
		{name: "JSON-RPC auth proxy rpc.Status", binding: a2a.BindingJSONRPC, status: 401, ctype: "application/json",
			body: `{"error":{"code":401,"status":"UNAUTHENTICATED","message":"token"}}`, code: a2a.CodeUnauthenticated},
		{name: "JSON-RPC 502", binding: a2a.BindingJSONRPC, status: 502, ctype: "text/html", body: "bad gateway", statusCode: 502},
		{name: "JSON-RPC wrong id", binding: a2a.BindingJSONRPC, status: 200, ctype: "application/json",
			body: `{"jsonrpc":"2.0","id":7,"result":{"id":"t","status":{"state":"TASK_STATE_WORKING"}}}`, statusCode: 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := bindings[1]
			if tc.binding == a2a.BindingJSONRPC {
				b = bindings[0]
			}
			c := fakeClient(t, b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				for k, v := range tc.header {
					w.Header().Set(k, v)
				}
				w.Header().Set("Content-Type", tc.ctype)
				w.WriteHeader(tc.status)
				io.WriteString(w, tc.body)
			}))
			_, err := c.GetTask(testCtx(t), &a2a.GetTaskRequest{Id: "t9"})
			if tc.code == 0 {
				var te *client.TransportError
				if !errors.As(err, &te) || te.StatusCode != tc.statusCode || te.Phase != client.PhaseResponse {
					t.Fatalf("GetTask = %v (%T), want a response-phase TransportError with status %d", err, err, tc.statusCode)
				}
				if te.Temporary() != (tc.statusCode >= 502 && tc.statusCode <= 504) {
					t.Errorf("Temporary() = %v for status %d", te.Temporary(), tc.statusCode)
				}
				return
			}
			var ae *a2a.Error
			if !errors.As(err, &ae) || ae.Code != tc.code {
				t.Fatalf("GetTask = %v (%T), want code %s", err, err, tc.code.Name())
			}
			for k, v := range tc.meta {
				if ae.Metadata[k] != v {
					t.Errorf("Metadata[%s] = %q, want %q (all: %v)", k, ae.Metadata[k], v, ae.Metadata)
				}
			}
			var fields []string
			for _, v := range ae.Violations {
				fields = append(fields, v.Field)
			}
			if !slices.Equal(fields, tc.violations) {
				t.Errorf("violations %q, want %q", fields, tc.violations)
			}
		})
	}
}
