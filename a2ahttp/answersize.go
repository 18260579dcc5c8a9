package a2ahttp

import (
	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
)

// bigAnswer is the size from which an answer or an event is charged to
// its caller's answer budget: smaller ones cost less than the goroutine
// that makes them, which MaxCalls bounds.
const bigAnswer = 64 << 10

// answerSize is what an answer or event m is charged: its protobuf size
// from bigAnswer on, else nothing (with no budget, nothing at all).
//
// proto.Size walks the message, reflectively through its oneofs: some
// 0.4 µs for a one-line artifact chunk, 8 % of what a 200-chunk stream
// costs the server (measured 2026-12-07). The events a long
// stream is made of (artifact chunks, status updates without a message)
// are first bounded from above by the lengths of their strings
// (eventBound), and sized only when that bound reaches bigAnswer.
func (cs *callers) answerSize(m proto.Message) int64 {
	if cs.budget <= 0 || m == nil {
		return 0
	}
	if r, ok := m.(*a2a.StreamResponse); ok {
		if n, ok := eventBound(r); ok && n < bigAnswer {
			return 0
		}
	}
	if n := proto.Size(m); n >= bigAnswer {
		return int64(n)
	}
	return 0
}

// fieldRoom is more than any field adds to the content it carries in the
// protobuf encoding: its tag (one or two bytes for the field numbers
// below) and, for a string, bytes or message, its length (at most ten
// bytes); it is also more than a bool, enum or varint field whole.
const fieldRoom = 16

// eventBound returns an upper bound of the protobuf size of an artifact
// chunk or a status update without a message, counting the strings'
// lengths and fieldRoom for every field each message has, set or not;
// ok is false for any other event, and for one that carries what it does
// not count (metadata, data parts, a status message, unknown fields).
// TestEventBound pins the fields counted to the messages' descriptors.
func eventBound(r *a2a.StreamResponse) (n int, ok bool) {
	if unknown(r) {
		return 0, false
	}
	switch p := r.GetPayload().(type) {
	case *a2a.StreamResponse_ArtifactUpdate:
		e := p.ArtifactUpdate
		a := e.GetArtifact()
		if e.GetMetadata() != nil || a.GetMetadata() != nil || unknown(e) || unknown(a) {
			return 0, false
		}
		n = 2*fieldRoom + 7*fieldRoom + len(e.GetTaskId()) + len(e.GetContextId()) +
			8*fieldRoom + len(a.GetArtifactId()) + len(a.GetName()) + len(a.GetDescription())
		for _, x := range a.GetExtensions() {
			n += fieldRoom + len(x)
		}
		for _, part := range a.GetParts() {
			if part.GetMetadata() != nil || part.GetData() != nil || unknown(part) {
				return 0, false
			}
			n += 8*fieldRoom + len(part.GetText()) + len(part.GetRaw()) + len(part.GetUrl()) +
				len(part.GetFilename()) + len(part.GetMediaType())
		}
		return n, true
	case *a2a.StreamResponse_StatusUpdate:
		e := p.StatusUpdate
		st := e.GetStatus()
		if e.GetMetadata() != nil || st.GetMessage() != nil || unknown(e) || unknown(st) || unknown(st.GetTimestamp()) {
			return 0, false
		}
		return 2*fieldRoom + 5*fieldRoom + len(e.GetTaskId()) + len(e.GetContextId()) + 3*fieldRoom + 3*fieldRoom, true
	}
	return 0, false
}

// unknown reports whether m (nil: no) carries unknown fields, which
// eventBound does not count.
func unknown(m proto.Message) bool {
	if m == nil {
		return false
	}
	rm := m.ProtoReflect()
	return rm.IsValid() && len(rm.GetUnknown()) > 0
}
