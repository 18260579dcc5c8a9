package check

import (
	"fmt"
	"strings"

	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
)

// This file renders requests, responses and errors on one line each, for
// the Sent, Received and Finding of a result.

// abridge shortens s to about n characters on one line.
func abridge(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && (s[cut]&0xC0) == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}

// stateName is a task state without its TASK_STATE_ prefix.
func stateName(s a2a.TaskState) string { return strings.TrimPrefix(s.String(), "TASK_STATE_") }

// describeRequest renders a request on one line.
func describeRequest(x *exchange) string {
	var b strings.Builder
	b.WriteString(x.Method + " " + x.URL)
	if v := x.ReqHeader.Get("A2A-Version"); v != "" {
		b.WriteString("  A2A-Version: " + v)
	} else if x.ReqHeader != nil {
		b.WriteString("  (no A2A-Version)")
	}
	if a := x.ReqHeader.Get("Authorization"); a != "" {
		scheme, _, _ := strings.Cut(a, " ")
		b.WriteString("  Authorization: " + scheme + " …")
	}
	for _, h := range []string{"If-None-Match", "If-Modified-Since"} {
		if v := x.ReqHeader.Get(h); v != "" {
			b.WriteString("  " + h + ": " + v)
		}
	}
	if ct := x.ReqHeader.Get("Content-Type"); ct != "" && ct != "application/json" && ct != "application/a2a+json" {
		b.WriteString("  Content-Type: " + ct)
	}
	if len(x.ReqBody) > 0 {
		if x.IsGRPC {
			b.WriteString("  (protobuf)")
		}
		b.WriteString("  " + abridge(string(x.ReqBody), 220))
	}
	return b.String()
}

// describeResponse renders a response on one line.
func describeResponse(r *result) string {
	x := r.ex
	if x.Status == 0 {
		if x.Err != nil {
			return "no response: " + x.Err.Error()
		}
		return ""
	}
	if x.IsGRPC {
		return describeGRPC(r)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "HTTP %d %s", x.Status, x.contentType())
	if x.Header.Get("WWW-Authenticate") != "" {
		b.WriteString("  WWW-Authenticate: " + x.Header.Get("WWW-Authenticate"))
	}
	if x.contentType() == "text/event-stream" {
		fmt.Fprintf(&b, "  %d events:", len(x.Events))
		writeKinds(&b, x.Events)
		switch {
		case x.Closed:
			b.WriteString("; then the server closed the stream")
		case x.Err != nil:
			b.WriteString("; then " + x.Err.Error())
		default:
			b.WriteString("; stream still open when the checker stopped reading")
		}
		return b.String()
	}
	if len(x.Body) > 0 {
		b.WriteString("  " + abridge(string(x.Body), 260))
	}
	return b.String()
}

// describeGRPC renders a gRPC response on one line.
func describeGRPC(r *result) string {
	x := r.ex
	var b strings.Builder
	fmt.Fprintf(&b, "HTTP/%d %d %s", x.Proto, x.Status, x.Header.Get("Content-Type"))
	if v := x.Header.Get("WWW-Authenticate"); v != "" {
		b.WriteString("  www-authenticate: " + v)
	}
	if x.Streaming && r.err == nil && r.broken == "" {
		fmt.Fprintf(&b, "  %d messages:", len(x.Events))
		writeKinds(&b, x.Events)
		switch {
		case x.Closed:
			b.WriteString("; then the server ended the call: " + x.GRPC.describe())
		case x.Err != nil:
			b.WriteString("; then " + x.Err.Error())
		default:
			b.WriteString("; stream still open when the checker stopped reading")
		}
		return b.String()
	}
	if x.GRPC != nil {
		b.WriteString("  " + x.GRPC.describe())
	}
	switch {
	case r.broken != "":
		b.WriteString("  " + r.broken)
	case r.err == nil && len(x.Body) > 0:
		b.WriteString("  " + abridge(string(x.Body), 240))
	}
	return b.String()
}

// writeKinds lists the kinds of a stream's events; past ten, the first
// eight and the last.
func writeKinds(b *strings.Builder, evs []*event) {
	for i, ev := range evs {
		if i == 8 && len(evs) > 10 {
			fmt.Fprintf(b, " … (%d more) %s", len(evs)-9, evs[len(evs)-1].kind())
			return
		}
		b.WriteString(" " + ev.kind())
	}
}

// describeError names an error with its wire details.
func describeError(e *wireError) string {
	if e == nil {
		return "no error"
	}
	var parts []string
	switch {
	case e.Shape == "grpc":
		parts = append(parts, "gRPC")
		if e.HTTPStatus != 0 {
			parts = append(parts, fmt.Sprintf("HTTP %d", e.HTTPStatus))
		}
	case e.JSONRPCCode != 0:
		parts = append(parts, fmt.Sprintf("code %d", e.JSONRPCCode))
	case e.HTTPStatus != 0:
		parts = append(parts, fmt.Sprintf("HTTP %d", e.HTTPStatus))
	}
	if e.Status != "" {
		parts = append(parts, e.Status)
	}
	if e.Reason != "" {
		parts = append(parts, "reason "+e.Reason)
	}
	name := "an unidentified error"
	if e.Known {
		name = e.Code.Name()
	}
	s := name
	if len(parts) > 0 {
		s += " (" + strings.Join(parts, ", ") + ")"
	}
	if e.Message != "" {
		s += ": " + abridge(e.Message, 100)
	}
	return s
}

// firstMissing describes the first REQUIRED member m lacks ("field:
// description"), "" when it lacks none.
func firstMissing(m proto.Message) string {
	if v := a2a.CheckRequired(m); len(v) > 0 {
		return v[0].Field + ": " + v[0].Description
	}
	return ""
}
