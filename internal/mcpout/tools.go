package mcpout

import (
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"parley.dev/parley/a2a"
)

// maxToolName is the longest tool name MCP clients accept (the MCP
// specification's tool naming guidance, 2025-11-25: 1 to 128 characters).
const maxToolName = 128

// toolName is the MCP tool name of an A2A skill id: the id with every
// character outside [A-Za-z0-9_-] replaced by "_", cut to maxToolName
// bytes; "skill" for an empty id.
func toolName(id string) string {
	var b strings.Builder
	for _, r := range id {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	name := b.String()
	if name == "" {
		name = "skill"
	}
	if len(name) > maxToolName {
		name = name[:maxToolName]
	}
	return name
}

// toolNames names the card's skills, in the card's order. Two skills whose
// ids sanitize to one name are told apart by a suffix: the first keeps the
// name, the next gets "_2", then "_3", and so on (cut so that the suffixed
// name still fits maxToolName), so that every skill is a tool and the names
// do not depend on anything but the card.
func toolNames(skills []*a2a.AgentSkill) []string {
	taken := map[string]bool{}
	names := make([]string, len(skills))
	for i, s := range skills {
		base := toolName(s.GetId())
		name := base
		for n := 2; taken[name]; n++ {
			suffix := fmt.Sprintf("_%d", n)
			name = base[:min(len(base), maxToolName-len(suffix))] + suffix
		}
		taken[name] = true
		names[i] = name
	}
	return names
}

// skillsOf is the card's skills, or, for a card without any, one skill
// standing for the whole agent: its name as the id, its description.
func skillsOf(card *a2a.AgentCard) []*a2a.AgentSkill {
	if len(card.GetSkills()) > 0 {
		return card.GetSkills()
	}
	id := card.GetName()
	if id == "" {
		id = "agent"
	}
	return []*a2a.AgentSkill{{Id: id, Name: card.GetName(), Description: card.GetDescription()}}
}

// toolFor is the MCP tool of one skill: its title the skill's name, its
// description the skill's description followed by its examples, and the
// input and output schemas every tool of the bridge shares.
func toolFor(name string, s *a2a.AgentSkill) *mcp.Tool {
	var d strings.Builder
	d.WriteString(s.GetDescription())
	if ex := s.GetExamples(); len(ex) > 0 {
		if d.Len() > 0 {
			d.WriteString("\n\n")
		}
		d.WriteString("Examples:")
		for _, e := range ex {
			d.WriteString("\n- " + e)
		}
	}
	if d.Len() == 0 {
		d.WriteString("The A2A agent's skill " + s.GetId() + ".")
	}
	return &mcp.Tool{
		Name:         name,
		Title:        s.GetName(),
		Description:  d.String(),
		InputSchema:  inputSchema,
		OutputSchema: outputSchema,
	}
}

// inputSchema is every tool's input: the message to send, and the task and
// context it continues.
var inputSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"message": map[string]any{"type": "string", "description": "The message to send to the agent."},
		"taskId": map[string]any{"type": "string", "description": "Continue this task (one waiting for input: " +
			"the taskId a call returned with state TASK_STATE_INPUT_REQUIRED)."},
		"contextId": map[string]any{"type": "string", "description": "Start or continue a task in this context (a conversation)."},
	},
	"required": []any{"message"},
}

// outputSchema is every tool's structuredContent: the A2A task the call
// ran (none for a direct reply) and its state.
var outputSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"taskId":    map[string]any{"type": "string", "description": "The A2A task (absent when the agent replied with a message and made no task)."},
		"contextId": map[string]any{"type": "string", "description": "The A2A context."},
		"state":     map[string]any{"type": "string", "description": "The A2A TaskState name, such as TASK_STATE_COMPLETED or TASK_STATE_INPUT_REQUIRED."},
	},
	"required": []any{"state"},
}
