// Package protocard lets the Go SDK's client read an agent card whose
// securityRequirements are in the shape of the A2A proto, as Parley (and
// any server that writes ProtoJSON) serves them. docs/interoperability.md
// shows ParseCard for users to copy into their own code; the tests check
// that the page and this file say the same.
package protocard

import (
	"encoding/json"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
)

// ParseCard is an agentcard.Parser for cards whose securityRequirements
// list scopes as the proto's StringList ({"schemes":{"bearer":{"list":
// ["scope"]}}}, or {} without scopes), which the SDK's own parser
// refuses: it rewrites them as the bare arrays that parser reads, then
// calls it. Use it as agentcard.Resolver{CardParser: ParseCard}.
func ParseCard(body []byte) (*a2a.AgentCard, error) {
	var card any
	if err := json.Unmarshal(body, &card); err != nil {
		return nil, err
	}
	flattenScopes(card)
	body, err := json.Marshal(card)
	if err != nil {
		return nil, err
	}
	return agentcard.DefaultCardParser(body)
}

// flattenScopes replaces, in every securityRequirements list within v
// (the card's and its skills'), each scheme's {"list": [...]} by the list.
func flattenScopes(v any) {
	switch v := v.(type) {
	case []any:
		for _, e := range v {
			flattenScopes(e)
		}
	case map[string]any:
		for key, e := range v {
			if reqs, ok := e.([]any); ok && key == "securityRequirements" {
				for _, r := range reqs {
					req, _ := r.(map[string]any)
					schemes, _ := req["schemes"].(map[string]any)
					for name, s := range schemes {
						if scopes, ok := s.(map[string]any); ok {
							list, _ := scopes["list"].([]any)
							schemes[name] = append([]any{}, list...)
						}
					}
				}
			}
			flattenScopes(e)
		}
	}
}
