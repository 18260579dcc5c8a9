package mcpout

import (
	"fmt"
	"net/url"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/protobuf/encoding/protojson"

	"parley.dev/parley/a2a"
)

// outcome is what one A2A exchange ended with: a task, or the agent's direct
// reply (a Message, and no task).
type outcome struct {
	task  *a2a.Task
	reply *a2a.Message
	// note is the bridge's own word on the outcome, shown first (the user
	// declined the agent's question).
	note string
	// dismissed says the user dismissed the agent's question: it is not
	// asked again in this call.
	dismissed bool
}

// state is the A2A TaskState the outcome reports. A direct reply reports
// COMPLETED: the agent answered and the exchange is over (spec §3.1.1: a
// Message reply makes no task), which is the branch an MCP client takes on
// a finished call.
func (o outcome) state() a2a.TaskState {
	if o.task == nil {
		return a2a.TaskState_TASK_STATE_COMPLETED
	}
	return o.task.GetStatus().GetState()
}

// structured is the call's structuredContent: taskId, contextId and state,
// each id present when there is one.
func (o outcome) structured() map[string]any {
	m := map[string]any{"state": o.state().String()}
	id, ctxID := o.task.GetId(), o.task.GetContextId()
	if o.task == nil {
		ctxID = o.reply.GetContextId()
	}
	if id != "" {
		m["taskId"] = id
	}
	if ctxID != "" {
		m["contextId"] = ctxID
	}
	return m
}

// content is the call's content: a direct reply's parts; a task's status
// message (the agent's words: a question, a reason for failing) and then
// its artifacts' parts, in order.
func (o outcome) content() []mcp.Content {
	var out []mcp.Content
	if o.task == nil {
		for i, p := range o.reply.GetParts() {
			out = append(out, partContent(p, fmt.Sprintf("a2a://messages/%s/parts/%d", o.reply.GetMessageId(), i)))
		}
		return out
	}
	t := o.task
	if m := t.GetStatus().GetMessage(); m != nil {
		for i, p := range m.GetParts() {
			out = append(out, partContent(p, fmt.Sprintf("a2a://tasks/%s/status/parts/%d", t.GetId(), i)))
		}
	}
	for _, a := range t.GetArtifacts() {
		prevText := false
		for i, p := range a.GetParts() {
			_, isText := p.GetContent().(*a2a.Part_Text)
			if isText && prevText {
				// Consecutive text parts of one artifact are one text: the
				// chunks of a streamed artifact join as the agent sent them
				// (spec §4.2.2, append), "Hel" and "lo" making "Hello".
				out[len(out)-1].(*mcp.TextContent).Text += p.GetText()
				continue
			}
			prevText = isText
			out = append(out, partContent(p, fmt.Sprintf("a2a://tasks/%s/artifacts/%s/parts/%d", t.GetId(), a.GetArtifactId(), i)))
		}
	}
	return out
}

// statusText is the text of the task's status message ("" for none).
func (o outcome) statusText() string {
	return a2a.JoinText(o.task.GetStatus().GetMessage().GetParts())
}

// partContent is the MCP content block of one A2A part (spec §4.1.6):
// text as text; inline bytes as an image or audio block by media type,
// any other as an embedded resource (as text when the media type is text
// and the bytes are UTF-8); a URL as a resource link; structured data as
// its JSON text. uri names an inline file (A2A gives bytes no URI of their
// own); its last segment is the part's filename when it has one.
func partContent(p *a2a.Part, uri string) mcp.Content {
	mt := p.GetMediaType()
	switch c := p.GetContent().(type) {
	case *a2a.Part_Text:
		return &mcp.TextContent{Text: c.Text}
	case *a2a.Part_Raw:
		if p.GetFilename() != "" {
			uri += "/" + url.PathEscape(p.GetFilename())
		}
		switch {
		case strings.HasPrefix(mt, "image/"):
			return &mcp.ImageContent{Data: c.Raw, MIMEType: mt}
		case strings.HasPrefix(mt, "audio/"):
			return &mcp.AudioContent{Data: c.Raw, MIMEType: mt}
		case textual(mt) && utf8.Valid(c.Raw):
			return &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: uri, MIMEType: mt, Text: string(c.Raw)}}
		}
		if mt == "" {
			mt = "application/octet-stream"
		}
		return &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: uri, MIMEType: mt, Blob: c.Raw}}
	case *a2a.Part_Url:
		name := p.GetFilename()
		if name == "" {
			if u, err := url.Parse(c.Url); err == nil {
				name = path.Base(u.Path)
			}
		}
		if name == "" || name == "/" || name == "." {
			name = c.Url
		}
		return &mcp.ResourceLink{URI: c.Url, Name: name, MIMEType: mt}
	case *a2a.Part_Data:
		b, err := protojson.Marshal(c.Data)
		if err != nil {
			return &mcp.TextContent{Text: fmt.Sprintf("(a data part that cannot be written as JSON: %v)", err)}
		}
		return &mcp.TextContent{Text: string(b)}
	}
	return &mcp.TextContent{Text: "(an empty part)"}
}

// textual reports whether the media type mt is text: text/*, JSON, XML.
func textual(mt string) bool {
	mt, _, _ = strings.Cut(mt, ";")
	mt = strings.TrimSpace(strings.ToLower(mt))
	return strings.HasPrefix(mt, "text/") || mt == "application/json" || strings.HasSuffix(mt, "+json") ||
		mt == "application/xml" || strings.HasSuffix(mt, "+xml")
}
