package push

import (
	"net/http"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/v03"
	"parley.dev/parley/taskstore"
)

// A configuration registered over A2A v0.3 is stored with that version
// (taskstore.PushConfig.Version, the version its call was served in, spec
// §3.6.2) and receives v0.3 payloads: the v0.3 Task object as JSON
// (v03.PushPayload) with Content-Type application/json, as v0.3 servers
// post. The token and authentication headers are the same for both
// versions.

// isV03 reports whether a configuration was registered over v0.3.
func isV03(cfg *taskstore.PushConfig) bool { return cfg.Version == v03.ProtocolVersion }

// encodeEvent encodes a notification's event in the version its
// configuration was registered with.
func encodeEvent(n *taskstore.Notification) ([]byte, error) {
	if isV03(n.Config) {
		return v03.PushPayload(n.Event)
	}
	return a2a.Marshal(n.Event)
}

// setV03Headers turns the v1.0 headers SetHeaders wrote into v0.3 ones.
func setV03Headers(h http.Header) {
	h.Set("Content-Type", "application/json")
	h.Set("A2A-Version", v03.ProtocolVersion)
}
