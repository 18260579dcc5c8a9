package push

import (
	"net/http"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/v03"
	"parley.dev/parley/internal/version"
	"parley.dev/parley/taskstore"
)

// A configuration registered over A2A v0.3 is stored with that version
// (taskstore.PushConfig.Version, the version its call was served in, spec
// §3.6.2) and receives v0.3 payloads: the v0.3 Task object as JSON
// (v03.PushPayload) with Content-Type application/json, as v0.3 servers
// post. A configuration registered in a version that shows task
// generations (the A2A 1.1 preview, spec §3.2.7) receives each event with
// its generation, under A2A-Version of that version. The token and
// authentication headers are the same for every version.

// isV03 reports whether a configuration was registered over v0.3.
func isV03(cfg *taskstore.PushConfig) bool { return cfg.Version == v03.ProtocolVersion }

// encodeEvent encodes a notification's event in the version its
// configuration was registered with.
func encodeEvent(n *taskstore.Notification) ([]byte, error) {
	switch {
	case isV03(n.Config):
		return v03.PushPayload(n.Event)
	case version.ShowsGeneration(n.Config.Version):
		return a2a.Marshal(version.WithGeneration(n.Event, taskstore.Generation(n.Seq)))
	}
	return a2a.Marshal(n.Event)
}

// setVersionHeaders turns the v1.0 headers SetHeaders wrote into those of
// the version cfg was registered in.
func setVersionHeaders(h http.Header, cfg *taskstore.PushConfig) {
	switch {
	case isV03(cfg):
		h.Set("Content-Type", "application/json")
		h.Set("A2A-Version", v03.ProtocolVersion)
	case version.ShowsGeneration(cfg.Version):
		h.Set("A2A-Version", cfg.Version)
	}
}
