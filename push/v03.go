package push

import (
	"net/http"

	"parley.dev/parley/a2a"
	"parley.dev/parley/internal/v03"
	"parley.dev/parley/taskstore"
)

// A configuration registered over A2A v0.3 carries a mark in its URL's
// fragment (v03.MarkURL; the fragment is never sent) and receives v0.3
// payloads: the v0.3 Task object as JSON (v03.PushPayload) with
// Content-Type application/json, as v0.3 servers post. The token and
// authentication headers are the same for both versions.

// encodeEvent encodes a notification's event in the version its
// configuration was registered with.
func encodeEvent(n *taskstore.Notification) ([]byte, error) {
	if v03.IsMarked(n.Config.GetUrl()) {
		return v03.PushPayload(n.Event)
	}
	return a2a.Marshal(n.Event)
}

// setV03Headers turns the v1.0 headers SetHeaders wrote into v0.3 ones.
func setV03Headers(h http.Header) {
	h.Set("Content-Type", "application/json")
	h.Set("A2A-Version", v03.ProtocolVersion)
}
