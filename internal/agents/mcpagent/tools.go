package mcpagent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"parley.dev/parley/a2a"
)

// toolSet is the server's tools, by name and in the server's order.
type toolSet struct {
	byName map[string]*mcp.Tool
	names  []string
}

// maxTools bounds the tools listed: a server listing more is refused at
// start rather than making a card without end.
const maxTools = 1000

// listTools lists every tool of the session, page by page.
func listTools(ctx context.Context, sess *mcp.ClientSession) (*toolSet, error) {
	ts := &toolSet{byName: map[string]*mcp.Tool{}}
	for t, err := range sess.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		if _, dup := ts.byName[t.Name]; dup || t.Name == "" {
			continue
		}
		if len(ts.names) == maxTools {
			return nil, fmt.Errorf("the server lists more than %d tools", maxTools)
		}
		ts.byName[t.Name] = t
		ts.names = append(ts.names, t.Name)
	}
	return ts, nil
}

// invocation is a tool call a message asks for.
type invocation struct {
	tool string
	args map[string]any
}

// refusal is why a message calls no tool: the task ends REJECTED with
// this text.
type refusal string

func (r refusal) Error() string { return string(r) }

// invocationOf reads the tool call a message asks for:
//
//   - a first part that is data {"tool": NAME, "arguments": {…}} calls
//     NAME; without "tool", and when the server has one tool, the data's
//     "arguments" (or the whole object, when it has no "arguments") go to
//     that tool;
//   - text "NAME {json}" calls NAME with that object; a bare "NAME" calls
//     it with no arguments; "NAME words" gives the words to the tool's
//     only string argument, when it has exactly one;
//   - any other text goes, as above, to the only tool there is.
//
// An unknown tool, or a message naming none when there are several, is a
// refusal naming the tools there are.
func (ts *toolSet) invocationOf(m *a2a.Message) (invocation, error) {
	parts := m.GetParts()
	if len(parts) == 0 {
		return invocation{}, ts.refuse("the message has no parts")
	}
	if d := parts[0].GetData(); d != nil {
		return ts.fromData(d.AsInterface())
	}
	text := strings.TrimSpace(a2a.JoinText(parts))
	if text == "" {
		return invocation{}, ts.refuse("the message has neither text nor a data part first")
	}
	name, rest := text, ""
	if i := strings.IndexFunc(text, unicode.IsSpace); i >= 0 {
		name, rest = text[:i], strings.TrimSpace(text[i:])
	}
	if _, ok := ts.byName[name]; ok {
		return ts.withText(name, rest)
	}
	if len(ts.names) == 1 {
		return ts.withText(ts.names[0], text)
	}
	return invocation{}, ts.refuse(fmt.Sprintf("no tool is named %q", name))
}

// fromData reads a data part.
func (ts *toolSet) fromData(v any) (invocation, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return invocation{}, ts.refuse(`the data part is not an object {"tool": NAME, "arguments": {…}}`)
	}
	name, named := obj["tool"].(string)
	args := obj
	if a, ok := obj["arguments"]; ok {
		if args, ok = a.(map[string]any); !ok && a != nil {
			return invocation{}, ts.refuse(`"arguments" is not an object`)
		}
	} else if named {
		args = nil // {"tool": NAME} alone: no arguments
	}
	if !named {
		if _, has := obj["tool"]; has {
			return invocation{}, ts.refuse(`"tool" is not a string`)
		}
		if len(ts.names) != 1 {
			return invocation{}, ts.refuse(`the data part names no "tool"`)
		}
		name = ts.names[0]
	}
	if _, ok := ts.byName[name]; !ok {
		return invocation{}, ts.refuse(fmt.Sprintf("no tool is named %q", name))
	}
	return invocation{tool: name, args: args}, nil
}

// withText reads the arguments of tool from text: a JSON object, nothing,
// or words for the tool's only string argument.
func (ts *toolSet) withText(tool, text string) (invocation, error) {
	if text == "" {
		return invocation{tool: tool}, nil
	}
	if strings.HasPrefix(text, "{") {
		var args map[string]any
		dec := json.NewDecoder(bytes.NewReader([]byte(text)))
		dec.UseNumber()
		if err := dec.Decode(&args); err != nil || dec.More() {
			return invocation{}, refusal(fmt.Sprintf("the arguments of %s are not one JSON object: %v", tool, jsonErr(err)))
		}
		return invocation{tool: tool, args: numbers(args).(map[string]any)}, nil
	}
	if p := onlyString(ts.byName[tool].InputSchema); p != "" {
		return invocation{tool: tool, args: map[string]any{p: text}}, nil
	}
	return invocation{}, refusal(fmt.Sprintf(`%s takes its arguments as a JSON object: write "%s {…}" or send a data part {"tool": %q, "arguments": {…}}`, tool, tool, tool))
}

// jsonErr is err, or "text follows it" for a decoder that stopped early.
func jsonErr(err error) error {
	if err == nil {
		return fmt.Errorf("text follows it")
	}
	return err
}

// numbers turns the json.Numbers of v into int64 where they are whole,
// float64 otherwise, so that a tool sees 3 as 3, not 3.0.
func numbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = numbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = numbers(e)
		}
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return n
		}
		f, _ := x.Float64()
		return f
	}
	return v
}

// onlyString is the name of the only property of an input schema, when
// there is exactly one and it is a string, "" otherwise.
func onlyString(schema any) string {
	s, _ := schema.(map[string]any)
	props, _ := s["properties"].(map[string]any)
	if len(props) != 1 {
		return ""
	}
	for name, p := range props {
		if pm, _ := p.(map[string]any); pm["type"] == "string" {
			return name
		}
	}
	return ""
}

// refuse is a refusal naming the tools there are.
func (ts *toolSet) refuse(why string) refusal {
	names := slices.Clone(ts.names)
	const show = 20
	more := ""
	if len(names) > show {
		more = fmt.Sprintf(" and %d more", len(names)-show)
		names = names[:show]
	}
	return refusal(fmt.Sprintf(`%s; the tools are %s%s: send "TOOL {json arguments}" or a data part {"tool": TOOL, "arguments": {…}}`,
		why, strings.Join(names, ", "), more))
}
