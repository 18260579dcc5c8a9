package execagent

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"parley.dev/parley/a2a"
	"parley.dev/parley/server"
)

// The JSON-lines protocol (Format JSONLines).
//
// In: one line, the request:
//
//	{"taskId": "…", "contextId": "…", "principal": "…",
//	 "message": {A2A Message}, "task": {A2A Task, before this message; absent for a new task}}
//
// Out: one JSON object per line, each either a status change
//
//	{"state": "INPUT_REQUIRED", "message": "Which colour?"}
//
// (states WORKING, INPUT_REQUIRED, AUTH_REQUIRED, COMPLETED, FAILED,
// REJECTED, CANCELED; the TASK_STATE_ prefix is optional; the message is
// optional text) or an artifact, in the A2A shape, with the chunk flags:
//
//	{"artifact": {"artifactId": "a", "parts": [{"data": {"k": 1}}]}, "append": false, "lastChunk": true}
//
// Blank lines are skipped. Anything else fails the task, naming the line.

// request is the line the program reads.
type request struct {
	TaskID    string          `json:"taskId"`
	ContextID string          `json:"contextId"`
	Principal string          `json:"principal"`
	Message   json.RawMessage `json:"message"`
	Task      json.RawMessage `json:"task,omitempty"`
}

// requestLine encodes the request of req as one line.
func requestLine(req *server.Request) ([]byte, error) {
	r := request{TaskID: req.TaskID, ContextID: req.ContextID, Principal: req.Principal}
	var err error
	if r.Message, err = a2a.Marshal(req.Message); err != nil {
		return nil, fmt.Errorf("the message could not be encoded for the program: %v", err)
	}
	if req.Task != nil {
		if r.Task, err = a2a.Marshal(req.Task); err != nil {
			return nil, fmt.Errorf("the task could not be encoded for the program: %v", err)
		}
	}
	b, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("the request could not be encoded for the program: %v", err)
	}
	return append(b, '\n'), nil
}

// line is one line the program writes, decoded.
type line struct {
	State     string          `json:"state"`
	Message   string          `json:"message"`
	Artifact  json.RawMessage `json:"artifact"`
	Append    bool            `json:"append"`
	LastChunk bool            `json:"lastChunk"`
}

// event is a decoded line, ready to emit.
type event struct {
	state     a2a.TaskState // set for a status change
	message   string
	artifact  *a2a.Artifact // set for an artifact
	append    bool
	lastChunk bool
}

// parseLine decodes one line of the program's output.
func parseLine(b []byte) (event, error) {
	var l line
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		return event{}, fmt.Errorf("not a JSON object of the protocol: %v", err)
	}
	if dec.More() {
		return event{}, errors.New("more than one JSON value on the line")
	}
	switch {
	case l.State != "" && l.Artifact != nil:
		return event{}, errors.New(`a line is either a "state" or an "artifact", not both`)
	case l.State != "":
		s, err := parseState(l.State)
		return event{state: s, message: l.Message}, err
	case l.Artifact != nil:
		if l.Message != "" {
			return event{}, errors.New(`"message" goes with "state", not with "artifact"`)
		}
		art := &a2a.Artifact{}
		if err := a2a.Unmarshal(l.Artifact, art); err != nil {
			return event{}, fmt.Errorf("artifact: %v", err)
		}
		if v := a2a.CheckRequired(art); len(v) > 0 {
			return event{}, fmt.Errorf("artifact: %s", a2a.JoinViolations(v))
		}
		return event{artifact: art, append: l.Append, lastChunk: l.LastChunk}, nil
	}
	return event{}, errors.New(`the line has neither "state" nor "artifact"`)
}

// parseState reads a state name: INPUT_REQUIRED, input-required or
// TASK_STATE_INPUT_REQUIRED. SUBMITTED and UNSPECIFIED are not the
// program's to report.
func parseState(s string) (a2a.TaskState, error) {
	name := "TASK_STATE_" + strings.TrimPrefix(strings.ToUpper(strings.ReplaceAll(s, "-", "_")), "TASK_STATE_")
	v, ok := a2a.TaskState_value[name]
	st := a2a.TaskState(v)
	if !ok || st == a2a.TaskState_TASK_STATE_UNSPECIFIED || st == a2a.TaskState_TASK_STATE_SUBMITTED {
		return 0, fmt.Errorf("unknown state %q (want WORKING, INPUT_REQUIRED, AUTH_REQUIRED, COMPLETED, FAILED, REJECTED or CANCELED)", s)
	}
	return st, nil
}

// emit hands one event to the core.
func (ev event) emit(em *server.Emitter) error {
	if ev.artifact == nil {
		return em.StatusText(ev.state, ev.message)
	}
	switch {
	case !ev.append && ev.lastChunk:
		return em.Artifact(ev.artifact)
	case !ev.append:
		return em.StartArtifact(ev.artifact)
	case ev.lastChunk:
		return em.FinishArtifact(ev.artifact)
	}
	return em.AppendArtifact(ev.artifact)
}

// readJSONLines reads the program's lines and emits their events until
// the output ends or a line breaks the protocol.
func (a *Agent) readJSONLines(p *proc, em *server.Emitter) result {
	br := bufio.NewReaderSize(p.stdout, readBuf)
	var res result
	var total int64
	for n := 1; ; n++ {
		b, err := readLine(br, a.o.MaxLine)
		total += int64(len(b)) + 1 // the newline counts too
		switch {
		case total > a.o.MaxOutput:
			res.failure = fmt.Sprintf("the program wrote more than %d bytes to standard output and was stopped", a.o.MaxOutput)
			return res
		case errors.Is(err, errLongLine):
			res.failure = fmt.Sprintf("line %d of the program's output is longer than %d bytes", n, a.o.MaxLine)
			return res
		}
		if t := bytes.TrimSpace(b); len(t) > 0 {
			if res.failure = a.handleLine(em, n, t, &res); res.failure != "" || res.stopped {
				return res
			}
		}
		if err != nil {
			return res // the end of the output
		}
	}
}

// handleLine decodes and emits line n; it returns why the task must fail,
// or "".
func (a *Agent) handleLine(em *server.Emitter, n int, b []byte, res *result) string {
	ev, err := parseLine(b)
	if err != nil {
		return fmt.Sprintf("line %d of the program's output is not a valid event: %v; the line: %s", n, err, quote(b))
	}
	if err := ev.emit(em); err != nil {
		if server.IgnoreClosed(err) == nil {
			res.stopped = true
			return ""
		}
		return fmt.Sprintf("line %d of the program's output was refused: %v; the line: %s", n, err, quote(b))
	}
	if ev.artifact == nil && (a2a.IsTerminal(ev.state) || a2a.IsInterrupted(ev.state)) {
		res.settled = true
	}
	if a2a.IsTerminal(ev.state) && ev.artifact == nil {
		res.stopped = true // the task is over: nothing more can be emitted
	}
	return ""
}

// errLongLine is readLine's error for a line longer than its bound.
var errLongLine = errors.New("execagent: line too long")

// readLine reads one line (without its newline), at most max bytes; the
// error is io.EOF (or another read error) at the end of the output.
func readLine(br *bufio.Reader, max int) ([]byte, error) {
	var b []byte
	for {
		frag, err := br.ReadSlice('\n')
		b = append(b, frag...)
		if len(b) > max+1 {
			return b, errLongLine
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return bytes.TrimSuffix(b, []byte("\n")), err
	}
}

// quote shows a line in a status message: quoted, and cut after 200 bytes.
func quote(b []byte) string {
	const max = 200
	if len(b) > max {
		return fmt.Sprintf("%q… (%d bytes)", b[:max], len(b))
	}
	return fmt.Sprintf("%q", b)
}
