package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	"parley.dev/parley/a2a"
)

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
		var compact bytes.Buffer
		if json.Compact(&compact, b) != nil {
			return string(b)
		}
		return compact.String()
	}
	return ""
}

// partsText renders parts, one per line.
func partsText(ps []*a2a.Part) string {
	var out []string
	for _, p := range ps {
		out = append(out, partText(p))
	}
	return strings.Join(out, "\n")
}

// orDash is s, or "-" when s is empty.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// byteSize renders a size in bytes, KiB or MiB.
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

// The text form of a task, a message and a stream's events is the A2A CLI
// specification's floor (SPEC §11.2): one "Label: value" field per line,
// the same labels every time, and content that does not fit on a line (a
// status message, an artifact, the history) as a block: its own "Label:"
// line, the content, then a blank line. Each line of a block's content is
// indented by two spaces, so that an empty line inside the content is not
// taken for the blank line that closes the block. The task's id, context
// id and state come last (printIDs). On a terminal the labels are dimmed
// and the state coloured; piped, nothing but the text (no control
// sequences: output.color is set for terminals only).

// field writes one "Label: value" line.
func (o *output) field(b *strings.Builder, label, value string) {
	fmt.Fprintf(b, "%s %s\n", o.dim(label+":"), value)
}

// block writes a labelled block: the label line, the content indented by
// two spaces, a blank line.
func (o *output) block(b *strings.Builder, label, content string) {
	fmt.Fprintf(b, "%s\n%s\n\n", o.dim(label+":"), indent(content, "  "))
}

// artifactBlock writes an artifact: its id (and name) as fields, its
// content as a block.
func (o *output) artifactBlock(b *strings.Builder, a *a2a.Artifact) {
	o.field(b, "Artifact ID", a.GetArtifactId())
	if a.GetName() != "" {
		o.field(b, "Artifact Name", a.GetName())
	}
	if span := artifactSpan(a); span != "" {
		o.field(b, "Generations", span)
	}
	o.block(b, "Artifact", artifactBody(a))
}

// printTask shows a task: the time of its status, its status message,
// artifacts, and the history (whole when showHistory, else its length),
// then its ids and state.
func (o *output) printTask(t *a2a.Task, showHistory bool) {
	var b strings.Builder
	if ts := t.GetStatus().GetTimestamp(); ts != nil {
		o.field(&b, "Updated", ts.AsTime().UTC().Format(time.RFC3339))
	}
	if g := t.GetGeneration(); g != 0 { // an answer in A2A 1.1 (--if-generation takes it)
		o.field(&b, "Generation", fmt.Sprint(g))
	}
	if m := t.GetStatus().GetMessage(); m != nil && len(m.GetParts()) > 0 {
		o.block(&b, "Status Message", partsText(m.GetParts()))
	}
	for _, a := range t.GetArtifacts() {
		o.artifactBlock(&b, a)
	}
	if tl := t.GetTimeline(); len(tl) > 0 { // an answer in A2A 1.1
		lines := make([]string, len(tl))
		for i, e := range tl {
			lines[i] = o.timelineEntry(e)
		}
		o.block(&b, "Timeline", strings.Join(lines, "\n"))
	}
	o.field(&b, "History Messages", fmt.Sprint(len(t.GetHistory())))
	if showHistory && len(t.GetHistory()) > 0 {
		var h []string
		for _, m := range t.GetHistory() {
			h = append(h, roleName(m.GetRole())+": "+strings.ReplaceAll(partsText(m.GetParts()), "\n", "\n  "))
		}
		o.block(&b, "History", strings.Join(h, "\n"))
	}
	o.printf("%s", b.String())
	o.printIDs(t.GetId(), t.GetContextId(), t.GetStatus().GetState())
}

// artifactSpan says where an artifact lies among its task's generations
// (A2A 1.1, spec §3.2.8): "" when the answer does not say.
func artifactSpan(a *a2a.Artifact) string {
	switch s, e := a.GetStartGeneration(), a.GetEndGeneration(); {
	case s == 0:
		return ""
	case e == 0:
		return fmt.Sprintf("%d– (streaming)", s)
	case e == s:
		return fmt.Sprint(s)
	default:
		return fmt.Sprintf("%d–%d", s, e)
	}
}

// timelineEntry is one line of a task's timeline: its generation, then
// the client's message or the agent's state and message; an entry of a
// kind this client does not know is named so and skipped (spec §3.2.8:
// readers fail open).
func (o *output) timelineEntry(e *a2a.TimelineEntry) string {
	g := fmt.Sprintf("%4d", e.GetGeneration())
	switch {
	case e.GetMessage() != nil:
		m := e.GetMessage()
		return g + "  " + roleName(m.GetRole()) + "  " + partsText(m.GetParts())
	case e.GetStatus() != nil:
		st := e.GetStatus()
		line := g + "  " + o.state(st.GetState())
		if m := st.GetMessage(); m != nil && len(m.GetParts()) > 0 {
			line += "  " + partsText(m.GetParts())
		}
		return line
	}
	return g + "  " + o.dim("(an entry of a kind this parley does not know)")
}

// printIDs restates, last, what a caller needs to go on with a task: one
// "Label: value" line each for its id, its context id and its state (the
// TaskState wire name), the same labels every time (A2A CLI SPEC §8.2,
// §11.2).
func (o *output) printIDs(id, contextID string, st a2a.TaskState) {
	var b strings.Builder
	o.field(&b, "Task ID", id)
	o.field(&b, "Context ID", contextID)
	o.field(&b, "State", o.paint(stateColor(st), st.String()))
	o.printf("%s", b.String())
}

// roleName is the short name of a message's role.
func roleName(r a2a.Role) string {
	switch r {
	case a2a.Role_ROLE_USER:
		return "user"
	case a2a.Role_ROLE_AGENT:
		return "agent"
	}
	return "?"
}

// printMessage shows a direct reply (or a stream's message event): its
// role and ids as fields, its parts as a block.
func (o *output) printMessage(m *a2a.Message) {
	var b strings.Builder
	o.messageBlock(&b, m)
	o.printf("%s", b.String())
}

// messageBlock writes a message in the text form.
func (o *output) messageBlock(b *strings.Builder, m *a2a.Message) {
	o.field(b, "Role", roleName(m.GetRole()))
	if m.GetMessageId() != "" {
		o.field(b, "Message ID", m.GetMessageId())
	}
	if m.GetContextId() != "" {
		o.field(b, "Context ID", m.GetContextId())
	}
	o.block(b, "Message", partsText(m.GetParts()))
}

// printTaskList shows a page of tasks, each as its fields (Task ID first,
// so a reader splits the records there), then the page's counts and the
// token of the next page. The artifacts are counted when they were asked
// for (withArtifacts: --include-artifacts); otherwise the server left
// them out, and so does the list (a misleading 0 would say nothing), with
// a note saying how to get them.
func (o *output) printTaskList(l *a2a.ListTasksResponse, withArtifacts bool) {
	var b strings.Builder
	for _, t := range l.GetTasks() {
		o.field(&b, "Task ID", t.GetId())
		o.field(&b, "Context ID", t.GetContextId())
		o.field(&b, "State", o.paint(stateColor(t.GetStatus().GetState()), t.GetStatus().GetState().String()))
		if ts := t.GetStatus().GetTimestamp(); ts != nil {
			o.field(&b, "Updated", ts.AsTime().UTC().Format(time.RFC3339))
		}
		if withArtifacts {
			o.field(&b, "Artifacts", fmt.Sprint(len(t.GetArtifacts())))
		}
	}
	o.field(&b, "Tasks Shown", fmt.Sprint(len(l.GetTasks())))
	o.field(&b, "Total Size", fmt.Sprint(l.GetTotalSize()))
	if !withArtifacts && len(l.GetTasks()) > 0 {
		o.field(&b, "Note", "artifacts left out: --include-artifacts counts them")
	}
	if l.GetNextPageToken() != "" {
		o.field(&b, "Next Page Token", l.GetNextPageToken())
	}
	o.printf("%s", b.String())
}

// printPushConfig shows a push notification configuration.
func (o *output) printPushConfig(c *a2a.TaskPushNotificationConfig) {
	var b strings.Builder
	o.field(&b, "Config ID", c.GetId())
	o.field(&b, "Task ID", c.GetTaskId())
	o.field(&b, "URL", c.GetUrl())
	if c.GetToken() != "" {
		o.field(&b, "Token", c.GetToken())
	}
	if a := c.GetAuthentication(); a != nil {
		cred := "(none)"
		if a.GetCredentials() != "" {
			cred = "(set)"
		}
		o.field(&b, "Authentication", a.GetScheme()+" "+cred)
	}
	o.printf("%s", b.String())
}
