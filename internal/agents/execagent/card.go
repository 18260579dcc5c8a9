package execagent

import (
	"path/filepath"
	"strings"

	"parley.dev/parley/a2a"
)

// Card returns an agent card for an exec agent with options o, listing
// interfaces. It declares streaming; its input and output modes follow the
// format: text/plain for Text, any media type for JSONLines.
func Card(o Options, interfaces []*a2a.AgentInterface) *a2a.AgentCard {
	yes := true
	prog := filepath.Base(o.Command[0])
	modes := []string{"text/plain"}
	how := "the message's text on standard input; standard output streamed as the artifact \"output\"; exit status 0 completes the task"
	if o.Format == JSONLines {
		modes = []string{"*/*"}
		how = "the request as a JSON line on standard input; status changes and artifacts as JSON lines on standard output"
	}
	return &a2a.AgentCard{
		Name:                "Parley exec agent: " + prog,
		Description:         "Runs " + strings.Join(o.Command, " ") + " once per message: " + how + ".",
		SupportedInterfaces: interfaces,
		Version:             "1.0.0",
		Capabilities:        &a2a.AgentCapabilities{Streaming: &yes},
		DefaultInputModes:   modes,
		DefaultOutputModes:  modes,
		Provider:            &a2a.AgentProvider{Organization: "Parley", Url: "https://parley.dev"},
		Skills: []*a2a.AgentSkill{{Id: "exec", Name: prog, Tags: []string{"exec"},
			Description: "Runs " + prog + " for each message."}},
	}
}
