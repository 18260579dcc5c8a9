package loadgen

import (
	"bytes"
	"fmt"
	"net/url"
	"strconv"
	"time"
)

// Resumed streams (Config.CutShare). A worker drops the connection of a
// share of its streams after some events, then calls SubscribeToTask for
// the task with the SSE standard's Last-Event-ID naming the last event it
// read, and reads that stream to the end. The two parts together must be
// the whole stream: every event number from 1 to the last exactly once.
// Every numbered stream is checked so, cut or not.

// ResumeStats is what the streams' event numbers showed (OpStream).
type ResumeStats struct {
	// StreamsCut counts the streams dropped mid-way and resumed.
	StreamsCut int `json:"streamsCut"`
	// EventsLost counts event numbers missing from streams (below the
	// last one received); EventsDuplicated, events received twice. Both
	// must be 0.
	EventsLost       int `json:"eventsLost"`
	EventsDuplicated int `json:"eventsDuplicated"`
}

// maxEventID bounds the event numbers a stream may carry here: a stream of
// the conformance agent has Chunks+3 events.
const maxEventID = 1 << 20

// cuts reports whether request n of worker i is a stream to cut: a share
// cfg.CutShare of them, spread evenly.
func (t *target) cuts(n uint64, i int) bool {
	if t.cutShare <= 0 {
		return false
	}
	k := float64(n + uint64(i))
	return uint64(k*t.cutShare) != uint64((k-1)*t.cutShare)
}

// cutAndResume sends the stream request, drops the connection after some
// events (between 1 and Chunks+2, varying with n), resumes the task with
// SubscribeToTask and Last-Event-ID, and returns the status of the resumed
// stream and the two bodies joined. A stream that ended before its cut
// point is returned as it is.
func (w *worker) cutAndResume(t *target, n uint64, deadline time.Time) (int, []byte, error) {
	after := 1 + int((n*31+uint64(w.index))%uint64(t.chunks+2))
	status, body, cut, err := w.conn.roundTripCut(w.req, deadline, after)
	if err != nil || status != 200 || !cut {
		return status, body, err
	}
	w.streamsCut++
	// An event the cut split is lost, as an SSE client drops an event
	// whose blank line never came: the part ends with the last whole
	// event, and the resume asks for what follows it.
	if i := bytes.LastIndex(body, eventEnd); i >= 0 {
		body = body[:i+len(eventEnd)]
	}
	w.part = append(w.part[:0], body...)
	id := taskID(w.part)
	w.ids = eventIDs(w.part, w.ids[:0])
	if id == "" || len(w.ids) == 0 {
		return 0, nil, &errKind{"resume", fmt.Errorf("no task id or event number in the first %d events: %.200s", after, w.part)}
	}
	status, body, err = w.conn.roundTrip(t.ep.subscribe(id, w.ids[len(w.ids)-1]), deadline)
	if err != nil {
		return status, body, err
	}
	w.part = append(w.part, body...)
	return status, w.part, nil
}

// roundTripCut sends req and reads the stream answering it until it holds
// events complete events, then drops the connection (cut). A stream that
// ends first is read whole (not cut).
func (c *rawConn) roundTripCut(req []byte, deadline time.Time, events int) (status int, body []byte, cut bool, err error) {
	if c.nc == nil {
		if err := c.dial(deadline); err != nil {
			return 0, nil, false, err
		}
	}
	c.nc.SetDeadline(deadline)
	if _, err := c.nc.Write(req); err != nil {
		c.broke()
		return 0, nil, false, &errKind{"write", err}
	}
	status, keep, cut, err := c.readBody(events)
	switch {
	case err != nil:
		c.broke()
	case !keep:
		c.answered()
		c.close()
	default:
		c.answered()
	}
	return status, c.body, cut, err
}

// subscribe is the SubscribeToTask request of the task id resuming after
// event number after.
func (ep *endpoint) subscribe(id string, after uint64) []byte {
	last := "Last-Event-ID: " + strconv.FormatUint(after, 10) + "\r\n"
	if ep.rpc {
		req, _ := ep.post(ep.rpcPath, "application/json", "text/event-stream", rpcBody("SubscribeToTask", `{"id":"`+id+`"}`))
		i := bytes.Index(req, []byte("\r\n")) + 2 // after the request line
		return append(req[:i:i], append([]byte(last), req[i:]...)...)
	}
	return []byte("GET " + ep.base + "/tasks/" + url.PathEscape(id) + ":subscribe HTTP/1.1\r\nHost: " + ep.host +
		"\r\nA2A-Version: 1.0\r\nAccept: text/event-stream\r\n" + last + "\r\n")
}

// taskMember starts the task of a stream's first event, in the field order
// Parley writes (id first); the conformance agent's ids need no escaping.
var taskMember = []byte(`"task":{"id":"`)

// taskID returns the id of the task a stream's first event carries.
func taskID(body []byte) string {
	i := bytes.Index(body, taskMember)
	if i < 0 {
		return ""
	}
	rest := body[i+len(taskMember):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return ""
	}
	return string(rest[:j])
}

// eventIDs appends the numbers of the "id:" fields of an event stream to
// ids (0 for one that is not a number).
func eventIDs(body []byte, ids []uint64) []uint64 {
	for len(body) > 0 {
		line := body
		if i := bytes.IndexByte(body, '\n'); i >= 0 {
			line, body = body[:i], body[i+1:]
		} else {
			body = nil
		}
		if v, ok := bytes.CutPrefix(line, []byte("id:")); ok {
			n, _ := strconv.ParseUint(string(bytes.TrimSpace(v)), 10, 64)
			ids = append(ids, n)
		}
	}
	return ids
}

// checkIDs counts the events of a numbered stream that are missing (a
// number from 1 to the highest received that never came) or repeated,
// and returns the failure kind when there are any ("" for none, and for a
// stream without numbers).
func (w *worker) checkIDs(body []byte) string {
	w.ids = eventIDs(body, w.ids[:0])
	if len(w.ids) == 0 {
		return ""
	}
	top := uint64(0)
	for _, id := range w.ids {
		if id == 0 || id > maxEventID {
			return "bad event id"
		}
		top = max(top, id)
	}
	if cap(w.seen) < int(top)+1 {
		w.seen = make([]bool, top+1)
	}
	seen := w.seen[:top+1]
	clear(seen)
	distinct, dup := 0, 0
	for _, id := range w.ids {
		if seen[id] {
			dup++
			continue
		}
		seen[id] = true
		distinct++
	}
	lost := int(top) - distinct
	w.eventsLost += lost
	w.eventsDup += dup
	if lost+dup > 0 {
		return "lost or duplicated events"
	}
	return ""
}
