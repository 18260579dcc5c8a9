package mcpagent

import (
	"fmt"

	"parley.dev/parley/a2a"
)

// Input and output modes of the card: text and JSON data in (a data part
// names the tool and its arguments), text, JSON data and files out.
var (
	inputModes  = []string{"text/plain", "application/json"}
	outputModes = []string{"text/plain", "application/json", "application/octet-stream"}
)

// Card returns the agent's card, listing interfaces (spec §4.4.1, its skills §4.4.5): the
// MCP server's name, title and version, its instructions as the
// description, and one skill per tool (id = the tool's name; name = its
// title; description = its description, then its input schema as JSON).
func (a *Agent) Card(interfaces []*a2a.AgentInterface) *a2a.AgentCard {
	yes := true
	card := &a2a.AgentCard{
		Name:                "MCP server",
		SupportedInterfaces: interfaces,
		Version:             "1.0.0",
		Capabilities:        &a2a.AgentCapabilities{Streaming: &yes},
		DefaultInputModes:   inputModes,
		DefaultOutputModes:  outputModes,
	}
	info := a.first.sess.InitializeResult()
	if si := info.ServerInfo; si != nil {
		card.Name = first(si.Title, si.Name, card.Name)
		card.Version = first(si.Version, card.Version)
		card.Description = si.Description
	}
	card.Description = first(info.Instructions, card.Description,
		fmt.Sprintf("The tools of the MCP server %s, served as an A2A agent by Parley.", card.Name))
	for _, name := range a.first.tools.names {
		card.Skills = append(card.Skills, skillOf(a.first.tools, name))
	}
	if len(card.Skills) == 0 { // a card needs one (§4.4.1)
		card.Skills = []*a2a.AgentSkill{{Id: "none", Name: card.Name, Description: "The MCP server lists no tools.", Tags: []string{"mcp"}}}
	}
	return card
}

// skillOf is the skill of one tool.
func skillOf(ts *toolSet, name string) *a2a.AgentSkill {
	t := ts.byName[name]
	title := t.Title
	if title == "" && t.Annotations != nil {
		title = t.Annotations.Title
	}
	desc := first(t.Description, "The MCP tool "+name+".")
	if b, err := jsonMarshal(t.InputSchema); err == nil && t.InputSchema != nil {
		desc += "\n\nArguments (JSON Schema): " + string(b)
	}
	return &a2a.AgentSkill{
		Id: name, Name: first(title, name), Description: desc, Tags: []string{"mcp", "tool"},
		Examples: []string{name + " {…}", fmt.Sprintf(`{"tool": %q, "arguments": {…}} (a data part)`, name)},
	}
}

// first is the first of vs that is not "".
func first(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}
