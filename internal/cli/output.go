package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
)

// output writes what a client command shows. On a terminal it uses
// colours (unless NO_COLOR is set) and can keep a live status line at the
// bottom; piped, it writes plain lines and nothing decorative.
type output struct {
	w     io.Writer
	errw  io.Writer
	tty   bool // stdout is a terminal
	color bool
	json  bool

	mu       sync.Mutex
	live     string // the live line currently shown ("" if none)
	liveFunc func() string
	stopLive chan struct{}
	liveDone chan struct{}
}

func newOutput(stdout, stderr io.Writer, asJSON bool) *output {
	tty := isTerminal(stdout)
	return &output{w: stdout, errw: stderr, tty: tty, json: asJSON,
		color: tty && os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb"}
}

const (
	cReset   = "\x1b[0m"
	cBold    = "\x1b[1m"
	cDim     = "\x1b[2m"
	cRed     = "\x1b[31m"
	cGreen   = "\x1b[32m"
	cYellow  = "\x1b[33m"
	cBlue    = "\x1b[34m"
	cMagenta = "\x1b[35m"
	cCyan    = "\x1b[36m"
)

func (o *output) paint(code, s string) string {
	if !o.color || s == "" {
		return s
	}
	return code + s + cReset
}

func (o *output) bold(s string) string { return o.paint(cBold, s) }
func (o *output) dim(s string) string  { return o.paint(cDim, s) }

// state renders a task state without its prefix, coloured by class.
func (o *output) state(s a2a.TaskState) string {
	name := stateName(s)
	switch s {
	case a2a.TaskState_TASK_STATE_COMPLETED:
		return o.paint(cBold+cGreen, name)
	case a2a.TaskState_TASK_STATE_FAILED, a2a.TaskState_TASK_STATE_REJECTED:
		return o.paint(cBold+cRed, name)
	case a2a.TaskState_TASK_STATE_CANCELED:
		return o.paint(cYellow, name)
	case a2a.TaskState_TASK_STATE_INPUT_REQUIRED, a2a.TaskState_TASK_STATE_AUTH_REQUIRED:
		return o.paint(cBold+cMagenta, name)
	case a2a.TaskState_TASK_STATE_SUBMITTED, a2a.TaskState_TASK_STATE_WORKING:
		return o.paint(cBlue, name)
	}
	return name
}

func stateName(s a2a.TaskState) string { return strings.TrimPrefix(s.String(), "TASK_STATE_") }

// printf writes to stdout, clearing the live line first.
func (o *output) printf(format string, args ...any) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.clearLive()
	fmt.Fprintf(o.w, format, args...)
	o.drawLive()
}

// hint writes advice for a person: on stderr, and only when stdout is a
// terminal (a script gets nothing it would have to filter out).
func (o *output) hint(format string, args ...any) {
	if !o.tty || o.json {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.clearLive()
	fmt.Fprintf(o.errw, o.dim("→ "+format)+"\n", args...)
	o.drawLive()
}

// jsonLine writes one protocol message as a line of ProtoJSON.
func (o *output) jsonLine(m proto.Message) error {
	b, err := a2a.Marshal(m)
	if err != nil {
		return err
	}
	o.printf("%s\n", b)
	return nil
}

// ---------------------------------------------------------------------------
// The live line

// startLive shows a status line computed by f, redrawn every 100 ms, when
// stdout is a terminal. stopLive removes it.
func (o *output) startLive(f func() string) {
	if !o.tty || o.json {
		return
	}
	o.mu.Lock()
	o.liveFunc = f
	o.stopLive, o.liveDone = make(chan struct{}), make(chan struct{})
	o.mu.Unlock()
	go func() {
		defer close(o.liveDone)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-o.stopLive:
				return
			case <-t.C:
				o.mu.Lock()
				o.clearLive()
				o.drawLive()
				o.mu.Unlock()
			}
		}
	}()
}

func (o *output) stopLiveLine() {
	o.mu.Lock()
	stop := o.stopLive
	o.mu.Unlock()
	if stop == nil {
		return
	}
	close(stop)
	<-o.liveDone
	o.mu.Lock()
	o.clearLive()
	o.liveFunc, o.stopLive = nil, nil
	o.mu.Unlock()
}

// clearLive erases the live line; callers hold o.mu.
func (o *output) clearLive() {
	if o.live != "" {
		fmt.Fprint(o.w, "\r\x1b[K")
		o.live = ""
	}
}

// drawLive draws the live line; callers hold o.mu.
func (o *output) drawLive() {
	if o.liveFunc == nil {
		return
	}
	s := o.liveFunc()
	if s == "" {
		return
	}
	s = fitWidth(s, termWidth()-1)
	fmt.Fprint(o.w, s)
	o.live = s
}

// termWidth is the terminal width from $COLUMNS, else 80.
func termWidth() int {
	var n int
	if _, err := fmt.Sscan(os.Getenv("COLUMNS"), &n); err == nil && n > 20 {
		return n
	}
	return 80
}

// fitWidth cuts s (which may hold colour codes) to n visible characters.
func fitWidth(s string, n int) string {
	var b strings.Builder
	visible := 0
	inEsc := false
	for _, r := range s {
		switch {
		case r == '\x1b':
			inEsc = true
		case inEsc:
			if r == 'm' {
				inEsc = false
			}
		default:
			if visible >= n {
				b.WriteString(cReset)
				return b.String()
			}
			visible++
		}
		b.WriteRune(r)
	}
	return b.String()
}

var spinner = []rune("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏")

// liveAfter is how long a stream runs before the live line appears.
var liveAfter = 300 * time.Millisecond

// ---------------------------------------------------------------------------
// Rendering protocol objects for people

// partText renders one part: text as it is, files and data summarised.
func partText(p *a2a.Part) string {
	switch c := p.GetContent().(type) {
	case *a2a.Part_Text:
		return c.Text
	case *a2a.Part_Raw:
		return fmt.Sprintf("[file %s, %s, %s]", orDash(p.GetFilename()), orDash(p.GetMediaType()), byteSize(len(c.Raw)))
	case *a2a.Part_Url:
		return fmt.Sprintf("[file %s %s]", c.Url, orDash(p.GetMediaType()))
	case *a2a.Part_Data:
		b, err := protojson.Marshal(c.Data)
		if err != nil {
			return "[data]"
		}
		var v any
		if json.Unmarshal(b, &v) == nil {
			b, _ = json.Marshal(v) // compact
		}
		return string(b)
	}
	return ""
}

func partsText(ps []*a2a.Part) string {
	var out []string
	for _, p := range ps {
		out = append(out, partText(p))
	}
	return strings.Join(out, "\n")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func byteSize(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// indent prefixes every line of s.
func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n")
}

// printTask shows a task: id and state, context, status message,
// artifacts, and the history when showHistory.
func (o *output) printTask(t *a2a.Task, showHistory bool) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s  %s\n", o.bold("task"), t.GetId(), o.state(t.GetStatus().GetState()))
	if t.GetContextId() != "" {
		fmt.Fprintf(&b, "  %s  %s\n", o.dim("context"), t.GetContextId())
	}
	if ts := t.GetStatus().GetTimestamp(); ts != nil {
		fmt.Fprintf(&b, "  %s  %s\n", o.dim("updated"), ts.AsTime().UTC().Format(time.RFC3339))
	}
	if m := t.GetStatus().GetMessage(); m != nil && len(m.GetParts()) > 0 {
		fmt.Fprintf(&b, "  %s  %s\n", o.dim("message"), strings.ReplaceAll(partsText(m.GetParts()), "\n", "\n           "))
	}
	for _, a := range t.GetArtifacts() {
		name := a.GetArtifactId()
		if a.GetName() != "" {
			name += " (" + a.GetName() + ")"
		}
		fmt.Fprintf(&b, "  %s %s\n%s\n", o.dim("artifact"), name, indent(partsText(a.GetParts()), "    "))
	}
	if showHistory {
		fmt.Fprintf(&b, "  %s  %d message(s)\n", o.dim("history"), len(t.GetHistory()))
		for _, m := range t.GetHistory() {
			fmt.Fprintf(&b, "    %-5s %s\n", roleName(m.GetRole()), strings.ReplaceAll(partsText(m.GetParts()), "\n", "\n          "))
		}
	} else if n := len(t.GetHistory()); n > 0 {
		fmt.Fprintf(&b, "  %s  %d message(s)\n", o.dim("history"), n)
	}
	o.printf("%s", b.String())
}

func roleName(r a2a.Role) string {
	switch r {
	case a2a.Role_ROLE_USER:
		return "user"
	case a2a.Role_ROLE_AGENT:
		return "agent"
	}
	return "?"
}

// printMessage shows a direct reply.
func (o *output) printMessage(m *a2a.Message) {
	o.printf("%s %s\n", o.bold(roleName(m.GetRole())+":"), strings.ReplaceAll(partsText(m.GetParts()), "\n", "\n       "))
	if m.GetContextId() != "" {
		o.printf("  %s  %s\n", o.dim("context"), m.GetContextId())
	}
}

// printTaskList shows a page of tasks as a table.
func (o *output) printTaskList(l *a2a.ListTasksResponse) {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATE\tCONTEXT\tUPDATED\tARTIFACTS")
	for _, t := range l.GetTasks() {
		up := "-"
		if ts := t.GetStatus().GetTimestamp(); ts != nil {
			up = ts.AsTime().UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\n", t.GetId(), stateName(t.GetStatus().GetState()), orDash(t.GetContextId()), up, len(t.GetArtifacts()))
	}
	tw.Flush()
	out := b.String()
	if o.color {
		// Colour the state column after alignment (colour codes would
		// upset the column widths).
		for _, t := range l.GetTasks() {
			st := stateName(t.GetStatus().GetState())
			out = strings.Replace(out, t.GetId()+"  "+st, t.GetId()+"  "+o.state(t.GetStatus().GetState()), 1)
		}
		first, rest, _ := strings.Cut(out, "\n")
		out = o.dim(first) + "\n" + rest
	}
	o.printf("%s", out)
	o.printf("%d of %d task(s)", len(l.GetTasks()), l.GetTotalSize())
	if l.GetNextPageToken() != "" {
		o.printf("; next page: --page-token %s", l.GetNextPageToken())
	}
	o.printf("\n")
}

// printPushConfig shows a push notification configuration.
func (o *output) printPushConfig(c *a2a.TaskPushNotificationConfig) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s  task %s\n", o.bold("push config"), c.GetId(), c.GetTaskId())
	fmt.Fprintf(&b, "  %s  %s\n", o.dim("url"), c.GetUrl())
	if c.GetToken() != "" {
		fmt.Fprintf(&b, "  %s  %s\n", o.dim("token"), c.GetToken())
	}
	if a := c.GetAuthentication(); a != nil {
		cred := "(none)"
		if a.GetCredentials() != "" {
			cred = "(set)"
		}
		fmt.Fprintf(&b, "  %s  %s %s\n", o.dim("auth"), a.GetScheme(), cred)
	}
	o.printf("%s", b.String())
}

// ---------------------------------------------------------------------------
// Streams

// streamPrinter shows the events of a stream as they arrive. On a
// terminal, status changes and finished artifacts are printed as lines
// and a live line at the bottom shows the state, the event count, the
// time and the tail of the artifact being streamed; piped, artifact text
// is written as its chunks arrive.
type streamPrinter struct {
	o     *output
	start time.Time

	mu       sync.Mutex
	events   int
	state    a2a.TaskState
	taskID   string
	open     map[string]*strings.Builder // artifacts being streamed
	order    []string                    // their ids, in arrival order
	current  string                      // piped: the artifact whose text ends the current line
	midLine  bool                        // piped: the current line is unfinished
	lastTick time.Time
	frame    int
}

func newStreamPrinter(o *output) *streamPrinter {
	p := &streamPrinter{o: o, start: time.Now(), open: map[string]*strings.Builder{}}
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
	s := fmt.Sprintf("%c %s · %d events · %.1fs", spinner[p.frame%len(spinner)], p.o.state(p.state), p.events, time.Since(p.start).Seconds())
	if p.state == 0 {
		s = fmt.Sprintf("%c waiting · %d events · %.1fs", spinner[p.frame%len(spinner)], p.events, time.Since(p.start).Seconds())
	}
	if n := len(p.order); n > 0 {
		id := p.order[n-1]
		text := strings.ReplaceAll(p.open[id].String(), "\n", " ⏎ ")
		if r := utf8.RuneCountInString(text); r > 60 {
			text = "…" + string([]rune(text)[r-60:])
		}
		s += " · " + p.o.dim(id+":") + " " + text
	}
	return s
}

// event shows one stream event.
func (p *streamPrinter) event(ev a2a.StreamEvent) {
	o := p.o
	if o.json {
		o.jsonLine(ev.Response)
		return
	}
	p.mu.Lock()
	p.events++
	p.mu.Unlock()
	r := ev.Response
	switch {
	case r.GetTask() != nil:
		t := r.GetTask()
		p.setState(t.GetId(), t.GetStatus().GetState())
		p.line(fmt.Sprintf("%s %s  %s  %s %s", o.bold("task"), t.GetId(), o.state(t.GetStatus().GetState()), o.dim("context"), t.GetContextId()))
	case r.GetStatusUpdate() != nil:
		su := r.GetStatusUpdate()
		p.setState(su.GetTaskId(), su.GetStatus().GetState())
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

// artifact reassembles artifact chunks: a chunk with append adds to the
// artifact of the same id, any other starts it afresh.
func (p *streamPrinter) artifact(au *a2a.TaskArtifactUpdateEvent) {
	a := au.GetArtifact()
	id := a.GetArtifactId()
	text := partsText(a.GetParts())
	p.mu.Lock()
	buf, ok := p.open[id]
	if !ok || !au.GetAppend() {
		buf = &strings.Builder{}
		if !ok {
			p.order = append(p.order, id)
		}
		p.open[id] = buf
	}
	buf.WriteString(text)
	last := au.GetLastChunk()
	p.mu.Unlock()

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
		delete(p.open, id)
		p.order = removeID(p.order, id)
		p.mu.Unlock()
		p.o.printf("\n")
	}
}

// finishArtifact prints a complete artifact (terminal) and drops it from
// the live line.
func (p *streamPrinter) finishArtifact(id string) {
	p.mu.Lock()
	buf := p.open[id]
	delete(p.open, id)
	p.order = removeID(p.order, id)
	p.mu.Unlock()
	if buf == nil {
		return
	}
	p.o.printf("%s %s\n%s\n", p.o.dim("artifact"), id, indent(buf.String(), "    "))
}

func removeID(ids []string, id string) []string {
	out := ids[:0]
	for _, x := range ids {
		if x != id {
			out = append(out, x)
		}
	}
	return out
}

// done ends the stream display: unfinished artifacts are printed as they
// are.
func (p *streamPrinter) done() {
	p.o.stopLiveLine()
	if p.o.json {
		return
	}
	p.mu.Lock()
	ids := append([]string(nil), p.order...)
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

func jsonQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
