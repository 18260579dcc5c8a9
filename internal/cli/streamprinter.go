package cli

import (
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"parley.dev/parley/a2a"
)

// streamPrinter shows the events of a stream as they arrive, in the text
// form of render.go (fields and blocks). On a terminal a live line at the
// bottom also shows the state, the event count, the time and the tail of
// the artifact being streamed.
type streamPrinter struct {
	o     *output
	start time.Time

	mu     sync.Mutex
	events int
	state  a2a.TaskState
	taskID string
	arts   a2a.ArtifactAssembler // the stream's artifacts, reassembled
	// snapshot: the artifacts of the stream's first Task not shown yet.
	snapshot map[string]bool
	frame    int
}

// newStreamPrinter returns a printer writing to o, with its live line
// started.
func newStreamPrinter(o *output) *streamPrinter {
	p := &streamPrinter{o: o, start: time.Now(), snapshot: map[string]bool{}}
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
	var b strings.Builder
	switch {
	case r.GetTask() != nil:
		t := r.GetTask()
		o.field(&b, "Task ID", t.GetId())
		o.field(&b, "Context ID", t.GetContextId())
		o.field(&b, "State", o.paint(stateColor(t.GetStatus().GetState()), t.GetStatus().GetState().String()))
		// The artifacts the task had when the stream started (a
		// subscription, or a follow-up message, joins a task under way:
		// spec §3.1.6) are shown with the chunks that continue them, or at
		// the end: whether more chunks follow the snapshot does not say.
		p.mu.Lock()
		for _, a := range t.GetArtifacts() {
			p.snapshot[a.GetArtifactId()] = true
		}
		p.mu.Unlock()
	case r.GetStatusUpdate() != nil:
		su := r.GetStatusUpdate()
		o.field(&b, "State", o.paint(stateColor(su.GetStatus().GetState()), su.GetStatus().GetState().String()))
		if m := su.GetStatus().GetMessage(); m != nil && len(m.GetParts()) > 0 {
			o.block(&b, "Status Message", partsText(m.GetParts()))
		}
	case r.GetArtifactUpdate() != nil:
		if au := r.GetArtifactUpdate(); au.GetLastChunk() {
			id := au.GetArtifact().GetArtifactId()
			p.mu.Lock()
			delete(p.snapshot, id)
			p.mu.Unlock()
			p.finishArtifact(&b, id)
		}
	case r.GetMessage() != nil:
		o.messageBlock(&b, r.GetMessage())
	}
	o.printf("%s", b.String())
}

// An artifact streamed in chunks is shown whole, as reassembled, when its
// last chunk comes (or when the stream ends first), in one block: a
// chunk alone is no text to show (an agent streaming a model's output
// splits words, "Hel" and "lo"), and a block shown chunk by chunk would be
// interleaved with the events between them. The terminal's live line
// shows the artifact's text while it streams. The text of appended chunks
// is joined with nothing added (a2a.ArtifactText).

// setState records the task's latest state and id.
func (p *streamPrinter) setState(id string, s a2a.TaskState) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.state = s
	if id != "" {
		p.taskID = id
	}
}

// finishArtifact writes the artifact id as reassembled so far.
func (p *streamPrinter) finishArtifact(b *strings.Builder, id string) {
	p.mu.Lock()
	a := p.arts.Artifact(id)
	p.mu.Unlock()
	if a != nil {
		p.o.artifactBlock(b, a)
	}
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

// done ends the stream display: unfinished artifacts, and those of the
// first Task that no chunk continued, are printed as they are.
func (p *streamPrinter) done() {
	p.o.stopLiveLine()
	if p.o.json {
		return
	}
	p.mu.Lock()
	var ids []string
	for _, a := range p.arts.Artifacts() {
		if id := a.GetArtifactId(); !p.arts.Done(id) || p.snapshot[id] {
			ids = append(ids, id)
		}
	}
	p.mu.Unlock()
	var b strings.Builder
	for _, id := range ids {
		p.finishArtifact(&b, id)
	}
	p.o.printf("%s", b.String())
}
