package proxyagent

import (
	"google.golang.org/protobuf/types/known/structpb"

	"parley.dev/parley/a2a"
)

// MetadataKey names the metadata member that Parley's copies of the
// upstream's status messages carry: the upstream's task and context ids,
// {"taskId": …, "contextId": …}. A follow-up that finds no pair in memory
// (Parley restarted, or another replica relayed the task) reads the pair
// back from the task's last status message carrying it, so the follow-up
// reaches the same upstream task.
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

// recall returns the upstream ids stamped on the task's status message or,
// failing that, on the latest agent message of its history that has them.
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

// stamped reads the upstream ids from a message's metadata.
func stamped(m *a2a.Message) (upTaskID, upContextID string) {
	v := m.GetMetadata().GetFields()[MetadataKey].GetStructValue().GetFields()
	return v["taskId"].GetStringValue(), v["contextId"].GetStringValue()
}
