package rest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/httpx"
	"parley.dev/parley/internal/transport"
)

// This file is the one copy of this binding's error mapping: the
// google.rpc.Status-shaped body (spec §11.6) a server writes, and how a
// client reads an error that ends a stream.

// AppendError renders {"error":{"code","status","message","details"}}
// (spec §11.6): code the HTTP status, status the name of the error's gRPC
// code (a2a.Code.GRPCStatus). status 0 means the error's own HTTP status,
// name "" its own status name; only a request for no operation is
// answered otherwise (routeError).
func AppendError(b []byte, e *a2a.Error, status int, name string) []byte {
	if status == 0 {
		status = e.Code.HTTPStatus()
	}
	if name == "" {
		_, name = e.Code.GRPCStatus()
	}
	b = append(b, `{"error":{"code":`...)
	b = strconv.AppendInt(b, int64(status), 10)
	b = append(b, `,"status":"`...)
	b = append(b, name...)
	b = append(b, `","message":`...)
	msg, _ := json.Marshal(e.WireMessage())
	b = append(b, msg...)
	b = append(b, `,"details":`...)
	b = httpx.AppendDetails(b, e)
	return append(b, "}}"...)
}

// streamError reads an error sent as the last event of a stream: the same
// body as an error response, its HTTP status in error.code.
func streamError(op, u string, data []byte) error {
	status := http.StatusInternalServerError
	if b, ok := httpx.ParseErrorBody(data); ok {
		if n, err := strconv.Atoi(string(bytes.TrimSpace(b.Code))); err == nil && n >= 400 && n <= 599 {
			status = n
		}
	}
	if e := httpx.HTTPError(status, nil, data); e != nil {
		return e
	}
	return &transport.Error{Op: op, URL: u, Phase: transport.PhaseStream, StatusCode: status, Err: httpx.BodySnippet(data)}
}
