package testkit

import (
	"bytes"
	"errors"
	"io"
	"iter"
	"slices"
	"strings"
	"testing"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/sse"
)

// Collect drains a stream: the events up to the first error, and that
// error (nil when the stream ended normally).
func Collect(seq iter.Seq2[a2a.StreamEvent, error]) ([]a2a.StreamEvent, error) {
	var evs []a2a.StreamEvent
	for ev, err := range seq {
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
	return evs, nil
}

// Rest drains what is left of a stream being read with iter.Pull2 (its
// next function), as Collect drains a whole one: for a test that reads
// the first event (the subscription is made), acts, then takes the rest.
func Rest(next func() (a2a.StreamEvent, error, bool)) ([]a2a.StreamEvent, error) {
	var evs []a2a.StreamEvent
	for {
		ev, err, ok := next()
		if !ok {
			return evs, nil
		}
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
}

// Kinds names the payload of each event, for comparing streams in failure
// messages: "task:STATE", "status:STATE", "artifact:TEXT", "message:TEXT",
// or "?" for an event without a payload.
func Kinds(evs []a2a.StreamEvent) []string {
	var out []string
	for _, ev := range evs {
		r := ev.Response
		switch {
		case r.GetTask() != nil:
			out = append(out, "task:"+r.GetTask().GetStatus().GetState().String())
		case r.GetStatusUpdate() != nil:
			out = append(out, "status:"+r.GetStatusUpdate().GetStatus().GetState().String())
		case r.GetArtifactUpdate() != nil:
			out = append(out, "artifact:"+a2a.JoinText(r.GetArtifactUpdate().GetArtifact().GetParts()))
		case r.GetMessage() != nil:
			out = append(out, "message:"+a2a.FirstText(r.GetMessage()))
		default:
			out = append(out, "?")
		}
	}
	return out
}

// maxEvent is the largest event ReadSSE accepts.
const maxEvent = 16 << 20

// ReadSSE reads a whole Server-Sent Events stream with sse.Reader and
// returns its events. It also checks the framing Parley's writer
// produces: lines end with LF alone; every line is blank, a comment, or an
// "id: ", "data: " or "event: " field (one space after the colon); and an
// event field names one of eventNames. Anything else, or a read error, fails the test.
func ReadSSE(tb testing.TB, r io.Reader, eventNames ...string) []sse.Event {
	tb.Helper()
	body, err := io.ReadAll(r)
	if err != nil {
		tb.Fatalf("reading the event stream: %v", err)
	}
	for line := range strings.SplitSeq(strings.TrimSuffix(string(body), "\n"), "\n") {
		switch {
		case strings.Contains(line, "\r"):
			tb.Fatalf("SSE line %q holds a carriage return, in %q", line, body)
		case line == "", strings.HasPrefix(line, ":"), strings.HasPrefix(line, "id: "), strings.HasPrefix(line, "data: "):
		case strings.HasPrefix(line, "event: ") && slices.Contains(eventNames, strings.TrimPrefix(line, "event: ")):
		default:
			tb.Fatalf("unexpected SSE line %q in %q", line, body)
		}
	}
	rd := sse.NewReader(bytes.NewReader(body), maxEvent)
	var out []sse.Event
	for {
		ev, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			tb.Fatalf("reading the event stream: %v", err)
		}
		out = append(out, ev)
	}
}
