package a2a

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

func TestRoundTrip(t *testing.T) {
	msgs := []proto.Message{
		sampleTask(),
		sampleSendRequest(),
		minimalCard(),
		fullCard(),
		&ListTasksResponse{},
		&ListTasksResponse{Tasks: []*Task{sampleTask()}, NextPageToken: "x", PageSize: 1, TotalSize: 2},
		&ListTasksRequest{ContextId: "c", Status: TaskState_TASK_STATE_REJECTED, PageSize: proto.Int32(100), HistoryLength: proto.Int32(0), StatusTimestampAfter: timestamppb.New(time.Date(2025, 4, 17, 17, 47, 9, 680_000_000, time.UTC)), IncludeArtifacts: proto.Bool(false)},
		&StreamResponse{Payload: &StreamResponse_StatusUpdate{StatusUpdate: &TaskStatusUpdateEvent{TaskId: "t", ContextId: "c", Status: &TaskStatus{State: TaskState_TASK_STATE_CANCELED}, Metadata: &structpb.Struct{}}}},
		&StreamResponse{Payload: &StreamResponse_ArtifactUpdate{ArtifactUpdate: &TaskArtifactUpdateEvent{TaskId: "t", ContextId: "c", Artifact: &Artifact{ArtifactId: "a", Parts: []*Part{{Content: &Part_Raw{Raw: []byte("\x00\x01binary")}}}}, Append: true}}},
		&SendMessageResponse{Payload: &SendMessageResponse_Task{Task: sampleTask()}},
		&OAuthFlows{Flow: &OAuthFlows_Implicit{Implicit: &ImplicitOAuthFlow{AuthorizationUrl: "https://a", Scopes: map[string]string{}}}},
		&SecurityScheme{Scheme: &SecurityScheme_MtlsSecurityScheme{MtlsSecurityScheme: &MutualTlsSecurityScheme{}}},
		&ListTaskPushNotificationConfigsResponse{Configs: []*TaskPushNotificationConfig{{Id: "p", TaskId: "t", Url: "https://w"}}, NextPageToken: "n"},
		&emptypb.Empty{},
	}
	for _, m := range msgs {
		t.Run(string(m.ProtoReflect().Descriptor().Name()), func(t *testing.T) {
			b, err := Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			back := m.ProtoReflect().New().Interface()
			if err := Unmarshal(b, back); err != nil {
				t.Fatalf("Unmarshal(%s): %v", b, err)
			}
			want := proto.Clone(m)
			truncateTimestamps(want.ProtoReflect())
			if !proto.Equal(want, back) {
				t.Fatalf("round trip mismatch\n json: %s\n got: %v\nwant: %v", b, back, want)
			}
			// Our output must also be readable by stock protojson.
			stock := m.ProtoReflect().New().Interface()
			if err := protojson.Unmarshal(b, stock); err != nil {
				t.Fatalf("protojson cannot read %s: %v", b, err)
			}
			if !proto.Equal(want, stock) {
				t.Fatalf("protojson reads a different message")
			}
		})
	}
}

// TestMatchesProtojson compares our output with protojson's (with
// EmitUnpopulated for the REQUIRED cases excluded) as JSON values, ignoring
// the timestamp precision and number formatting differences.
func TestMatchesProtojson(t *testing.T) {
	msgs := []proto.Message{sampleTask(), sampleSendRequest(), fullCard()}
	for _, m := range msgs {
		ours, err := Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		theirs, err := protojson.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		var a, b any
		if err := json.Unmarshal(ours, &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(theirs, &b); err != nil {
			t.Fatal(err)
		}
		normalizeTimes(a)
		normalizeTimes(b)
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if !bytes.Equal(ja, jb) {
			t.Errorf("%s differs from protojson\n ours: %s\nstock: %s", m.ProtoReflect().Descriptor().Name(), ja, jb)
		}
	}
}

// normalizeTimes cuts RFC 3339 strings to millisecond precision.
func normalizeTimes(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok {
				if tm, err := time.Parse(time.RFC3339Nano, s); err == nil {
					x[k] = tm.UTC().Format("2006-01-02T15:04:05.000Z")
				}
				continue
			}
			normalizeTimes(e)
		}
	case []any:
		for _, e := range x {
			normalizeTimes(e)
		}
	}
}

// truncateTimestamps cuts every Timestamp in m to millisecond precision, the
// precision Marshal writes.
func truncateTimestamps(m protoreflect.Message) {
	if m.Descriptor().FullName() == "google.protobuf.Timestamp" {
		nf := m.Descriptor().Fields().ByNumber(2)
		n := m.Get(nf).Int()
		if n%1_000_000 != 0 {
			m.Set(nf, protoreflect.ValueOfInt32(int32(n-n%1_000_000)))
		}
		return
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList() && fd.Message() != nil:
			l := v.List()
			for i := range l.Len() {
				truncateTimestamps(l.Get(i).Message())
			}
		case fd.IsMap() && fd.MapValue().Message() != nil:
			v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
				truncateTimestamps(mv.Message())
				return true
			})
		case !fd.IsList() && !fd.IsMap() && fd.Message() != nil:
			truncateTimestamps(v.Message())
		}
		return true
	})
}
