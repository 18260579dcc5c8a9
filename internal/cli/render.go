package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"
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
	if g := t.GetGeneration(); g != 0 { // an answer in A2A 1.1 (--if-generation takes it)
		fmt.Fprintf(&b, "  %s  %d\n", o.dim("generation"), g)
	}
	if m := t.GetStatus().GetMessage(); m != nil && len(m.GetParts()) > 0 {
		fmt.Fprintf(&b, "  %s  %s\n", o.dim("message"), strings.ReplaceAll(partsText(m.GetParts()), "\n", "\n           "))
	}
	for _, a := range t.GetArtifacts() {
		name := a.GetArtifactId()
		if a.GetName() != "" {
			name += " (" + a.GetName() + ")"
		}
		fmt.Fprintf(&b, "  %s %s%s\n%s\n", o.dim("artifact"), name, o.dim(artifactSpan(a)), indent(artifactBody(a), "    "))
	}
	if tl := t.GetTimeline(); len(tl) > 0 { // an answer in A2A 1.1
		fmt.Fprintf(&b, "  %s  %d entr%s, by generation\n", o.dim("timeline"), len(tl), map[bool]string{true: "y", false: "ies"}[len(tl) == 1])
		for _, e := range tl {
			fmt.Fprintf(&b, "    %s\n", strings.ReplaceAll(o.timelineEntry(e), "\n", "\n          "))
		}
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
	o.printIDs(t.GetId(), t.GetContextId(), t.GetStatus().GetState())
}

// artifactSpan says where an artifact lies among its task's generations
// (A2A 1.1, spec §3.2.8): "" when the answer does not say.
func artifactSpan(a *a2a.Artifact) string {
	switch s, e := a.GetStartGeneration(), a.GetEndGeneration(); {
	case s == 0:
		return ""
	case e == 0:
		return fmt.Sprintf("  generation %d…, streaming", s)
	case e == s:
		return fmt.Sprintf("  generation %d", s)
	default:
		return fmt.Sprintf("  generations %d–%d", s, e)
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
	o.printf("Task ID: %s\nContext ID: %s\nState: %s\n", id, contextID, st)
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

// printMessage shows a direct reply.
func (o *output) printMessage(m *a2a.Message) {
	o.printf("%s %s\n", o.bold(roleName(m.GetRole())+":"), strings.ReplaceAll(partsText(m.GetParts()), "\n", "\n       "))
	if m.GetContextId() != "" {
		o.printf("  %s  %s\n", o.dim("context"), m.GetContextId())
	}
}

// printTaskList shows a page of tasks as a table. The ARTIFACTS column
// counts each task's artifacts when they were asked for (withArtifacts:
// --include-artifacts); otherwise the server left them out, and so does
// the table (a column of "-" or a misleading 0 would say nothing), with a
// note after the count saying how to get them.
func (o *output) printTaskList(l *a2a.ListTasksResponse, withArtifacts bool) {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	header := "ID\tSTATE\tCONTEXT\tUPDATED"
	if withArtifacts {
		header += "\tARTIFACTS"
	}
	fmt.Fprintln(tw, header)
	for _, t := range l.GetTasks() {
		up := "-"
		if ts := t.GetStatus().GetTimestamp(); ts != nil {
			up = ts.AsTime().UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s", t.GetId(), stateName(t.GetStatus().GetState()), orDash(t.GetContextId()), up)
		if withArtifacts {
			fmt.Fprintf(tw, "\t%d", len(t.GetArtifacts()))
		}
		fmt.Fprintln(tw)
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
	if !withArtifacts && len(l.GetTasks()) > 0 {
		o.printf(" (artifacts left out: --include-artifacts counts them)")
	}
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
