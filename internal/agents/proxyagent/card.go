package proxyagent

import (
	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
)

// Card returns Parley's card for the upstream agent whose card is up,
// listing interfaces: the upstream's name, description, version,
// provider, links, skills and input and output modes, with Parley's
// interfaces and capabilities (streaming, whatever the upstream does;
// push notifications and security are Parley's to declare). The
// upstream's extensions and security requirements are not carried over:
// Parley does not apply them.
func Card(up *a2a.AgentCard, interfaces []*a2a.AgentInterface) *a2a.AgentCard {
	yes := true
	card := &a2a.AgentCard{
		Name:                up.GetName(),
		Description:         up.GetDescription(),
		SupportedInterfaces: interfaces,
		Version:             up.GetVersion(),
		Capabilities:        &a2a.AgentCapabilities{Streaming: &yes},
		DefaultInputModes:   append([]string(nil), up.GetDefaultInputModes()...),
		DefaultOutputModes:  append([]string(nil), up.GetDefaultOutputModes()...),
	}
	if up.Provider != nil {
		card.Provider = proto.Clone(up.Provider).(*a2a.AgentProvider)
	}
	card.DocumentationUrl, card.IconUrl = up.DocumentationUrl, up.IconUrl
	for _, s := range up.GetSkills() {
		card.Skills = append(card.Skills, proto.Clone(s).(*a2a.AgentSkill))
	}
	if card.Name == "" {
		card.Name = "Parley proxy"
	}
	if card.Description == "" {
		card.Description = "An A2A agent served through a Parley proxy."
	}
	if len(card.Skills) == 0 { // a card needs one; some upstreams list none
		card.Skills = []*a2a.AgentSkill{{Id: "proxy", Name: card.GetName(), Description: "Whatever the upstream agent does.", Tags: []string{"proxy"}}}
	}
	if card.Version == "" {
		card.Version = "1.0.0"
	}
	if len(card.DefaultInputModes) == 0 {
		card.DefaultInputModes = []string{"text/plain"}
	}
	if len(card.DefaultOutputModes) == 0 {
		card.DefaultOutputModes = []string{"text/plain"}
	}
	return card
}
