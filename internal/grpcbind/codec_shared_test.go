package grpcbind

import (
	"bytes"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"parley.dev/parley/a2a"
)

// TestCodecShared: a stream event that several streams share is marshalled
// once per codec, into the same bytes as one marshalled for its stream
// alone, and each call gets bytes of its own (connect-go reuses them).
func TestCodecShared(t *testing.T) {
	resp := &a2a.StreamResponse{Payload: &a2a.StreamResponse_StatusUpdate{StatusUpdate: &a2a.TaskStatusUpdateEvent{
		TaskId: "t-1", ContextId: "c-1",
		Status: &a2a.TaskStatus{State: a2a.TaskState_TASK_STATE_WORKING, Message: a2a.AgentMessage("<working> é")}}}}
	cache := a2a.NewEventCache(resp)
	shared := &message{Message: resp, cache: cache}
	alone := &message{Message: resp}

	want, _ := proto.Marshal(resp)
	for range 2 {
		got, err := protoCodec{}.MarshalAppend([]byte("x"), shared)
		if err != nil || !bytes.Equal(got, append([]byte("x"), want...)) {
			t.Fatalf("MarshalAppend shared = %x, %v; want x%x", got, err, want)
		}
		got, _ = protoCodec{}.Marshal(shared)
		got2, _ := protoCodec{}.Marshal(alone)
		if !bytes.Equal(got, want) || !bytes.Equal(got2, want) {
			t.Fatal("Marshal: not the bytes of proto.Marshal")
		}
		got[0] ^= 0xff // the caller's own bytes: the cache's stay as they were
	}
	if _, err := cache.LoadBytes(resp, "proto", func() ([]byte, error) { t.Fatal("marshalled again"); return nil, nil }); err != nil {
		t.Fatal(err)
	}

	var back a2a.StreamResponse
	for range 2 {
		got, err := jsonCodec{}.Marshal(shared)
		if err != nil || protojson.Unmarshal(got, &back) != nil || !proto.Equal(&back, resp) {
			t.Fatalf("json Marshal shared = %s, %v", got, err)
		}
		got[0] = 'x'
	}
}
