package mcpagent

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"parley.dev/parley/a2a"
)

// progressMessage is the status message of a WORKING update made from a
// progress notification: the text "progress P/T: MESSAGE" (without /T
// when the total is unknown, without the message when there is none) and
// a data part {"progress", "total", "message"} of the same.
func progressMessage(p *mcp.ProgressNotificationParams) *a2a.Message {
	text := "progress " + num(p.Progress)
	if p.Total > 0 {
		text += "/" + num(p.Total)
	}
	if p.Message != "" {
		text += ": " + p.Message
	}
	data := map[string]any{"progress": p.Progress}
	if p.Total > 0 {
		data["total"] = p.Total
	}
	if p.Message != "" {
		data["message"] = p.Message
	}
	return agentMessage(text, data)
}

// num writes a progress figure the shortest way.
func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// questionMessage is the status message of INPUT_REQUIRED made from an
// elicitation request: the request's message (after problem, the reason
// an answer was not taken, when there is one) and a data part
// {"elicitation": {"message", "requestedSchema"}}.
func questionMessage(q *mcp.ElicitParams, problem string) *a2a.Message {
	text := q.Message
	if problem != "" {
		text = problem + "\n\n" + text
	}
	el := map[string]any{"message": q.Message}
	if q.RequestedSchema != nil {
		el["requestedSchema"] = q.RequestedSchema
	}
	return agentMessage(text+"\n\n"+answerHint, map[string]any{"elicitation": el})
}

// answerHint is how a question is answered, written under it.
const answerHint = `(Answer with a JSON object of the fields asked for, as text or a data part; ` +
	`a single field may be answered with its value alone; "decline" or "cancel" refuses.)`

// agentMessage is an agent message with a text part and a data part.
func agentMessage(text string, data any) *a2a.Message {
	m := a2a.AgentMessage(text)
	if p, err := dataPart(data); err == nil {
		m.Parts = append(m.Parts, p)
	}
	return m
}

// answerOf reads a follow-up message as the answer to an elicitation:
//
//   - a data part (first) {"action": "decline"|"cancel"} refuses, any
//     other object is the content accepted;
//   - text "decline" or "cancel" refuses; a JSON object is the content;
//   - other text is the value of the schema's only field, read as its
//     type (string, number, integer or boolean); with no field asked for,
//     any text accepts.
//
// Content accepted must match the requested schema, as the SDK checks
// before it answers the server: an answer that does not is asked again.
func answerOf(q *mcp.ElicitParams, m *a2a.Message) (*mcp.ElicitResult, error) {
	r, err := readAnswer(q, m)
	if err != nil || r.Action != "accept" || r.Content == nil || q.RequestedSchema == nil {
		return r, err
	}
	if err := validate(q.RequestedSchema, r.Content); err != nil {
		return nil, fmt.Errorf("the answer does not match what is asked: %v", err)
	}
	return r, nil
}

// validate checks content against an elicitation's requested schema.
func validate(schema any, content map[string]any) error {
	b, err := json.Marshal(schema)
	if err != nil {
		return err
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		return err
	}
	return rs.Validate(content)
}

// readAnswer reads the answer of answerOf.
func readAnswer(q *mcp.ElicitParams, m *a2a.Message) (*mcp.ElicitResult, error) {
	parts := m.GetParts()
	if len(parts) > 0 && parts[0].GetData() != nil {
		obj, ok := parts[0].GetData().AsInterface().(map[string]any)
		if !ok {
			return nil, errors.New("the data part is not a JSON object")
		}
		if act, _ := obj["action"].(string); len(obj) == 1 && (act == "decline" || act == "cancel") {
			return &mcp.ElicitResult{Action: act}, nil
		}
		return &mcp.ElicitResult{Action: "accept", Content: obj}, nil
	}
	text := strings.TrimSpace(a2a.JoinText(parts))
	switch strings.ToLower(text) {
	case "decline", "cancel":
		return &mcp.ElicitResult{Action: strings.ToLower(text)}, nil
	}
	if strings.HasPrefix(text, "{") {
		var obj map[string]any
		if err := json.Unmarshal([]byte(text), &obj); err != nil {
			return nil, fmt.Errorf("the answer is not a JSON object: %v", err)
		}
		return &mcp.ElicitResult{Action: "accept", Content: obj}, nil
	}
	props := properties(q.RequestedSchema)
	switch len(props) {
	case 0:
		return &mcp.ElicitResult{Action: "accept"}, nil
	case 1:
		for name, typ := range props {
			v, err := valueOf(typ, text)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", name, err)
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{name: v}}, nil
		}
	}
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	slices.Sort(names)
	return nil, fmt.Errorf("the answer must be a JSON object with the fields %s", strings.Join(names, ", "))
}

// properties maps the fields of an elicitation schema to their types.
func properties(schema any) map[string]string {
	var s struct {
		Properties map[string]struct {
			Type string `json:"type"`
		} `json:"properties"`
	}
	if b, err := json.Marshal(schema); err == nil {
		_ = json.Unmarshal(b, &s)
	}
	out := make(map[string]string, len(s.Properties))
	for n, p := range s.Properties {
		out[n] = p.Type
	}
	return out
}

// valueOf reads text as a value of a schema type.
func valueOf(typ, text string) (any, error) {
	switch typ {
	case "number":
		return strconv.ParseFloat(text, 64)
	case "integer":
		return strconv.ParseInt(text, 10, 64)
	case "boolean":
		switch strings.ToLower(text) {
		case "true", "yes", "y":
			return true, nil
		case "false", "no", "n":
			return false, nil
		}
		return nil, fmt.Errorf("want yes or no, not %q", text)
	}
	return text, nil
}
