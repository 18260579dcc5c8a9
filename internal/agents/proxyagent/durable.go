package proxyagent

import (
	"google.golang.org/protobuf/types/known/structpb"

	"parley.dev/parley/a2a"
)

// MetadataKey names the metadata member that Parley's copies of the
// upstream's status messages carry: the upstream's task and context ids,
// {"taskId": …, "contextId": …}. A follow-up that finds no pair in memory
// (Parley restarted, or another replica relayed the task) reads the pair
// back from the task's latest agent message carrying it, so the follow-up
// reaches the same upstream task.
//
// Only agent messages are read, and only of the task the core hands the
// agent, which is in the caller's own scope (decision B12: tasks belong to
// the principal that created them). A client cannot write an agent message
// (a client's message has role ROLE_USER, spec §2.2, and the core refuses
// any other), and the agent writes the member itself on every upstream
// message it keeps, removing any the upstream sent; so a stamp a client
// puts in its own message's metadata is never believed, nor sent upstream.
const MetadataKey = "parley.dev/upstream"

// stamp records the upstream's ids in the metadata of m, Parley's copy of
// an upstream status message.
func stamp(m *a2a.Message, upTaskID, upContextID string) {
	if upTaskID == "" {
		return
	}
	if m.Metadata == nil {
		m.Metadata = &structpb.Struct{Fields: map[string]*structpb.Value{}}
	}
	m.Metadata.Fields[MetadataKey] = structpb.NewStructValue(&structpb.Struct{Fields: map[string]*structpb.Value{
		"taskId": structpb.NewStringValue(upTaskID), "contextId": structpb.NewStringValue(upContextID),
	}})
}

// unstamp removes MetadataKey from the metadata of m, a message the agent
// did not stamp itself (the upstream's, or the client's copy sent
// upstream).
func unstamp(m *a2a.Message) {
	if f := m.GetMetadata().GetFields(); f != nil {
		delete(f, MetadataKey)
	}
}

// recall returns the upstream ids stamped on the task's status message or,
// failing that, on the latest agent message of its history that has them.
// User messages are never read (see MetadataKey).
func recall(t *a2a.Task) (upTaskID, upContextID string) {
	if id, ctx := stamped(t.GetStatus().GetMessage()); id != "" {
		return id, ctx
	}
	h := t.GetHistory()
	for i := len(h) - 1; i >= 0; i-- {
		if id, ctx := stamped(h[i]); id != "" {
			return id, ctx
		}
	}
	return "", ""
}

// stamped reads the upstream ids from the metadata of an agent message;
// any other message has none.
func stamped(m *a2a.Message) (upTaskID, upContextID string) {
	if m.GetRole() != a2a.Role_ROLE_AGENT {
		return "", ""
	}
	v := m.GetMetadata().GetFields()[MetadataKey].GetStructValue().GetFields()
	return v["taskId"].GetStringValue(), v["contextId"].GetStringValue()
}
