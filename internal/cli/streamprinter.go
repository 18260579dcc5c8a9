package cli

import (
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"parley.dev/parley/a2a"
)

// streamPrinter shows the events of a stream as they arrive. On a
// terminal, status changes and finished artifacts are printed as lines
// and a live line at the bottom shows the state, the event count, the
// time and the tail of the artifact being streamed; piped, artifact text
// is written as its chunks arrive.
type streamPrinter struct {
	o     *output
	start time.Time

	mu      sync.Mutex
	events  int
	state   a2a.TaskState
	taskID  string
	arts    a2a.ArtifactAssembler // the stream's artifacts, reassembled
	current string                // piped: the artifact whose text ends the current line
	midLine bool                  // piped: the current line is unfinished
	frame   int
}

// newStreamPrinter returns a printer writing to o, with its live line
// started.
func newStreamPrinter(o *output) *streamPrinter {
	p := &streamPrinter{o: o, start: time.Now()}
	o.startLive(p.liveLine)
	return p
}

// liveLine is the terminal's status line.
func (p *streamPrinter) liveLine() string {
	if time.Since(p.start) < liveAfter {
		return "" // short streams go without a live line
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.frame++
	label := "waiting"
	if p.state != 0 {
		label = p.o.state(p.state)
	}
	s := fmt.Sprintf("%c %s · %d events · %.1fs", spinner[p.frame%len(spinner)], label, p.events, time.Since(p.start).Seconds())
	if a := p.streaming(); a != nil {
		id := a.GetArtifactId()
		text := strings.ReplaceAll(artifactBody(a), "\n", " ⏎ ")
		if r := utf8.RuneCountInString(text); r > 60 {
			text = "…" + string([]rune(text)[r-60:])
		}
		s += " · " + p.o.dim(id+":") + " " + text
	}
	return s
}

// event shows one stream event, and records the task's id and state
// (with --json too, for the exit code and the advice after Ctrl-C).
func (p *streamPrinter) event(ev a2a.StreamEvent) {
	o := p.o
	r := ev.Response
	switch {
	case r.GetTask() != nil:
		p.setState(r.GetTask().GetId(), r.GetTask().GetStatus().GetState())
	case r.GetStatusUpdate() != nil:
		p.setState(r.GetStatusUpdate().GetTaskId(), r.GetStatusUpdate().GetStatus().GetState())
	}
	if o.json {
		o.jsonLine(ev.Response)
		return
	}
	p.mu.Lock()
	p.events++
	p.arts.Add(ev)
	p.mu.Unlock()
	switch {
	case r.GetTask() != nil:
		t := r.GetTask()
		p.line(fmt.Sprintf("%s %s  %s  %s %s", o.bold("task"), t.GetId(), o.state(t.GetStatus().GetState()), o.dim("context"), t.GetContextId()))
		p.snapshotArtifacts(t)
	case r.GetStatusUpdate() != nil:
		su := r.GetStatusUpdate()
		s := fmt.Sprintf("%s %s", o.dim("status"), o.state(su.GetStatus().GetState()))
		if m := su.GetStatus().GetMessage(); m != nil && len(m.GetParts()) > 0 {
			s += "  " + partsText(m.GetParts())
		}
		p.line(s)
	case r.GetArtifactUpdate() != nil:
		p.artifact(r.GetArtifactUpdate())
	case r.GetMessage() != nil:
		m := r.GetMessage()
		p.line(fmt.Sprintf("%s %s", o.bold(roleName(m.GetRole())+":"), partsText(m.GetParts())))
	}
}

// setState records the task's latest state and id.
func (p *streamPrinter) setState(id string, s a2a.TaskState) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.state = s
	if id != "" {
		p.taskID = id
	}
}

// line prints a whole line, ending a piped artifact line first.
func (p *streamPrinter) line(s string) {
	p.mu.Lock()
	mid := p.midLine
	p.midLine, p.current = false, ""
	p.mu.Unlock()
	if mid {
		p.o.printf("\n")
	}
	p.o.printf("%s\n", s)
}

// artifact shows an artifact chunk, already added to p.arts by event:
// a whole artifact at its last chunk on a terminal, the chunk's text as it
// comes when piped. Either way the text of appended chunks is joined
// with nothing added (a2a.ArtifactText): an agent streaming a model's
// output sends tokens that carry their own spaces, and pieces of words
// ("Hel", "lo") that a separator would break.
func (p *streamPrinter) artifact(au *a2a.TaskArtifactUpdateEvent) {
	a := au.GetArtifact()
	id := a.GetArtifactId()
	text := artifactBody(a) // the chunk's parts, joined as the terminal joins the whole artifact's
	last := au.GetLastChunk()

	if p.o.tty {
		if last {
			p.finishArtifact(id)
		}
		return
	}
	// Piped: write the text as it comes.
	p.mu.Lock()
	switch {
	case p.current == id && au.GetAppend():
		p.mu.Unlock()
		p.o.printf("%s", text)
	default:
		mid := p.midLine
		p.current, p.midLine = id, true
		p.mu.Unlock()
		if mid {
			p.o.printf("\n")
		}
		p.o.printf("artifact %s: %s", id, text)
	}
	if last {
		p.mu.Lock()
		p.current, p.midLine = "", false
		p.mu.Unlock()
		p.o.printf("\n")
	}
}

// snapshotArtifacts shows the artifacts a Task event holds: those the
// task had when the stream started (a subscription, or a follow-up
// message, joins a task under way; spec §3.1.6: the stream begins with the
// task as it stands). Each is shown as a chunk would be: piped, its text so
// far, which the chunks that follow continue on the same line; on a
// terminal, whole at once (the snapshot does not say whether more will
// come: if chunks follow, the artifact is shown whole again at its last
// one).
func (p *streamPrinter) snapshotArtifacts(t *a2a.Task) {
	for _, a := range t.GetArtifacts() {
		id := a.GetArtifactId()
		if p.o.tty {
			p.finishArtifact(id)
			continue
		}
		p.mu.Lock()
		mid := p.midLine
		p.current, p.midLine = id, true
		p.mu.Unlock()
		if mid {
			p.o.printf("\n")
		}
		p.o.printf("artifact %s: %s", id, artifactBody(a))
	}
}

// finishArtifact prints an artifact as reassembled (terminal).
func (p *streamPrinter) finishArtifact(id string) {
	p.mu.Lock()
	a := p.arts.Artifact(id)
	body := artifactBody(a)
	p.mu.Unlock()
	if a == nil {
		return
	}
	p.o.printf("%s %s\n%s\n", p.o.dim("artifact"), id, indent(body, "    "))
}

// streaming returns the artifact shown on the live line: the last one
// whose last chunk has not come, or nil. The caller holds p.mu.
func (p *streamPrinter) streaming() *a2a.Artifact {
	arts := p.arts.Artifacts()
	for i := len(arts) - 1; i >= 0; i-- {
		if !p.arts.Done(arts[i].GetArtifactId()) {
			return arts[i]
		}
	}
	return nil
}

// artifactBody renders an artifact (reassembled, or as stored): consecutive text parts
// concatenated as chunks join (see a2a.ArtifactText), other parts summarised
// on lines of their own.
func artifactBody(a *a2a.Artifact) string {
	var lines []string
	text := false // the last line is text that the next text part continues
	for _, part := range a.GetParts() {
		_, isText := part.GetContent().(*a2a.Part_Text)
		if isText && text {
			lines[len(lines)-1] += partText(part)
			continue
		}
		lines = append(lines, partText(part))
		text = isText
	}
	return strings.Join(lines, "\n")
}

// done ends the stream display: unfinished artifacts are printed as they
// are.
func (p *streamPrinter) done() {
	p.o.stopLiveLine()
	if p.o.json {
		return
	}
	p.mu.Lock()
	var ids []string
	for _, a := range p.arts.Artifacts() {
		if id := a.GetArtifactId(); !p.arts.Done(id) {
			ids = append(ids, id)
		}
	}
	mid := p.midLine
	p.midLine = false
	p.mu.Unlock()
	if mid {
		p.o.printf("\n")
	}
	if p.o.tty {
		for _, id := range ids {
			p.finishArtifact(id)
		}
	}
}
